// What the daemon needs from whatever runs job processes: launch, signal, adopt after a
// restart, and report exits. LocalExecutor implements it for this machine; tests use a
// scripted fake on a virtual clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "live/executor.h"

namespace tiresias {

class JobRunner {
 public:
  virtual ~JobRunner() = default;
  virtual StatusOr<ProcessRef> Launch(const LaunchSpec& spec) = 0;
  // Signals the job's whole process group; NotFound when it is gone.
  virtual Status Signal(const ProcessRef& p, int sig) = 0;
  // True when the process survived a daemon restart; it is then tracked like a launched one.
  virtual bool Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) = 0;
  // The exit recorded for an attempt that ended while the daemon was down.
  virtual std::optional<ExitInfo> ReadExit(JobId job, int attempt, const std::string& job_dir) = 0;
  // An attempt that was launched but maybe never recorded (the daemon died in between).
  virtual std::optional<ProcessRef> FindLaunched(JobId job, int attempt,
                                                 const std::string& job_dir) = 0;
  // Exits since the last call; never blocks.
  virtual std::vector<ExitInfo> Poll() = 0;
};

}  // namespace tiresias
