// Runs a short-lived helper command (the Slurm client tools: sbatch, scontrol, squeue, sinfo,
// scancel) as a subprocess with a deadline, collecting its output. Thread-safe: the Slurm
// executor's threads run commands concurrently. The child gets no stdin (/dev/null), none of
// the daemon's other file descriptors, an empty signal mask and default signal handling.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct CommandResult {
  int exit_code = -1;  // the exit status when it exited normally
  int signal = 0;      // the signal that killed it, else 0
  std::string out, err;
  bool ok() const { return exit_code == 0 && signal == 0; }
  // "exit 1: <first line of stderr>" for messages.
  std::string Summary() const;
};

// Runs argv (argv[0] is looked up in PATH unless it contains '/'). `env`: the child's whole
// environment as KEY=VALUE entries; null = the daemon's. A command that cannot be started is
// IoError; one still running at `timeout` is killed (SIGKILL) and Unavailable. One still
// running when `*abandon` becomes true (looked at every 100 ms) is killed and Unavailable: a
// read its caller no longer needs (a daemon that stops).
StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout,
                                   const std::vector<std::string>* env = nullptr,
                                   const std::atomic<bool>* abandon = nullptr);

}  // namespace tiresias
