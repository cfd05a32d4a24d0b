// The local executor of `tiresias serve`: runs each job attempt as a real process group on
// this machine, signals it, reaps it, and re-adopts it after a daemon restart.
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

namespace tiresias {

struct LaunchSpec {
  JobId job;
  int attempt = 0;                // 0 for the first run, +1 per resume
  std::vector<std::string> argv;  // command; argv[0] looked up in the job's PATH
  std::string cwd;                // working directory ("" = inherit)
  // Extra environment, set last (after the daemon's environment and the variables below).
  std::vector<std::pair<std::string, std::string>> env;
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES, e.g. "0,2" (always set, even if "")
  int world_size = 1;           // GPUs; for > 1: WORLD_SIZE, MASTER_ADDR=127.0.0.1, MASTER_PORT
  int master_port = 0;          // used when world_size > 1
  // Per-job directory, created if missing: `output.log` (stdout + stderr, appended across
  // attempts, a header line per attempt), `checkpoint/` (TIRESIAS_CHECKPOINT_DIR) and the
  // exit file of each attempt.
  std::string job_dir;
};

// pid == pgid of the shim. start_ticks (/proc/<pid>/stat field 22) guards against pid reuse.
struct ProcessRef {
  int pid = 0;
  int64_t start_ticks = 0;
};

struct ExitInfo {
  JobId job;
  int attempt = 0;
  int exit_code = -1;            // the job's exit status when it exited normally, else -1
  int signal = 0;                // the signal that killed it (0 if it exited normally)
  std::string Describe() const;  // "exit 0", "exit 3", "killed by signal 9 (SIGKILL)"
};

class LocalExecutor {
 public:
  // How to run the supervisor shim, e.g. {"/proc/self/exe", "_shim"}. The shim's own
  // arguments (see RunShim) are appended.
  explicit LocalExecutor(std::vector<std::string> shim_argv);

  // Starts one attempt. Fails (and starts nothing that keeps running) on a bad spec, an
  // unwritable job_dir, a cwd that cannot be entered or a shim that cannot be executed.
  // A command that cannot be executed is not a Launch failure: the job exits 127 and its
  // log says why.
  StatusOr<ProcessRef> Launch(const LaunchSpec& spec);

  // Sends `sig` to the whole process group; NotFound if it is gone.
  Status Signal(const ProcessRef& p, int sig);

  // After a daemon restart: true if the process is still alive (pid exists and start_ticks
  // match). It is then tracked and its exit reported by Poll() from the exit file.
  bool Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir);

  // For a process that vanished while the daemon was down: the exit recorded in its exit
  // file, if any (none: it was killed by SIGKILL, or never ran).
  static std::optional<ExitInfo> ReadExitFile(JobId job, int attempt, const std::string& job_dir);

  // The process the shim of `attempt` recorded as it started, if it got that far.
  static std::optional<ProcessRef> ReadPidFileOf(int attempt, const std::string& job_dir);

  // Non-blocking: every tracked process that ended since the last call.
  std::vector<ExitInfo> Poll();

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
  static ExitInfo Ended(const Tracked& t, std::optional<int> wait_status);

  std::vector<std::string> shim_argv_;
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
