// The local executor of `tiresias serve` (an Executor, core/executor.h): runs each job attempt as
// real processes on this machine, signals them, reaps them, and re-adopts them after a daemon
// restart.
//
// Every attempt runs under a supervisor shim (`tiresias _shim`), the leader of a new session
// and process group, so signals to the daemon or its death do not reach jobs. The shim runs
// the command, waits for it and records how it ended in `<job_dir>/attempt-<N>.exit`; that
// file is how a restarted daemon learns the fate of a job that ended while it was down.
//
// Containment. Where this process can create cgroups (exec/cgroup.h), every attempt runs in a
// cgroup of its own, joined before the shim is executed, so every process the job starts is in
// it, also those that leave the process group (setsid, daemons). The cgroup is the attempt:
//   - it ends when its cgroup is empty, not when the shim exits;
//   - when the command has ended (the shim recorded it), whatever it left behind is killed
//     through the cgroup, and the exit is reported once the last process is gone, so its GPUs
//     are never handed on while an escapee still runs;
//   - SIGKILL kills the cgroup at once; other signals go to every member;
//   - after a daemon restart an attempt with live members is adopted even if its shim is gone.
// Without cgroups (none mounted or writable, or disabled) attempts are contained by their
// process group only: a process that calls setsid escapes, and after a restart a job whose shim
// is gone cannot be found (README: "Containment").
//
// Nothing is signalled that cannot be proven to belong to the attempt: a member of its cgroup,
// or the process group of a shim that is alive with the recorded start time (or is still our
// unreaped child). A /proc entry that cannot be read is no evidence that a process is gone.
// An attempt that ends without an exit record (its shim was killed) is reported as
// "unknown (no exit record)", or SIGKILL when this executor sent one.
//
// Thread-compatible: one thread at a time per LocalExecutor. It waits only for the pids it
// tracks (never waitpid(-1)); the daemon must not set SIGCHLD to SIG_IGN.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "core/executor.h"
#include "exec/cgroup.h"

namespace tiresias {

// How serve runs the supervisor shim: `tiresias-shim` beside the running binary when it is
// there (they are built and installed together), else that binary's own `_shim` subcommand
// (the same code, but each start loads all of the CLI's libraries).
std::vector<std::string> DefaultShimArgv();

class LocalExecutor : public Executor {
 public:
  // How to run the supervisor shim, e.g. {"/proc/self/exe", "_shim"}; the shim's own
  // arguments (see RunShim) are appended. `devices[i]` is what CUDA_VISIBLE_DEVICES calls
  // GPU i of this machine (node 0 of the topology). `cgroups`: the hierarchy to contain
  // attempts in, or why there is none (then process groups only).
  LocalExecutor(std::vector<std::string> shim_argv, std::vector<std::string> devices,
                StatusOr<CgroupTree> cgroups = FailedPrecondition("cgroups not requested"));

  // Fails (and starts nothing that keeps running) on a bad spec, a GPU this machine does not
  // have, an unwritable job_dir, a cwd that cannot be entered or a shim that cannot be
  // executed. Without a master_port, a run gets a free loopback port: MASTER_PORT when it is
  // distributed (several GPUs, or one process per GPU), PET_MASTER_PORT (torchrun's) unless it
  // is one process per GPU.
  StatusOr<Launched> Launch(const LaunchSpec& spec) override;
  // Sends `sig` to every process of the attempt (its cgroup, else its process group); NotFound
  // if none is left or none can be proven to be the attempt's.
  Status Signal(const ProcessRef& p, int sig) override;
  // After a daemon restart: true if any process of the attempt is alive (a member of its
  // cgroup, or the shim with the recorded start time). It is then tracked like a launched one.
  bool Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) override;
  // For an attempt that ended while the daemon was down: the exit recorded in its exit file,
  // if any (none: the shim was killed, or never ran).
  std::optional<ExitInfo> ReadExit(JobId job, int attempt, const std::string& job_dir) override;
  // The process the shim of `attempt` recorded as it started, or else (the daemon and the shim
  // both died before writing it) a live member of the attempt's cgroup.
  std::optional<ProcessRef> FindLaunched(JobId job, int attempt,
                                         const std::string& job_dir) override;
  // Non-blocking: every tracked attempt that ended since the last call (none of its processes
  // left).
  std::vector<ExitInfo> Poll() override;
  // "cgroup v2 at ..." or "process groups only: <why>".
  std::string Containment() const override;

  // How a job's own log (`<job_dir>/output.log`, when --output/--error do not replace it) is
  // kept: rotated to output.log.1 past `max_size` bytes, and the output dropped while its file
  // system has less than `keep_free` bytes free (exec/log_pump.h). 0 and 0: the job writes the
  // log itself, unbounded. For attempts launched from now on.
  void SetLogLimits(int64_t max_size, int64_t keep_free) {
    max_log_size_ = max_size;
    log_keep_free_ = keep_free;
  }

  size_t tracked() const { return tracked_.size(); }
  // The cgroup of an attempt (under cgroups()->root()); "" without cgroups.
  std::string CgroupName(JobId job, int attempt, const std::string& job_dir) const;
  const std::optional<CgroupTree>& cgroups() const { return cgroups_; }

 private:
  struct Tracked {
    JobId job;
    int attempt = 0;
    ProcessRef ref;  // the shim
    std::string job_dir;
    bool adopted = false;            // the shim is not our child
    std::string cgroup;              // "": contained by the shim's process group only
    bool shim_gone = false;          // reaped (ours), or seen gone or a zombie (adopted)
    std::optional<int> wait_status;  // the shim's, when we reaped it
    bool leftovers_killed = false;   // the command ended; what it left was killed
    bool sigkilled = false;          // this executor sent SIGKILL
  };
  // One round of Poll for `t`; true when it has ended.
  bool Done(Tracked& t);
  bool DoneInCgroup(Tracked& t);
  bool DoneInGroup(Tracked& t);
  // Whether the attempt's command has ended: its exit file, or a shim that exited normally.
  bool CommandEnded(const Tracked& t) const;
  // How `t` ended: its exit file, else the shim's exit status, else SIGKILL if we sent one,
  // else unknown.
  ExitInfo Ended(const Tracked& t) const;
  // The tracked attempt whose shim is `p`, if any.
  Tracked* Find(const ProcessRef& p);

  std::vector<std::string> shim_argv_;
  std::vector<std::string> devices_;
  std::optional<CgroupTree> cgroups_;
  std::string no_cgroups_;  // why there are none
  int64_t max_log_size_ = 0, log_keep_free_ = 0;
  std::map<std::pair<JobId, int>, Tracked> tracked_;  // by (job, attempt)
};

// The supervisor shim, run as `tiresias _shim --exit-file FILE -- COMMAND [ARGS...]` with
// stdout/stderr already on the job's log. Ignores SIGTERM/SIGINT/SIGHUP/SIGUSR1/SIGUSR2 (the
// daemon signals the whole group, so the command gets them), runs COMMAND (looked up in PATH)
// with default signal handling, waits, writes FILE atomically and exits with the command's
// code, or 128 + signal. Exits 127 with a line in the log if COMMAND cannot be executed, and
// 2 on malformed arguments. `args` are those after "_shim".
// With `--tasks N` it runs N copies of COMMAND, task i with RANK=i, LOCAL_RANK=i and the i-th
// entry of its CUDA_VISIBLE_DEVICES (which must have N), waits for all of them and records the
// worst status: a signal over an exit code, then the highest. A task that fails does not stop
// the others (srun's default; a DDP rank notices its peer is gone in its next collective).
// With `--env-fd FD` the command's environment is read from FD ("K=V\0" each) and set only in
// the command's process, after it became the job's user (serve starts the shim with a fixed
// environment of its own); without it, the command gets the shim's.
// With `--log FILE [--log-limit BYTES] [--log-keep-free BYTES]` (FILE being the log on its
// stdout) the command's stdout and stderr are a pipe that the shim copies to FILE through a
// LogPump (exec/log_pump.h): rotated past the limit, dropped while the disk is nearly full.
int RunShim(const std::vector<std::string>& args);

}  // namespace tiresias
