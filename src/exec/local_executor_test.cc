// Tests of the local executor with real processes: environment, log, exit codes, signals to
// the whole group, and adoption after a simulated daemon crash. Each job writes into its own
// temp dir; waits are poll loops with a deadline.
#include "exec/local_executor.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "exec/exit_file.h"
#include "exec/proc_stat.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr auto kDeadline = std::chrono::seconds(5);

bool HasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

// Waits until `cond` holds; false at the deadline.
template <typename F>
bool WaitFor(F cond) {
  auto end = steady_clock::now() + kDeadline;
  while (!cond()) {
    if (steady_clock::now() > end) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// Polls `ex` until it reports one exit.
std::optional<ExitInfo> WaitExit(LocalExecutor& ex) {
  std::optional<ExitInfo> got;
  WaitFor([&] {
    auto v = ex.Poll();
    if (!v.empty()) got = v.front();
    return got.has_value();
  });
  return got;
}

LaunchSpec Spec(const fs::path& dir, int job, std::string script, int attempt = 0) {
  return LaunchSpec{.job = JobId(job),
                    .attempt = attempt,
                    .argv = {"sh", "-c", std::move(script)},
                    .job_dir = (dir / "job").string()};
}

// Live (non-zombie) processes whose process group is `pgid`.
std::vector<int> LiveInGroup(int pgid) {
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

class LocalExecutorTest : public ::testing::Test {
 protected:
  void TearDown() override {
    std::error_code ec;
    for (const auto& d : dirs_) fs::remove_all(d, ec);
  }
  fs::path TempDir(const std::string& name) {
    dirs_.push_back(testing::ScratchDir(name));
    return dirs_.back();
  }
  LocalExecutor ex_{{TIRESIAS_BINARY, "_shim"}, {"0", "1", "2", "3"}};
  std::vector<fs::path> dirs_;
};

TEST_F(LocalExecutorTest, EnvironmentCwdAndLogAcrossAttempts) {
  auto dir = TempDir("env");
  setenv("TIRESIAS_TEST_INHERITED", "yes", 1);
  setenv("WORLD_SIZE", "99", 1);  // stale in the daemon: must not reach a 1-GPU job
  LaunchSpec spec = Spec(dir, 7, "env; pwd; echo to-stderr >&2");
  spec.cwd = dir.string();
  spec.gpus = {{0, 2}};  // one GPU: no distributed variables
  spec.env = {{"FOO", "bar"}, {"TIRESIAS_TEST_INHERITED", "overridden"}};
  auto ref = ex_.Launch(spec);
  unsetenv("TIRESIAS_TEST_INHERITED");
  unsetenv("WORLD_SIZE");
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  EXPECT_EQ(ex_.tracked(), 1u);
  auto e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->job, JobId(7));
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_EQ(ex_.tracked(), 0u);

  fs::path job = dir / "job";
  std::string log = testing::ReadAll(job / "output.log");
  EXPECT_TRUE(HasLine(log, "CUDA_VISIBLE_DEVICES=2")) << log;
  EXPECT_TRUE(HasLine(log, "TIRESIAS_JOB_ID=7")) << log;
  EXPECT_TRUE(HasLine(log, "TIRESIAS_ATTEMPT=0")) << log;
  EXPECT_TRUE(HasLine(log, "TIRESIAS_CHECKPOINT_DIR=" + (job / "checkpoint").string())) << log;
  EXPECT_TRUE(fs::is_directory(job / "checkpoint"));
  EXPECT_TRUE(HasLine(log, "FOO=bar")) << log;
  EXPECT_TRUE(HasLine(log, "TIRESIAS_TEST_INHERITED=overridden")) << log;
  EXPECT_EQ(log.find("WORLD_SIZE="), std::string::npos) << log;
  EXPECT_EQ(log.find("MASTER_"), std::string::npos) << log;
  EXPECT_TRUE(HasLine(log, dir.string())) << log;  // pwd
  EXPECT_TRUE(HasLine(log, "to-stderr")) << log;
  EXPECT_NE(log.find("==== tiresias: job 7 attempt 0 started"), std::string::npos) << log;

  // The resumed attempt: distributed variables, and the log is appended to.
  spec = Spec(dir, 7, "env", 1);
  spec.gpus = {{0, 1}, {0, 3}};
  spec.master_port = 29517;
  ASSERT_TRUE(ex_.Launch(spec).ok());
  e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->attempt, 1);
  EXPECT_EQ(e->exit_code, 0);
  log = testing::ReadAll(job / "output.log");
  EXPECT_TRUE(HasLine(log, "to-stderr")) << log;  // first attempt's output kept
  EXPECT_NE(log.find("==== tiresias: job 7 attempt 1 started"), std::string::npos) << log;
  EXPECT_TRUE(HasLine(log, "TIRESIAS_ATTEMPT=1")) << log;
  EXPECT_TRUE(HasLine(log, "WORLD_SIZE=2")) << log;
  EXPECT_TRUE(HasLine(log, "MASTER_ADDR=127.0.0.1")) << log;
  EXPECT_TRUE(HasLine(log, "MASTER_PORT=29517")) << log;
  EXPECT_TRUE(HasLine(log, "CUDA_VISIBLE_DEVICES=1,3")) << log;
}

TEST_F(LocalExecutorTest, RejectsBadSpecsAndBadCwd) {
  auto dir = TempDir("bad");
  LaunchSpec spec = Spec(dir, 1, "true");
  spec.argv.clear();
  EXPECT_EQ(ex_.Launch(spec).status().code(), StatusCode::kInvalidArgument);
  spec = Spec(dir, 1, "true");
  spec.gpus = {{0, 1}, {0, 4}};  // this machine has GPUs 0-3
  auto no_gpu = ex_.Launch(spec);
  EXPECT_EQ(no_gpu.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_gpu.status().message().find("GPU 4 of node 0"), std::string::npos);
  spec.gpus = {{1, 0}};  // the local machine is node 0
  EXPECT_EQ(ex_.Launch(spec).status().code(), StatusCode::kInvalidArgument);
  spec = Spec(dir, 1, "true");
  spec.cwd = (dir / "no-such-dir").string();
  auto r = ex_.Launch(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no-such-dir"), std::string::npos) << r.status().message();
  EXPECT_EQ(ex_.tracked(), 0u);

  LocalExecutor no_shim({(dir / "no-such-shim").string(), "_shim"}, {"0"});
  r = no_shim.Launch(Spec(dir, 1, "true"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot execute shim"), std::string::npos);
}

TEST_F(LocalExecutorTest, ExitCodes) {
  auto dir = TempDir("codes");
  struct Case {
    std::vector<std::string> argv;
    int code;
  };
  for (const Case& c : {Case{{"true"}, 0}, Case{{"sh", "-c", "exit 3"}, 3},
                        Case{{"tiresias-no-such-command"}, 127}}) {
    LaunchSpec spec = Spec(dir, 1, "");
    spec.argv = c.argv;
    ASSERT_TRUE(ex_.Launch(spec).ok());
    auto e = WaitExit(ex_);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->exit_code, c.code) << c.argv[0];
    EXPECT_EQ(e->signal, 0);
    EXPECT_EQ(e->Describe(), "exit " + std::to_string(c.code));
  }
  std::string log = testing::ReadAll(dir / "job" / "output.log");
  EXPECT_NE(log.find("cannot run 'tiresias-no-such-command': No such file or directory"),
            std::string::npos)
      << log;
}

TEST_F(LocalExecutorTest, SigkillIsReportedAsSignal9) {
  auto dir = TempDir("kill");
  auto ref = ex_.Launch(Spec(dir, 2, "exec sleep 30"));
  ASSERT_TRUE(ref.ok());
  EXPECT_TRUE(ex_.Poll().empty());
  ASSERT_TRUE(ex_.Signal(ref->ref, SIGKILL).ok());
  auto e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, -1);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->Describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(ex_.Signal(ref->ref, SIGTERM).code(), StatusCode::kNotFound);
}

TEST_F(LocalExecutorTest, SigtermReachesTheJobNotTheShim) {
  auto dir = TempDir("term");
  std::string ready = (dir / "ready").string(), got = (dir / "got").string();
  auto ref = ex_.Launch(Spec(dir, 3,
                             "trap 'echo term > " + got + "; exit 0' TERM; touch " + ready +
                                 "; while :; do sleep 0.02; done"));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ready); }));
  ASSERT_TRUE(ex_.Signal(ref->ref, SIGTERM).ok());
  auto e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Describe(), "exit 0");  // the shim lived to record it
  EXPECT_EQ(testing::ReadAll(got), "term\n");
}

TEST_F(LocalExecutorTest, JobIgnoringSigtermIsKilled) {
  auto dir = TempDir("ignore");
  std::string ready = (dir / "ready").string();
  auto ref =
      ex_.Launch(Spec(dir, 4, "trap '' TERM; touch " + ready + "; while :; do sleep 0.02; done"));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ready); }));
  ASSERT_TRUE(ex_.Signal(ref->ref, SIGTERM).ok());
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_TRUE(ex_.Poll().empty());
  ASSERT_TRUE(ex_.Signal(ref->ref, SIGKILL).ok());
  auto e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL);
}

TEST_F(LocalExecutorTest, SignalReachesTheWholeGroup) {
  auto dir = TempDir("group");
  std::string ready = (dir / "ready").string();
  auto ref = ex_.Launch(Spec(dir, 5, "sleep 30 & sleep 30 & touch " + ready + "; wait"));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ready); }));
  // shim, sh and two sleeps: one session and group, led by the shim.
  EXPECT_GE(LiveInGroup(ref->ref.pid).size(), 4u);
  EXPECT_EQ(getsid(ref->ref.pid), ref->ref.pid);
  ASSERT_TRUE(ex_.Signal(ref->ref, SIGKILL).ok());
  auto e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return LiveInGroup(ref->ref.pid).empty(); }));
}

TEST_F(LocalExecutorTest, DaemonFdsDoNotLeakIntoJobs) {
  auto dir = TempDir("fds");
  int fd = open("/dev/null", O_RDONLY);  // not close-on-exec
  ASSERT_GE(fd, 0);
  int high = fcntl(fd, F_DUPFD, 77);
  close(fd);
  ASSERT_GE(high, 77);
  auto ref = ex_.Launch(Spec(dir, 6, "ls /proc/$$/fd"));
  close(high);
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitExit(ex_));
  std::string log = testing::ReadAll(dir / "job" / "output.log");
  EXPECT_TRUE(HasLine(log, "0")) << log;
  EXPECT_TRUE(HasLine(log, "2")) << log;
  EXPECT_FALSE(HasLine(log, std::to_string(high))) << log;
}

TEST_F(LocalExecutorTest, AdoptsOwnChildAfterExecutorIsGone) {
  auto dir = TempDir("adopt_child");
  std::string go = (dir / "go").string();
  ProcessRef ref;
  {
    LocalExecutor a({TIRESIAS_BINARY, "_shim"}, {"0"});
    auto r = a.Launch(Spec(dir, 8, "while [ ! -e " + go + " ]; do sleep 0.01; done; exit 5"));
    ASSERT_TRUE(r.ok());
    ref = r->ref;
  }  // the daemon "crashes"; the job runs on
  LocalExecutor b({TIRESIAS_BINARY, "_shim"}, {"0"});
  ProcessRef wrong = ref;
  wrong.start_ticks += 1;
  EXPECT_FALSE(b.Adopt(JobId(8), 0, wrong, (dir / "job").string()));
  ASSERT_TRUE(b.Adopt(JobId(8), 0, ref, (dir / "job").string()));
  EXPECT_EQ(b.tracked(), 1u);
  EXPECT_TRUE(b.Poll().empty());
  std::ofstream(go) << "";
  auto e = WaitExit(b);  // the shim is the test's child: Poll must see through the zombie
  ASSERT_TRUE(e);
  EXPECT_EQ(e->job, JobId(8));
  EXPECT_EQ(e->exit_code, 5);
  EXPECT_FALSE(ReadProcStat(ref.pid).has_value());  // reaped, not left a zombie
}

// Launches from a forked "daemon" process that then exits, so the shim is not our child.
ProcessRef LaunchFromDoomedDaemon(const LaunchSpec& spec) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t daemon = fork();
  if (daemon == 0) {
    LocalExecutor a({TIRESIAS_BINARY, "_shim"}, {"0"});
    auto r = a.Launch(spec);
    ProcessRef ref = r.ok() ? r->ref : ProcessRef{};
    ssize_t n = write(fds[1], &ref, sizeof ref);
    _exit(n == sizeof ref ? 0 : 1);
  }
  close(fds[1]);
  ProcessRef ref;
  EXPECT_EQ(read(fds[0], &ref, sizeof ref), static_cast<ssize_t>(sizeof ref));
  close(fds[0]);
  int status;
  waitpid(daemon, &status, 0);
  return ref;
}

TEST_F(LocalExecutorTest, AdoptsOrphanAndReadsItsExitFile) {
  auto dir = TempDir("adopt_orphan");
  std::string go = (dir / "go").string();
  ProcessRef ref = LaunchFromDoomedDaemon(
      Spec(dir, 9, "while [ ! -e " + go + " ]; do sleep 0.01; done; exit 4", 2));
  ASSERT_GT(ref.pid, 0);
  ASSERT_TRUE(ex_.Adopt(JobId(9), 2, ref, (dir / "job").string()));
  EXPECT_TRUE(ex_.Poll().empty());
  std::ofstream(go) << "";
  auto e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->attempt, 2);
  EXPECT_EQ(e->exit_code, 4);

  // An adopted job killed by SIGKILL leaves no exit file: reported as SIGKILL.
  ref = LaunchFromDoomedDaemon(Spec(dir, 10, "exec sleep 30", 3));
  ASSERT_TRUE(ex_.Adopt(JobId(10), 3, ref, (dir / "job").string()));
  ASSERT_TRUE(ex_.Signal(ref, SIGKILL).ok());
  e = WaitExit(ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL);
}

TEST_F(LocalExecutorTest, JobThatEndedWhileDaemonWasDown) {
  auto dir = TempDir("down");
  std::string job_dir = (dir / "job").string();
  ProcessRef ref = LaunchFromDoomedDaemon(Spec(dir, 11, "exit 6", 1));
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(ref.pid, ref.start_ticks); }));
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ExitFilePath(job_dir, 1)); }));
  EXPECT_FALSE(ex_.Adopt(JobId(11), 1, ref, job_dir));
  auto e = ex_.ReadExit(JobId(11), 1, job_dir);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->job, JobId(11));
  EXPECT_EQ(e->Describe(), "exit 6");
  EXPECT_FALSE(ex_.ReadExit(JobId(11), 0, job_dir));  // no such attempt
}

TEST_F(LocalExecutorTest, ShimArgumentsPassThroughTheCli) {
  auto dir = TempDir("shim_cli");
  std::string exit_file = (dir / "x.exit").string(), out = (dir / "out").string();
  std::string cmd = std::string(TIRESIAS_BINARY) + " _shim --exit-file " + exit_file +
                    " -- sh -c 'printf \"%s|\" \"$@\" > " + out +
                    "; exit 9' x -- --help sim 2>/dev/null";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 9);
  EXPECT_EQ(testing::ReadAll(out), "--|--help|sim|");
  auto rec = ReadExitRecord(exit_file);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->exit_code, 9);

  status = std::system((std::string(TIRESIAS_BINARY) + " _shim oops 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
}  // namespace tiresias
