// The executor interface: what a live driver needs from whatever runs job processes, on this
// machine (exec/local_executor.h) or through a cluster engine (exec/slurm_executor.h). Launch
// an attempt on the GPUs the core chose, signal it, adopt it after a daemon restart, and report
// exits; a cluster engine also reports its nodes (capacity) and ends that happened outside the
// daemon. Tests use a scripted fake on a virtual clock.
//
// GPUs are named by GpuId (node, index) throughout; the executor alone maps them to what the
// job sees (CUDA_VISIBLE_DEVICES on the local machine; a node name and a GPU count on it under
// Slurm, which binds the devices). Implementations are thread-compatible: one caller at a time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "core/allocation.h"

namespace tiresias {

struct LaunchSpec {
  JobId job;
  std::string name;               // the job's name, for people (Slurm's job name)
  int attempt = 0;                // 0 for the first run, +1 per resume
  std::vector<std::string> argv;  // command; argv[0] looked up in the job's PATH
  std::string cwd;                // working directory ("" = inherit)
  // Extra environment, set last (after the daemon's environment and the per-run variables).
  std::vector<std::pair<std::string, std::string>> env;
  // The GPUs the core gave this attempt. More than one: a distributed run (WORLD_SIZE,
  // MASTER_ADDR, MASTER_PORT are set; the executor chooses the port unless master_port > 0).
  std::vector<GpuId> gpus;
  int master_port = 0;
  // Per-job directory, created if missing: `output.log` (stdout + stderr, appended across
  // attempts, a header line per attempt), `checkpoint/` (TIRESIAS_CHECKPOINT_DIR, shared by
  // all attempts; the done file TIRESIAS_DONE_FILE lives there, removed before each launch)
  // and the exit file of each attempt.
  std::string job_dir;
  // The account the command runs as (the submitter's). An executor running as root switches
  // to it; otherwise the command runs as the executor does.
  std::optional<uint32_t> uid, gid;
  // Files the command's stdout / stderr go to (absolute; "" = the job's log), opened as the
  // command's own account.
  std::string stdout_path, stderr_path;
  // 0: one process for all of `gpus`; 1: one process per GPU (srun's --ntasks-per-gpu=1), each
  // with RANK = LOCAL_RANK = its index in `gpus`, its own CUDA_VISIBLE_DEVICES, and WORLD_SIZE,
  // MASTER_ADDR, MASTER_PORT also for a single GPU. Signals reach every process; the attempt
  // ends when all have exited, with the worst status (a signal over an exit code, then the
  // highest).
  int tasks_per_gpu = 0;
};

// One process (group) of a job. start_ticks (/proc/<pid>/stat field 22 on Linux) guards
// against pid reuse.
struct ProcessRef {
  int pid = 0;
  int64_t start_ticks = 0;
};

// What a launch started, and what the job was told.
struct Launched {
  ProcessRef ref;
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES ("" when the engine binds them later)
  int master_port = 0;          // 0 for a single-GPU run
  // Cluster engines: the engine's id of the job ("" locally; the Slurm job id), kept for the
  // views, and the nodes the attempt runs on (names).
  std::string engine_job;
  std::vector<std::string> nodes;
};

struct ExitInfo {
  JobId job;
  int attempt = 0;
  int exit_code = -1;  // the job's exit status when it exited normally, else -1
  int signal = 0;      // the signal that killed it (0 if it exited normally)
  // When it ended (wall ms), when known from a record (an exit read after a daemon restart).
  std::optional<int64_t> ended_wall_ms;
  // Ends that came from outside the daemon (cluster engines):
  //   cancelled: someone cancelled the job in the engine (scancel): the job is cancelled;
  //   lost: the run was lost to the infrastructure (its node failed, the engine requeued it):
  //         not the job's end, it is requeued and resumes from its checkpoint.
  //   timed_out: the engine ended the run at a time limit of its own (Slurm's TIMEOUT: a
  //         --time of the submission, or one set on the job since): the job times out, as
  //         at tiresias's own limit.
  bool cancelled = false;
  bool lost = false;
  bool timed_out = false;
  std::string reason;  // the engine's words ("Slurm: NODE_FAIL on node3"), "" when none
  // The attempt left its done file (TIRESIAS_DONE_FILE): the job says its work is complete.
  // With exit 0 it ends the job as finished, also after a preemption signal (it is not run
  // again).
  bool completed = false;
  // Neither (exit_code -1, signal 0): nothing recorded how it ended.
  bool known() const { return exit_code >= 0 || signal > 0; }
  // "exit 0", "exit 3", "killed by signal 9 (SIGKILL)", "unknown (no exit record)"; with the
  // reason appended when there is one.
  std::string Describe() const;
};

// A node as a cluster engine sees it now, for capacity and the views.
struct NodeReport {
  std::string name;
  std::string state;   // the engine's words: "idle", "mixed", "allocated", "down", "drained"...
  bool usable = true;  // jobs may run there now (not down, drained or unreachable)
  int gpus = 0;        // GPUs configured on the node
  // GPUs held by jobs this daemon did not submit (never double-booked), plus what the engine
  // holds for this daemon's jobs beyond the core's allocation.
  int gpus_outside = 0;
  std::string reason;                     // why it is down or drained, if it is
  std::vector<std::string> outside_jobs;  // "slurm 17 (alice, 2 GPUs)"
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Starts one attempt; fails (and leaves nothing running) on a bad spec or a launch that
  // cannot happen. A command that cannot be executed is not a launch failure: the job exits
  // 127 and its log says why.
  virtual StatusOr<Launched> Launch(const LaunchSpec& spec) = 0;
  // Signals every process of the attempt; NotFound when none is left. Never signals a process
  // it cannot prove belongs to the attempt.
  virtual Status Signal(const ProcessRef& p, int sig) = 0;
  // Whether Signal has reached the processes when it returns Ok (a local kill). An engine
  // that queues it (Slurm: scancel by a worker) may lose it with the daemon: a restart sends
  // a stop in progress again (its deadline stays the first).
  virtual bool SignalsAtOnce() const { return true; }
  // True when any process of the attempt survived a daemon restart; it is then tracked like a
  // launched one.
  virtual bool Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) = 0;
  // The exit recorded for an attempt that ended while the daemon was down.
  virtual std::optional<ExitInfo> ReadExit(JobId job, int attempt, const std::string& job_dir) = 0;
  // An attempt that was launched but maybe never recorded (the daemon died in between).
  virtual std::optional<ProcessRef> FindLaunched(JobId job, int attempt,
                                                 const std::string& job_dir) = 0;
  // Exits since the last call; never blocks. An attempt is reported once none of its processes
  // is left: what its command left behind is the executor's to stop first.
  virtual std::vector<ExitInfo> Poll() = 0;
  // How the executor contains a job's processes, for people ("cgroup v2 at ...").
  virtual std::string Containment() const { return "not reported by this executor"; }

  // Cluster engines. A job was accepted: get ready to launch it (Slurm: a held batch job).
  // Never blocks; `spec` has no GPUs yet.
  virtual void Prepare(const LaunchSpec& /*spec*/) {}
  // A job reached an end (finished, failed, cancelled): drop what the engine keeps for it
  // (Slurm: cancel its held batch job). Never blocks.
  virtual void Retire(JobId /*job*/) {}
  // The jobs the core started that wait to be launched (held back behind stopping processes,
  // or launched now), every round, and (when there are any) the jobs the core keeps waiting,
  // in the order it would start them, best first: the engine keeps what the starting jobs
  // need (Slurm: their places under a submit limit, taken from the job the core would start
  // last). Never blocks.
  virtual void Starting(const std::vector<JobId>& /*jobs*/, const std::vector<JobId>& /*waiting*/) {
  }
  // The nodes as of the engine's latest look, when it has looked again since the last call;
  // nullopt otherwise (and always for the local executor, whose capacity never changes).
  virtual std::optional<std::vector<NodeReport>> PollNodes() { return std::nullopt; }
  // The engine's job that stands for it now (Slurm: the held batch job, from its submission
  // on), "" when none.
  virtual std::string EngineJob(JobId /*job*/) const { return ""; }
  // The engine's view of a job for people ("Slurm 17 RUNNING on node[3-4]"), "" when none.
  virtual std::string EngineState(JobId /*job*/) const { return ""; }
  // Why a launched run has not started in the engine yet (Slurm keeps its released job
  // PENDING: a reservation, a partition down, a limit), "" when it has (or cannot tell).
  virtual std::string NotStarted(JobId /*job*/) const { return ""; }
  // The jobs an admin holds in the engine itself (Slurm: `scontrol hold`), each with what to
  // tell people (how to release it there); nullopt when the engine cannot say now. The daemon
  // holds them too, and releases them once the engine's hold is gone; the engine never
  // releases them itself (a launch of one waits, NotStarted). Never blocks.
  virtual std::optional<std::map<JobId, std::string>> EngineHolds() const { return std::nullopt; }
  // When the engine cannot be reached: since when (wall ms) and why; nullopt while it can.
  virtual std::optional<std::pair<int64_t, std::string>> ContactLost() const {
    return std::nullopt;
  }
};

}  // namespace tiresias
