// JobRunner on this machine: the LocalExecutor (processes under the supervisor shim).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "live/executor.h"
#include "live/runner.h"

namespace tiresias {

class LocalRunner : public JobRunner {
 public:
  explicit LocalRunner(std::vector<std::string> shim_argv) : ex_(std::move(shim_argv)) {}
  StatusOr<ProcessRef> Launch(const LaunchSpec& spec) override { return ex_.Launch(spec); }
  Status Signal(const ProcessRef& p, int sig) override { return ex_.Signal(p, sig); }
  bool Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& dir) override {
    return ex_.Adopt(job, attempt, p, dir);
  }
  std::optional<ExitInfo> ReadExit(JobId job, int attempt, const std::string& dir) override {
    return LocalExecutor::ReadExitFile(job, attempt, dir);
  }
  std::optional<ProcessRef> FindLaunched(JobId, int attempt, const std::string& dir) override {
    return LocalExecutor::ReadPidFileOf(attempt, dir);
  }
  std::vector<ExitInfo> Poll() override { return ex_.Poll(); }

 private:
  LocalExecutor ex_;
};

}  // namespace tiresias
