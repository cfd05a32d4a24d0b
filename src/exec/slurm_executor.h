// The Slurm executor of `tiresias serve --executor slurm` (an Executor, core/executor.h):
// tiresias keeps the decisions (order, placement, preemption), Slurm the mechanics (launching
// on nodes, GPU binding, process tracking, accounting). It drives Slurm through its client
// tools, run as subprocesses with deadlines (exec/subprocess.h): sbatch, scontrol, scancel,
// squeue --json and sinfo --json (from Slurm 23.02, whose sinfo --json groups nodes, scontrol
// show nodes --json; `sinfo --version` says which).
//
// One held Slurm batch job per tiresias job, for its whole life (until a run of it is lost
// to a node failure or requeued by Slurm itself: then a fresh one, see Job::replace):
//   Prepare  `sbatch --hold --requeue` (a user hold) of a generated batch script, tagged with
//            the comment "tiresias:<tag>:<job id>" so a restarted serve finds it again;
//   Launch   writes the attempt's variables (DIR/slurm-attempt.env, with the Slurm restart
//            count its run will have: an end with a lower one is an earlier attempt's), then
//            `scontrol update JobId= NumNodes= NumTasks= NumCPUs= TresPerNode=gres:gpu:K
//            ReqNodeList=<the core's nodes> StartTime=now` and `scontrol release` (batched);
//            the script starts one task per node with srun, each with RANK, LOCAL_RANK,
//            WORLD_SIZE (tasks), MASTER_ADDR (the first node's address), MASTER_PORT,
//            TIRESIAS_JOB_ID, TIRESIAS_ATTEMPT, TIRESIAS_CHECKPOINT_DIR, TIRESIAS_DONE_FILE,
//            TIRESIAS_GPUS;
//   Signal   `scancel --signal=SIG` reaches the job's tasks (not the batch shell); SIGKILL (the
//            end of the grace period) is `scancel --signal=KILL --full` then `scontrol
//            requeuehold`, and the next attempt runs in a fresh Slurm job (Job::replace);
//   Retire   `scancel` of the held job once the tiresias job has ended.
// GPUs: the core's GpuId{node, index} is node i of the partition (Slurm's order) and a count
// there; Slurm binds the devices. A job whose nodes get unequal counts asks every node for
// the largest (Slurm's --gres is per node); the surplus is reported as held outside.
//
// What it reports: an attempt ended once Slurm no longer runs it (not while COMPLETING: its
// GPUs are still held), with the exit status Slurm recorded; a run lost to a node failure or
// requeued by Slurm itself as `lost` (requeue, not the job's end; the Slurm job is put on hold
// again so Slurm never restarts it on its own, then replaced by a fresh one, Job::replace);
// a job cancelled with scancel as `cancelled`,
// with Slurm's reason. PollNodes: the partition's nodes (sinfo), usable or not, and the GPUs
// jobs outside tiresias hold on each (squeue), so the core never double-books them.
//
// Contact: a poller thread runs squeue (every poll_interval) and sinfo (node_poll_interval);
// a worker thread runs the queued commands, batching releases, signals and requeues. A
// command that finds no slurmctld (timeout, connection refused) is retried with exponential
// backoff, in order, and nothing is lost; ContactLost says since when. An sbatch whose answer
// was lost is not repeated before a snapshot shows whether it made the job; stray pending jobs
// with a job's tag are cancelled (Sweep). A squeue slower than its deadline is given more time.
// Poll and PollNodes read the latest snapshots and never block; Launch blocks only when a job's
// held batch job has not been submitted yet (then it submits it; Unavailable while slurmctld cannot
// be reached).
//
// Thread-compatible like every Executor (one caller at a time); its own threads share its
// state under a mutex. Needs the job directories on a filesystem the nodes share (the batch
// script, the attempt file, the log and the checkpoint directory live there).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/executor.h"
#include "exec/slurm_state.h"
#include "exec/subprocess.h"

namespace tiresias {

struct SlurmOptions {
  std::string partition = "gpu";
  // Names this daemon's jobs (comment "tiresias:<tag>:<job id>"): one per state directory.
  std::string tag;
  // The client tools' environment (KEY=VALUE; e.g. SLURM_CONF); empty: the daemon's.
  std::vector<std::string> env;
  // More sbatch arguments for every job (--account, --qos, --mem, ...).
  std::vector<std::string> sbatch_args;
  int cpus_per_task = 1;
  std::chrono::milliseconds poll_interval{250};        // squeue
  std::chrono::milliseconds node_poll_interval{1000};  // sinfo
  std::chrono::milliseconds command_timeout{10000};
  std::chrono::milliseconds max_backoff{5000};
};

class SlurmExecutor : public Executor {
 public:
  // Reads the partition's nodes (sinfo --json) and this daemon's jobs (squeue --json), then
  // starts the poller and worker threads. Unavailable when slurmctld does not answer;
  // FailedPrecondition when the partition has no node with GPUs or Slurm is older than 21.08.
  static StatusOr<std::unique_ptr<SlurmExecutor>> Open(SlurmOptions opts);
  ~SlurmExecutor() override;  // stops its threads; Slurm jobs keep running
  SlurmExecutor(const SlurmExecutor&) = delete;
  SlurmExecutor& operator=(const SlurmExecutor&) = delete;

  // The partition's nodes as Open found them, in Slurm's order: the core's node i.
  const std::vector<SlurmNode>& nodes() const { return nodes_; }
  // `scontrol show config`, read for settings that will hurt (SlurmConfigWarnings).
  StatusOr<std::vector<std::string>> CheckConfig();

  StatusOr<Launched> Launch(const LaunchSpec& spec) override;
  bool SignalsAtOnce() const override { return false; }  // scancel is queued for the worker
  Status Signal(const ProcessRef& p, int sig) override;
  bool Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) override;
  std::optional<ExitInfo> ReadExit(JobId job, int attempt, const std::string& job_dir) override;
  std::optional<ProcessRef> FindLaunched(JobId job, int attempt,
                                         const std::string& job_dir) override;
  std::vector<ExitInfo> Poll() override;
  std::string Containment() const override;
  void Prepare(const LaunchSpec& spec) override;
  void Retire(JobId job) override;
  void Starting(const std::vector<JobId>& jobs, const std::vector<JobId>& waiting) override;
  std::optional<std::vector<NodeReport>> PollNodes() override;
  std::string EngineState(JobId job) const override;
  std::string NotStarted(JobId job) const override;
  std::string EngineJob(JobId job) const override;
  std::optional<std::map<JobId, std::string>> EngineHolds() const override;
  std::optional<std::pair<int64_t, std::string>> ContactLost() const override;

  // For tests and benchmarks: waits until the queued commands have run (or `timeout`).
  bool Drain(std::chrono::milliseconds timeout);
  // The Slurm job id of a tiresias job (0: none yet).
  int64_t SlurmId(JobId job) const;
  // For tests: how many jobs it remembers (retired ones until nothing can concern them), and
  // how many Slurm jobs it cancelled (until Slurm forgets them).
  std::pair<size_t, size_t> Remembered() const;

 private:
  enum class Phase {
    kNone,       // no attempt: held (or not yet submitted)
    kLaunching,  // pin + release queued
    kReleased,   // released; Slurm runs it (or will)
    kEnded,      // ended; reported by Poll (then kNone)
  };
  // How long after a submit limit (SlurmSubmitLimit) sbatch is tried again, in seconds.
  static constexpr int kSubmitRetryS = 30;
  // The most time squeue --json is given beyond command_timeout (a cluster with very many
  // jobs), and what the first one (Open) gets.
  static constexpr std::chrono::milliseconds kMaxSqueueExtra{std::chrono::minutes(2)};
  static constexpr std::chrono::milliseconds kOpenSqueueExtra{std::chrono::seconds(50)};
  // A squeue that takes longer than this sets the pace of polls (PollerLoop).
  static constexpr std::chrono::milliseconds kSlowSqueue{std::chrono::seconds(3)};
  // How long a usable node that turns UNKNOWN (slurmctld restarted) stays usable.
  static constexpr std::chrono::milliseconds kUnknownGrace{std::chrono::minutes(2)};
  struct Job {
    JobId id;
    int64_t slurm_id = 0;
    std::string job_dir;
    LaunchSpec spec;  // as prepared (command, environment, account)
    bool submit_queued = false;
    bool took_place = false;     // took a held job's place since it last got a Slurm job
    std::string submit_error;    // a permanent sbatch failure ("" none)
    std::string submit_limited;  // sbatch refused for a submit limit: tried again later
    std::chrono::steady_clock::time_point submit_retry_at{};
    // An sbatch whose answer was lost (timeout, connection cut) may have made the job: a
    // snapshot started after this sequence number says, before sbatch runs again.
    uint64_t submit_uncertain_seq = 0;
    bool retired = false;
    uint64_t retired_seq = 0;  // op_seq_ when it was retired
    bool cancel_reported = false;
    // The Slurm job's last run was requeued by Slurm (a node failed under it, an admin) or
    // lost: the next attempt runs in a fresh Slurm job, submitted at once; this one is
    // cancelled once that exists (Submitted). Slurm 22.05 delivers the failed node's stale
    // terminate for the old run to the same job id when the node returns: it killed the next
    // run there (SIGTERM, or SIGKILL at the next registration, "on wrong node"). Also after
    // tiresias's own kill (a node failure in the grace looks the same). If no fresh one can
    // be submitted (any sbatch failure: a submit limit the old one fills), the old one is
    // used again.
    bool replace = false;
    int64_t replaced_id = 0;  // the last one replaced: a launch waits while it still runs
    // The current attempt.
    int attempt = -1;
    Phase phase = Phase::kNone;
    std::vector<std::pair<int, int>> placement;  // (core node, GPUs there)
    int master_port = 0;                         // MASTER_PORT on the first node
    uint64_t released_seq = 0;                   // snapshots started after this see the release
    // Slurm's restart count once this run is released (TIRESIAS_SLURM_RESTARTS, recomputed
    // at the release from a snapshot that shows the job stopped): a higher one is a requeue.
    int restart_base = 0;
    std::string attempt_vars;  // slurm-attempt.env as written, rewritten if the count moves
    bool seen_active = false;
    // An admin held its Slurm job while it ran (`scontrol hold` of a running job: RUNNING,
    // JobHeldAdmin): the requeue-hold that stops it is a user's hold, so serve puts the
    // admin's back (scontrol hold); until Slurm shows it, the job counts as admin-held
    // (EngineHolds, launches).
    bool admin_hold_on_run = false;
    bool stop_requested = false, kill_requested = false;
    // How its batch script ended by itself, as Slurm recorded it while the job was COMPLETING
    // (a slow epilog) before any kill of ours: the run's end, even if our kill comes then and
    // its requeue-hold leaves Slurm no record of that run (it read "killed by signal 9").
    std::optional<ExitInfo> ended_itself;
    std::optional<ExitInfo> ended;  // for Poll
    // Holds, requeue-holds and kills queued or running; the last one was done after this
    // snapshot. Until a snapshot shows its effect, what Slurm says of the job is not news.
    int holds_queued = 0;
    uint64_t hold_done_seq = 0;
    uint64_t known_seq = 0;  // slurm_id was learned after this snapshot
  };
  enum class OpKind {
    kSubmit,
    kLaunch,
    kSignal,
    kKill,
    kHold,
    kRequeueHold,
    kCancelStray,
    kCancelAny,  // CancelSlurmJob (retired, replaced, a lost journal's run), in any state
    kGivePlace   // a held job gives its place (GivePlace): untagged, then cancelled
  };
  struct Op {
    OpKind kind;
    JobId job;
    int attempt = 0;
    int sig = 0;
    int tries = 0;
    // Which Slurm job: kCancelStray, kCancelAny; holds and kills (EnqueueHold), the one
    // they were decided for; 0: the job's at the time the op runs.
    int64_t slurm_id = 0;
  };

  explicit SlurmExecutor(SlurmOptions opts) : opts_(std::move(opts)) {}
  // A Slurm client command over `items` jobs, given `extra` time beyond the usual deadline;
  // Unavailable when slurmctld cannot be reached. Every command is abandoned when the
  // executor stops (after Drain's 2 s): a slow squeue held serve's shutdown for minutes, and
  // a worker's batch against a hung slurmctld for tens of seconds. A write cut off is an
  // answer lost, as at its deadline: a restart finds what it did (its attempt file, Sweep).
  StatusOr<CommandResult> Slurm(const std::vector<std::string>& argv, size_t items = 1,
                                std::chrono::milliseconds extra = {}) const;
  // A failed command is retried (not the request's fault) when its words say slurmctld did
  // not answer, or when `scontrol ping` finds no controller up.
  bool Retryable(const CommandResult& r) const;
  // After requeue-holds: a run an admin held while it ran (Job::admin_hold_on_run) got a
  // user's hold; the admin's is put back (scontrol hold, as root), a plain admin hold again.
  void RestoreAdminHolds(const std::vector<Op>& requeue_holds);
  // Right before a release (an admin's hold placed since the snapshot would be undone by it):
  // moves the launches of the Slurm jobs in `*release` (ids, `*ops` theirs in the same order)
  // that an admin holds now (squeue asked now) to `*held`. When squeue cannot say, moves them
  // all to `*again` (a pin again is harmless) and returns squeue's fault.
  Status SetAsideAdminHeld(std::vector<int64_t>* release, std::vector<Op>* ops,
                           std::vector<Op>* held, std::vector<Op>* again) const;
  // A squeue/sinfo whose JSON could not be read (`s`): Unavailable when slurmctld is down.
  Status JsonFault(const Status& s) const;
  // squeue --json: on a big cluster it may need `extra` time (the poller learns how much).
  StatusOr<std::vector<SlurmJob>> Squeue(std::chrono::milliseconds extra = {}) const;
  StatusOr<std::vector<SlurmNode>> Sinfo() const;
  void PollerLoop();
  void WorkerLoop();
  // Runs one batch of ops; the ops that must be retried are returned.
  std::vector<Op> RunBatch(std::vector<Op> ops);
  Status SubmitNow(JobId id);  // sbatch; mu_ not held
  // mu_ held: `j`'s last sbatch lost its answer and no snapshot since says whether it made the
  // job (its submission waits for one; a retired job's does not).
  bool AwaitsSubmitAnswer(const Job& j) const;
  // mu_ held: `sid` (learned after snapshot `seq`) is `j`'s Slurm job now; the one it
  // replaces (Job::replace) is cancelled.
  void Submitted(Job& j, int64_t sid, uint64_t seq);
  // mu_ held: Slurm job `sid` (of `job`) is cancelled, in any state, until it is gone.
  void CancelSlurmJob(JobId job, int64_t sid);
  // mu_ held: `j`'s run was lost; its next attempt gets a fresh Slurm job (Job::replace).
  void Replace(Job& j);
  // mu_ held, before a stop or kill of `j`'s run: its attempt file says so (TIRESIAS_STOPPED=1,
  // TIRESIAS_KILLED=1). A later serve reads the run's CANCELLED as the kill, not as someone's
  // scancel; and a batch script that starts only after the signal was sent (Slurm drops a
  // signal that comes before the batch step runs: the stop was lost and the job ran its grace
  // out) exits at once.
  void NoteStop(Job& j, bool kill);
  // mu_ held. Under a submit limit (sbatch refused `x`'s held job), the job `x` may take the
  // place of: another job of the same user whose Slurm job only waits, held, and that the
  // core has not started (Starting); of those the one the core would start last (Starting's
  // order; one it does not keep waiting, e.g. a job on hold, before any), then one that ran
  // before, then the newest. nullptr if none.
  Job* PlaceFor(const Job& x);
  // mu_ held: `v` gives its held Slurm job's place: a kGivePlace op untags it (so that no
  // later serve reads its cancel as someone's), then cancels it; if Slurm refuses the untag,
  // `v` keeps it. `v` submits again when it is launched.
  void GivePlace(Job& v);
  std::set<JobId> starting_;          // Starting's
  std::vector<JobId> waiting_order_;  // Starting's, best first
  // mu_ held: the count `j`'s release gives is `base`, not Launch's guess: kept, and written
  // to its attempt file (a restart's ReadExit and Adopt read it).
  void NoteRestartBase(Job& j, int base);
  void Enqueue(Op op);  // mu_ held
  // A hold, requeue-hold or kill of `j`, counted until it is done; mu_ held.
  void EnqueueHold(Job& j, Op op);
  // Slurm runs `s` (or will: pending, not held) where no attempt of tiresias placed it: it is
  // killed and requeued held (or held), as a run Slurm started by itself; mu_ held.
  void StopUnplaced(Job& j, const SlurmJob& s);
  // The job's entry, created if new (recovery asks about jobs before it adopts them).
  Job& Track(JobId id, const std::string& job_dir);
  Job* Find(JobId id);                           // mu_ held
  const SlurmJob* Seen(int64_t slurm_id) const;  // mu_ held; in the latest snapshot
  const SlurmJob* Ours(const Job& j) const;      // mu_ held; Seen, if IsOurs
  // Whether `s`, the Slurm job recorded for job `id`, is still that job: it carries the tag,
  // or runs the job's batch script (its owner may change the comment; an id Slurm gave out
  // again after a clean restart runs another script).
  bool IsOurs(JobId id, const std::string& job_dir, const SlurmJob& s) const;
  std::string Tag(JobId id) const;
  // The comment of a held Slurm job that gave its place (GivePlace), before the job's id: no
  // tag parse accepts it.
  std::string GavePlacePrefix() const;
  void NoteContact(const Status& s);  // mu_ held
  // Pending Slurm jobs with a job's tag that are not its Slurm job (an sbatch whose answer
  // was lost made one; the job was retired meanwhile) are cancelled, once; cancelled ones
  // (CancelSlurmJob) that a snapshot shows back are cancelled again; mu_ held.
  void Sweep();
  // How an attempt ended, from Slurm's record of the job.
  ExitInfo ExitOf(const Job& j, const SlurmJob* s) const;
  // The restart count Slurm's job `s` (null: not seen yet, a fresh one) has once released:
  // one more than now if its previous run ended in a final state (the launch requeues it
  // first; a requeue already under way, COMPLETING, has counted).
  static int RestartsOnRelease(const SlurmJob* s) {
    return s ? s->restarts + (SlurmEnded(s->state) ? 1 : 0) : 0;
  }

  SlurmOptions opts_;
  std::vector<SlurmNode> nodes_;
  std::map<std::string, int> node_index_;
  std::vector<std::string> nodes_command_ = {"sinfo", "--json"};  // NodesCommand

  mutable std::mutex mu_;
  std::condition_variable cv_;  // work queued, snapshot taken, stop
  std::map<JobId, Job> jobs_;
  std::deque<Op> ops_;
  int running_ops_ = 0;
  bool stop_ = false;
  std::atomic<bool> stopping_{false};  // the destructor runs: reads in flight are abandoned
  // The time beyond the usual deadline that squeue needs now (the poller learns it; the
  // check before a release is given it too), in milliseconds.
  std::atomic<int64_t> squeue_extra_ms_{0};
  // The fault of the last check before a release that failed ("" once one worked): said once
  // in serve's log, not at every retry (the worker's alone).
  mutable std::string release_check_fault_;
  bool poke_poller_ = false;
  // The latest snapshots: squeue (by Slurm id) and sinfo; their sequence numbers are taken
  // when the command started.
  std::map<int64_t, SlurmJob> seen_;
  uint64_t seen_seq_ = 0;
  std::vector<SlurmNode> node_state_;
  uint64_t op_seq_ = 0;  // advances when a command starts or an op completes
  uint64_t reported_nodes_seq_ = 0;
  // Nodes UNKNOWN after a slurmctld restart stay usable a while (PollNodes).
  UnknownNodeGrace unknown_grace_{kUnknownGrace};
  uint64_t swept_seq_ = 0;
  // Slurm jobs cancelled (Sweep's, retired and replaced ones), each with op_seq_ when it was
  // cancelled. Sweep forgets one that a later snapshot no longer shows (Slurm forgot it) and
  // no op names: nothing can then act on it, and the set stays as small as Slurm's memory.
  std::map<int64_t, uint64_t> strays_;
  std::set<int64_t> batch_ids_;  // the Slurm jobs the running batch's ops name
  std::set<JobId> batch_jobs_;   // and the jobs
  void ForgetStrays();
  // Forgets the retired jobs that nothing can concern any more: no op names them, no sbatch
  // of theirs is queued or unanswered, a snapshot since their retirement, and Slurm forgot
  // their cancelled jobs (a tagged job of a job the executor does not know that a snapshot
  // shows pending is Sweep's to cancel). jobs_ (and Poll's, Signal's work) stays the size of
  // what is live, not of every job serve ran.
  void ForgetRetired();
  // Slurm jobs being ended (a retired job's, a replaced one, a run the journal lost): the op
  // sequence after which a snapshot shows the last scancel's effect (0: one queued), and how
  // many were sent. A scancel that finds the job completing may do nothing, and a kill's
  // requeue under way then leaves it pending and held: it is cancelled again (Sweep), up to
  // kMaxCancels times, until Slurm forgets it.
  struct Cancelling {
    uint64_t done = 0;
    int sent = 1;
  };
  static constexpr int kMaxCancels = 20;
  std::map<int64_t, Cancelling> cancelling_;
  std::optional<std::pair<int64_t, std::string>> contact_lost_;
  std::thread poller_, worker_;
};

}  // namespace tiresias
