// The local executor of `tiresias serve` (an Executor, core/executor.h): runs each job attempt as a
// real process group on this machine, signals it, reaps it, and re-adopts it after a daemon
// restart.
//
// Every attempt runs under a supervisor shim (`tiresias _shim`), the leader of a new session
// and process group, so signals to the daemon or its death do not reach jobs. The shim runs
// the command, waits for it and records how it ended in `<job_dir>/attempt-<N>.exit`; that
// file is how a restarted daemon learns the fate of a job that ended while it was down.
// A group killed by SIGKILL leaves no exit file and is reported as killed by SIGKILL.
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

namespace tiresias {

class LocalExecutor : public Executor {
 public:
  // How to run the supervisor shim, e.g. {"/proc/self/exe", "_shim"}; the shim's own
  // arguments (see RunShim) are appended. `devices[i]` is what CUDA_VISIBLE_DEVICES calls
  // GPU i of this machine (node 0 of the topology).
  LocalExecutor(std::vector<std::string> shim_argv, std::vector<std::string> devices);

  // Fails (and starts nothing that keeps running) on a bad spec, a GPU this machine does not
  // have, an unwritable job_dir, a cwd that cannot be entered or a shim that cannot be
  // executed. A distributed run without a master_port gets a free loopback port.
  StatusOr<Launched> Launch(const LaunchSpec& spec) override;
  // Sends `sig` to the whole process group; NotFound if it is gone.
  Status Signal(const ProcessRef& p, int sig) override;
  // After a daemon restart: true if the process is still alive (pid exists and start_ticks
  // match). It is then tracked and its exit reported by Poll() from the exit file.
  bool Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) override;
  // For a process that vanished while the daemon was down: the exit recorded in its exit
  // file, if any (none: it was killed by SIGKILL, or never ran).
  std::optional<ExitInfo> ReadExit(JobId job, int attempt, const std::string& job_dir) override;
  // The process the shim of `attempt` recorded as it started, if it got that far.
  std::optional<ProcessRef> FindLaunched(JobId job, int attempt,
                                         const std::string& job_dir) override;
  // Non-blocking: every tracked process that ended since the last call.
  std::vector<ExitInfo> Poll() override;

  size_t tracked() const { return tracked_.size(); }

 private:
  struct Tracked {
    JobId job;
    int attempt = 0;
    ProcessRef ref;
    std::string job_dir;
    bool adopted = false;
  };
  // How `t` ended: its exit file, else its wait status if we have one, else SIGKILL.
  ExitInfo Ended(const Tracked& t, std::optional<int> wait_status);

  std::vector<std::string> shim_argv_;
  std::vector<std::string> devices_;
  std::map<int, Tracked> tracked_;  // by pid
};

// The supervisor shim, run as `tiresias _shim --exit-file FILE -- COMMAND [ARGS...]` with
// stdout/stderr already on the job's log. Ignores SIGTERM/SIGINT/SIGHUP/SIGUSR1/SIGUSR2 (the
// daemon signals the whole group, so the command gets them), runs COMMAND (looked up in PATH)
// with default signal handling, waits, writes FILE atomically and exits with the command's
// code, or 128 + signal. Exits 127 with a line in the log if COMMAND cannot be executed, and
// 2 on malformed arguments. `args` are those after "_shim".
int RunShim(const std::vector<std::string>& args);

}  // namespace tiresias
