// What the Slurm client tools say, parsed: `squeue --json` jobs and the nodes of `sinfo --json`
// (22.05) or `scontrol show nodes --json` (23.02 and later; only the fields the Slurm executor
// reads), hostlist expressions ("node[1-3,07]") and GRES strings ("gpu:4",
// "gpu:a100:2(IDX:0-1)"). The JSON of 22.05 (OpenAPI v0.0.38) and of the data_parser of 23.02
// and later (v0.0.39 to v0.0.43: states as arrays of base state and flags, numbers as
// {"set", "infinite", "number"}, exit codes as objects) are both read. Pure functions,
// unit-tested on output captured from a real 22.05 cluster and on documents in the later
// shapes.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct SlurmJob {
  int64_t id = 0;
  std::string name, comment, user, partition;
  // The batch script's path as sbatch was given it ("" when Slurm does not say): a job's
  // owner can change its comment (scontrol update), never this.
  std::string command;
  std::string state;   // PENDING, RUNNING, COMPLETING, COMPLETED, FAILED, CANCELLED, NODE_FAIL...
  std::string reason;  // state_reason: JobHeldUser, Resources, NonZeroExitCode, ...
  std::vector<std::string> nodes;  // the allocation, expanded ("" while pending)
  std::string nodelist;            // as Slurm wrote it
  bool nodes_unreadable = false;   // a node list ExpandHostlist cannot read: `nodes` empty
  std::vector<int> node_gpus;      // GPUs held on each of `nodes` (from gres_detail)
  // What the job asks for (tiresias' pin of its last launch): the nodes (required_nodes,
  // expanded; known: the field was there and readable) and the GPUs on each (tres_per_node;
  // 0: none or unreadable).
  std::vector<std::string> required_nodes;
  bool required_nodes_known = false;
  int gpus_per_node = 0;
  int restarts = 0;      // restart_cnt: +1 per requeue
  int wait_status = 0;   // exit_code: a wait(2) status
  int64_t end_time = 0;  // seconds since the epoch, 0 when none
  bool held = false;     // priority 0 (a user or admin hold)
};

struct SlurmNode {
  std::string name, address, state;  // state: idle, mixed, allocated, down, drained, ...
  std::vector<std::string> flags;    // state_flags: DRAIN, NOT_RESPONDING, ...
  std::vector<std::string> partitions;
  int gpus = 0;       // configured (gres)
  int gpus_used = 0;  // allocated now (gres_used)
  std::string reason;
  // Jobs can be placed there: not down, drained, draining, failing or unreachable.
  bool Usable() const;
};

StatusOr<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);
// The nodes of `sinfo --json` (22.05) or `scontrol show nodes --json` (23.02 and later).
StatusOr<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text);

// "slurm 23.11.4" (what the tools' --version print) -> {23, 11}; nullopt when it names none.
std::optional<std::pair<int, int>> ParseSlurmVersion(std::string_view text);
// The command that lists the nodes, one JSON entry each, in this Slurm version: `sinfo --json`
// up to 22.05; from 23.02 sinfo's JSON groups nodes by partition and state, and `scontrol
// show nodes --json` (new then) has one entry per node.
std::vector<std::string> NodesCommand(std::pair<int, int> version);
// Why this serve cannot drive Slurm `version` ("" when it can): squeue --json and sinfo
// --json first came in 21.08.
std::string SlurmVersionProblem(std::pair<int, int> version);

// "node[1-3,5],gpu07" -> node1 node2 node3 node5 gpu07; zero padding is kept ("n[08-10]").
// Several bracket groups in one name are expanded left to right. InvalidArgument on a
// malformed expression.
StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view list);
// The number of GPUs in a GRES string: "gpu:4" 4, "gpu:a100:2(IDX:0-1)" 2,
// "gpu:2,mps:100" 2, "(null)" or "" 0.
int GpusInGres(std::string_view gres);

// Slurm job states: still holding its nodes (RUNNING, COMPLETING, CONFIGURING, SUSPENDED,
// ...), ended (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...), or neither (PENDING).
bool SlurmActive(std::string_view state);
bool SlurmEnded(std::string_view state);
// Pending under an admin's hold (`scontrol hold` by root or an operator: JobHeldAdmin). Never
// tiresias's own: its holds are JobHeldUser (sbatch --hold, uhold) or "job requeued in held
// state" (requeuehold); Slurm's own after max_batch_requeue is JobHoldMaxRequeue.
bool HeldByAdmin(const SlurmJob& s);
// A node's state is UNKNOWN (slurmctld has not heard from its slurmd since it started).
bool IsUnknownState(std::string_view state);

// Just after slurmctld restarts, its nodes are UNKNOWN until their slurmd registers again
// (seconds); unusable, they evicted every job on the cluster. A node usable before stays usable
// for `grace` meanwhile, unless its flags say otherwise (drained, reserved, ...); a node that
// died is marked DOWN by Slurm (SlurmdTimeout), or ends the grace. Pure: the caller gives the
// time.
class UnknownNodeGrace {
 public:
  using Clock = std::chrono::steady_clock;
  explicit UnknownNodeGrace(std::chrono::milliseconds grace) : grace_(grace) {}
  // Whether node `n`, usable or not by itself (`usable`), counts as usable at `now`.
  bool Usable(const SlurmNode& n, bool usable, Clock::time_point now);
  // The node is gone (not in sinfo): back UNKNOWN later, it gets no grace.
  void Forget(const std::string& name);
  // Taken as usable before (serve starts: slurmctld may have restarted with it, its jobs
  // running there).
  void Trust(const std::string& name) { usable_.insert(name); }
  std::chrono::milliseconds grace() const { return grace_; }

 private:
  std::chrono::milliseconds grace_;
  std::set<std::string> usable_;                      // as last answered
  std::map<std::string, Clock::time_point> unknown_;  // since when UNKNOWN
};
// How job `s`'s run ended as Slurm recorded it: its exit code, or the signal that killed it;
// exit code -1 and no signal when none is recorded. Slurm sets a job's end state when it
// decides it (CANCELLED as soon as a cancel or scancel --signal=KILL is asked, TIMEOUT when
// the limit hits) and records how its batch script ended only when slurmd reports it, seconds
// later on a loaded node, or never (the script never ran): 0:0 is an exit 0 only for a
// COMPLETED job.
struct SlurmRunEnd {
  int exit_code = -1;
  int signal = 0;
};
SlurmRunEnd RecordedEnd(const SlurmJob& s);

// Whether a client tool's failure (its stderr/stdout) says slurmctld could not answer now
// rather than refused the request: not reachable, shutting down or restarting ("Unexpected
// message received" while it stops), in standby, or busy ("try again"). Such a command is
// retried with backoff; any other failure is the request's own.
bool SlurmTransientFailure(std::string_view output);
// The reason slurmctld names when an accounting policy refuses a job, on the line just
// before "Job violates accounting/QOS policy (job submit limit, user's size and/or time
// limits)": "sbatch: error: QOSMaxSubmitJobPerUserLimit", "...: AssocMaxWallDurationPerJobLimit"
// (a job_reason code: Assoc*, QOS*); "" when none is named.
std::string SlurmPolicyReason(std::string_view output);
// Whether sbatch's refusal is a limit on how many jobs may be queued now (a QOS's or an
// association's MaxSubmitJobs, the cluster's MaxJobCount): the same request succeeds once
// jobs have left, so it is tried again later rather than failing the job. Where a reason is
// named, only a *SubmitJob* one is: a job over a limit on its own size or time (QOSMaxGRESPerJob,
// AssocMaxWallDurationPerJobLimit, ...) is refused by the same error and never gets in.
bool SlurmSubmitLimit(std::string_view output);
// Of those, a limit on the jobs a user, account or QOS has queued (MaxSubmitJobs), which a
// cancel of one of them frees at once (not the cluster's MaxJobCount: a cancelled job counts
// there until MinJobAge has passed).
bool SlurmPlaceLimit(std::string_view output);
// Whether `scontrol ping` says a controller answers. A failure whose words are not known to be
// transient is taken for the request's own only while one does (the executor asks after such
// a failure: a controller going down answers in many ways, e.g. "Connection reset by peer").
bool SlurmPingSaysUp(std::string_view output);

// `scontrol show config` as key -> value.
std::map<std::string, std::string> ParseSlurmConfig(std::string_view text);
// What in a site's configuration fights an external scheduler, one sentence each (README
// "Many machines: Slurm" has the checklist).
std::vector<std::string> SlurmConfigWarnings(const std::map<std::string, std::string>& config);

}  // namespace tiresias
