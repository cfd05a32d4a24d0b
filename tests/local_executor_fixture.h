// The fixture of the local executor's tests (src/exec/local_executor*_test.cc): real
// processes, each test twice (a cgroup per attempt, skipped with the reason where this
// machine lets the test make none, and process groups only), a temp dir per job, and poll
// loops with a deadline. Not in an anonymous namespace: the parameterized suite spans files.
#pragma once

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exec/cgroup.h"
#include "exec/local_executor.h"
#include "exec/proc_stat.h"
#include "test_util.h"

namespace tiresias::local_executor_test {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr auto kDeadline = std::chrono::seconds(5);

inline bool HasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

// Waits until `cond` holds; false at the deadline.
template <typename F>
inline bool WaitFor(F cond) {
  auto end = steady_clock::now() + kDeadline;
  while (!cond()) {
    if (steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// Polls `ex` until it reports one exit.
inline std::optional<ExitInfo> WaitExit(LocalExecutor& ex) {
  std::optional<ExitInfo> got;
  WaitFor([&] {
    auto v = ex.Poll();
    if (!v.empty()) got = v.front();
    return got.has_value();
  });
  return got;
}

inline LaunchSpec Spec(const fs::path& dir, int job, std::string script, int attempt = 0) {
  return LaunchSpec{.job = JobId(job),
                    .attempt = attempt,
                    .argv = {"sh", "-c", std::move(script)},
                    .job_dir = (dir / "job").string()};
}

// Live (non-zombie) processes whose process group is `pgid`.
inline std::vector<int> LiveInGroup(int pgid) {
  std::vector<int> out;
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    auto st = ReadProcStat(pid);
    if (st && st->pgrp == pgid && st->state != 'Z' && st->state != 'X') out.push_back(pid);
  }
  closedir(d);
  return out;
}

// The containment each test runs with: a cgroup hierarchy of this test process's own, or none.
inline StatusOr<CgroupTree> TestCgroups(bool want) {
  if (!want) return FailedPrecondition("disabled for this test");
  return CgroupTree::Detect("tiresias-test-" + std::to_string(getpid()));
}

class LocalExecutorTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      auto cg = TestCgroups(true);
      if (!cg.ok()) {
        GTEST_SKIP() << "no writable cgroup here (" << cg.status().message()
                     << "); the process-group variant of this test runs";
      }
      cgroups_ = *cg;
    }
    ex_ = std::make_unique<LocalExecutor>(Make({"0", "1", "2", "3"}));
  }
  void TearDown() override {
    if (cgroups_) {  // nothing of a test may outlive it
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(cgroups_->root(), ec)) {
        if (!e.is_directory()) continue;
        const std::string name = e.path().filename().string();
        (void)cgroups_->Kill(name);
        WaitFor([&] { return cgroups_->Remove(name).ok(); });
      }
      rmdir(cgroups_->root().c_str());
    }
    std::error_code ec;
    for (const auto& d : dirs_) fs::remove_all(d, ec);
  }
  fs::path TempDir(const std::string& name) {
    dirs_.push_back(testing::ScratchDir(name + (GetParam() ? "_cg" : "_pg")));
    return dirs_.back();
  }
  // A LocalExecutor with this test's containment (another daemon's, after a "crash") and
  // serve's shim.
  // Its logs go through the shim as under serve (1 GiB; 1 MiB kept free, not serve's 256 MiB:
  // a scratch disk with less would drop the output these tests read).
  LocalExecutor Make(std::vector<std::string> devices = {"0"}) const {
    LocalExecutor ex(DefaultShimArgv(), std::move(devices),
                     cgroups_ ? StatusOr<CgroupTree>(*cgroups_) : TestCgroups(false));
    ex.SetLogLimits(int64_t{1} << 30, int64_t{1} << 20);
    return ex;
  }
  std::optional<CgroupTree> cgroups_;
  std::unique_ptr<LocalExecutor> ex_;
  std::vector<fs::path> dirs_;
};

}  // namespace tiresias::local_executor_test
