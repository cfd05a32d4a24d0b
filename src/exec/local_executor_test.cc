// Tests of the local executor with real processes: environment, log, exit codes, signals to
// the whole group, and adoption after a simulated daemon crash; then containment: what a job
// leaves behind (also with setsid) is gone before its exit is reported, an attempt whose shim
// was killed is adopted, not run twice, and nothing that cannot be proven the job's is
// signalled (pid reuse). Every test runs twice: with a cgroup per attempt (skipped with the
// reason where this machine lets the test make none) and with process groups only. Each job
// writes into its own temp dir; waits are poll loops with a deadline.
#include "exec/local_executor.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "exec/cgroup.h"
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

// The containment each test runs with: a cgroup hierarchy of this test process's own, or none.
StatusOr<CgroupTree> TestCgroups(bool want) {
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
  // A LocalExecutor with this test's containment (another daemon's, after a "crash").
  LocalExecutor Make(std::vector<std::string> devices = {"0"}) const {
    return LocalExecutor({TIRESIAS_BINARY, "_shim"}, std::move(devices),
                         cgroups_ ? StatusOr<CgroupTree>(*cgroups_) : TestCgroups(false));
  }
  std::optional<CgroupTree> cgroups_;
  std::unique_ptr<LocalExecutor> ex_;
  std::vector<fs::path> dirs_;
};

TEST_P(LocalExecutorTest, EnvironmentCwdAndLogAcrossAttempts) {
  auto dir = TempDir("env");
  setenv("TIRESIAS_TEST_INHERITED", "yes", 1);
  setenv("WORLD_SIZE", "99", 1);  // stale in the daemon: must not reach a 1-GPU job
  LaunchSpec spec = Spec(dir, 7, "env; pwd; echo to-stderr >&2");
  spec.cwd = dir.string();
  spec.gpus = {{0, 2}};  // one GPU: no distributed variables
  spec.env = {{"FOO", "bar"}, {"TIRESIAS_TEST_INHERITED", "overridden"}};
  auto ref = ex_->Launch(spec);
  unsetenv("TIRESIAS_TEST_INHERITED");
  unsetenv("WORLD_SIZE");
  ASSERT_TRUE(ref.ok()) << ref.status().message();
  EXPECT_EQ(ex_->tracked(), 1u);
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->job, JobId(7));
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_EQ(ex_->tracked(), 0u);

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
  EXPECT_EQ(log.find("\nMASTER_"), std::string::npos) << log;
  EXPECT_EQ(log.find("\nRANK="), std::string::npos) << log;
  // torchrun's variables, with a port of its own even on one GPU.
  EXPECT_TRUE(HasLine(log, "PET_NNODES=1")) << log;
  EXPECT_TRUE(HasLine(log, "PET_NPROC_PER_NODE=1")) << log;
  EXPECT_TRUE(HasLine(log, "PET_MASTER_ADDR=127.0.0.1")) << log;
  EXPECT_NE(log.find("PET_MASTER_PORT="), std::string::npos) << log;
  EXPECT_TRUE(HasLine(log, dir.string())) << log;  // pwd
  EXPECT_TRUE(HasLine(log, "to-stderr")) << log;
  EXPECT_NE(log.find("==== tiresias: job 7 attempt 0 started"), std::string::npos) << log;

  // The resumed attempt: distributed variables, and the log is appended to.
  spec = Spec(dir, 7, "env", 1);
  spec.gpus = {{0, 1}, {0, 3}};
  spec.master_port = 29517;
  ASSERT_TRUE(ex_->Launch(spec).ok());
  e = WaitExit(*ex_);
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
  EXPECT_TRUE(HasLine(log, "PET_NPROC_PER_NODE=2")) << log;
  EXPECT_TRUE(HasLine(log, "PET_MASTER_PORT=29517")) << log;
}

TEST_P(LocalExecutorTest, OneProcessPerGpuEachWithItsRankAndGpu) {
  // --tasks-per-gpu 1 on GPUs 1 and 3: two processes in the attempt's group (or cgroup), task
  // i with RANK=LOCAL_RANK=i and the i-th GPU, the same WORLD_SIZE/MASTER_*, no PET_. A
  // SIGTERM reaches both; the attempt ends when both have, with the worst status.
  auto dir = TempDir("tasks");
  const fs::path job = dir / "job";
  LaunchSpec spec = Spec(dir, 8,
                         "echo \"task RANK=$RANK LOCAL_RANK=$LOCAL_RANK WORLD_SIZE=$WORLD_SIZE "
                         "CVD=$CUDA_VISIBLE_DEVICES LWS=$LOCAL_WORLD_SIZE "
                         "PET=${PET_MASTER_PORT:-none} $MASTER_ADDR:$MASTER_PORT\"; exit $RANK");
  spec.gpus = {{0, 1}, {0, 3}};
  spec.master_port = 29518;
  spec.tasks_per_gpu = 1;
  auto launched = ex_->Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  EXPECT_EQ(launched->master_port, 29518);
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 1) << "the highest exit code of the two";
  std::string log = testing::ReadAll(job / "output.log");
  const std::string common = " WORLD_SIZE=2 ", tail = " LWS=2 PET=none 127.0.0.1:29518";
  EXPECT_TRUE(HasLine(log, "task RANK=0 LOCAL_RANK=0" + common + "CVD=1" + tail)) << log;
  EXPECT_TRUE(HasLine(log, "task RANK=1 LOCAL_RANK=1" + common + "CVD=3" + tail)) << log;
  EXPECT_TRUE(HasLine(log, "==== tiresias: task 0 ended: exit 0 ====")) << log;
  EXPECT_TRUE(HasLine(log, "==== tiresias: task 1 ended: exit 1 ====")) << log;
  EXPECT_TRUE(HasLine(log, "==== tiresias: command ended: exit 1 ====")) << log;

  // A preemption signal reaches every task; a task killed by it beats one that exited 75.
  spec = Spec(dir, 8,
              "if [ $RANK = 0 ]; then trap 'exit 75' TERM; else trap '' TERM; fi; "
              "touch started-$RANK; while [ ! -e stop-$RANK ]; do sleep 0.05; done; kill -9 $$",
              1);
  spec.cwd = dir.string();
  spec.gpus = {{0, 0}, {0, 2}};
  spec.tasks_per_gpu = 1;
  launched = ex_->Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  ASSERT_TRUE(
      WaitFor([&] { return fs::exists(dir / "started-0") && fs::exists(dir / "started-1"); }));
  ASSERT_TRUE(ex_->Signal(launched->ref, SIGTERM).ok());
  ASSERT_TRUE(WaitFor([&] {
    return testing::ReadAll(job / "output.log").find("task 0 ended") != std::string::npos;
  }));
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_TRUE(ex_->Poll().empty()) << "rank 1 ignored the signal and still runs";
  std::ofstream(dir / "stop-1") << "";  // ... until it kills itself
  e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL) << e->Describe();
  log = testing::ReadAll(job / "output.log");
  EXPECT_TRUE(HasLine(log, "==== tiresias: task 0 ended: exit 75 ====")) << log;
}

TEST_P(LocalExecutorTest, RejectsBadSpecsAndBadCwd) {
  auto dir = TempDir("bad");
  LaunchSpec spec = Spec(dir, 1, "true");
  spec.argv.clear();
  EXPECT_EQ(ex_->Launch(spec).status().code(), StatusCode::kInvalidArgument);
  spec = Spec(dir, 1, "true");
  spec.gpus = {{0, 1}, {0, 4}};  // this machine has GPUs 0-3
  auto no_gpu = ex_->Launch(spec);
  EXPECT_EQ(no_gpu.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_gpu.status().message().find("GPU 4 of node 0"), std::string::npos);
  spec.gpus = {{1, 0}};  // the local machine is node 0
  EXPECT_EQ(ex_->Launch(spec).status().code(), StatusCode::kInvalidArgument);
  spec = Spec(dir, 1, "true");
  spec.cwd = (dir / "no-such-dir").string();
  auto r = ex_->Launch(spec);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("no-such-dir"), std::string::npos) << r.status().message();
  EXPECT_EQ(ex_->tracked(), 0u);

  LocalExecutor no_shim({(dir / "no-such-shim").string(), "_shim"}, {"0"},
                        cgroups_ ? StatusOr<CgroupTree>(*cgroups_) : TestCgroups(false));
  r = no_shim.Launch(Spec(dir, 1, "true"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot execute shim"), std::string::npos);
}

TEST_P(LocalExecutorTest, ExitCodes) {
  auto dir = TempDir("codes");
  struct Case {
    std::vector<std::string> argv;
    int code;
  };
  for (const Case& c : {Case{{"true"}, 0}, Case{{"sh", "-c", "exit 3"}, 3},
                        Case{{"tiresias-no-such-command"}, 127}}) {
    LaunchSpec spec = Spec(dir, 1, "");
    spec.argv = c.argv;
    ASSERT_TRUE(ex_->Launch(spec).ok());
    auto e = WaitExit(*ex_);
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

TEST_P(LocalExecutorTest, TheDoneFileIsReportedAndAStaleOneIsRemovedBeforeTheNextLaunch) {
  // Attempt 0 leaves its done file ($TIRESIAS_DONE_FILE, in the checkpoint directory) and
  // exits 3: the exit says completed. Attempt 1 starts without it (the file spoke for attempt
  // 0) and exits 0 without one; attempt 2's exit while "serve was down" reads it again.
  auto dir = TempDir("done");
  const fs::path job = dir / "job";
  ASSERT_TRUE(ex_->Launch(Spec(dir, 4, "echo done > \"$TIRESIAS_DONE_FILE\"; exit 3")).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_TRUE(e->completed);
  EXPECT_EQ(DoneFilePath(job.string()), (job / "checkpoint" / ".tiresias-done").string());
  EXPECT_TRUE(fs::exists(job / "checkpoint" / ".tiresias-done"));
  ASSERT_TRUE(
      ex_->Launch(Spec(dir, 4, "test -e \"$TIRESIAS_DONE_FILE\" && exit 5; exit 0", 1)).ok());
  e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_FALSE(e->completed);
  ASSERT_TRUE(ex_->Launch(Spec(dir, 4, "touch \"$TIRESIAS_DONE_FILE\"", 2)).ok());
  ASSERT_TRUE(WaitExit(*ex_));
  auto later = Make().ReadExit(JobId(4), 2, job.string());
  ASSERT_TRUE(later);
  EXPECT_EQ(later->exit_code, 0);
  EXPECT_TRUE(later->completed);
}

TEST_P(LocalExecutorTest, SigkillIsReportedAsSignal9) {
  auto dir = TempDir("kill");
  auto ref = ex_->Launch(Spec(dir, 2, "exec sleep 30"));
  ASSERT_TRUE(ref.ok());
  EXPECT_TRUE(ex_->Poll().empty());
  ASSERT_TRUE(ex_->Signal(ref->ref, SIGKILL).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, -1);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->Describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(ex_->Signal(ref->ref, SIGTERM).code(), StatusCode::kNotFound);
}

TEST_P(LocalExecutorTest, SigtermReachesTheJobNotTheShim) {
  auto dir = TempDir("term");
  std::string ready = (dir / "ready").string(), got = (dir / "got").string();
  auto ref = ex_->Launch(Spec(dir, 3,
                              "trap 'echo term > " + got + "; exit 0' TERM; touch " + ready +
                                  "; while :; do sleep 0.02; done"));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ready); }));
  ASSERT_TRUE(ex_->Signal(ref->ref, SIGTERM).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Describe(), "exit 0");  // the shim lived to record it
  EXPECT_EQ(testing::ReadAll(got), "term\n");
}

TEST_P(LocalExecutorTest, JobIgnoringSigtermIsKilled) {
  auto dir = TempDir("ignore");
  std::string ready = (dir / "ready").string();
  auto ref =
      ex_->Launch(Spec(dir, 4, "trap '' TERM; touch " + ready + "; while :; do sleep 0.02; done"));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ready); }));
  ASSERT_TRUE(ex_->Signal(ref->ref, SIGTERM).ok());
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_TRUE(ex_->Poll().empty());
  ASSERT_TRUE(ex_->Signal(ref->ref, SIGKILL).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL);
}

TEST_P(LocalExecutorTest, SignalReachesTheWholeGroup) {
  auto dir = TempDir("group");
  std::string ready = (dir / "ready").string();
  auto ref = ex_->Launch(Spec(dir, 5, "sleep 30 & sleep 30 & touch " + ready + "; wait"));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ready); }));
  // shim, sh and two sleeps: one session and group, led by the shim.
  EXPECT_GE(LiveInGroup(ref->ref.pid).size(), 4u);
  EXPECT_EQ(getsid(ref->ref.pid), ref->ref.pid);
  ASSERT_TRUE(ex_->Signal(ref->ref, SIGKILL).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return LiveInGroup(ref->ref.pid).empty(); }));
}

TEST_P(LocalExecutorTest, DaemonFdsDoNotLeakIntoJobs) {
  auto dir = TempDir("fds");
  int fd = open("/dev/null", O_RDONLY);  // not close-on-exec
  ASSERT_GE(fd, 0);
  int high = fcntl(fd, F_DUPFD, 77);
  close(fd);
  ASSERT_GE(high, 77);
  auto ref = ex_->Launch(Spec(dir, 6, "ls /proc/$$/fd"));
  close(high);
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitExit(*ex_));
  std::string log = testing::ReadAll(dir / "job" / "output.log");
  EXPECT_TRUE(HasLine(log, "0")) << log;
  EXPECT_TRUE(HasLine(log, "2")) << log;
  EXPECT_FALSE(HasLine(log, std::to_string(high))) << log;
}

TEST_P(LocalExecutorTest, AdoptsOwnChildAfterExecutorIsGone) {
  auto dir = TempDir("adopt_child");
  std::string go = (dir / "go").string();
  ProcessRef ref;
  {
    LocalExecutor a = Make();
    auto r = a.Launch(Spec(dir, 8, "while [ ! -e " + go + " ]; do sleep 0.01; done; exit 5"));
    ASSERT_TRUE(r.ok());
    ref = r->ref;
  }  // the daemon "crashes"; the job runs on
  LocalExecutor b = Make();
  // A pid with another start time is another process: not adopted for an attempt that has no
  // live cgroup (with cgroups, the attempt's cgroup decides: see RecoveryFinds... below).
  ProcessRef wrong = ref;
  wrong.start_ticks += 1;
  EXPECT_FALSE(b.Adopt(JobId(8), 1, wrong, (dir / "job").string()));
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
ProcessRef LaunchFromDoomedDaemon(const LaunchSpec& spec, const std::optional<CgroupTree>& cg) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t daemon = fork();
  if (daemon == 0) {
    LocalExecutor a({TIRESIAS_BINARY, "_shim"}, {"0"},
                    cg ? StatusOr<CgroupTree>(*cg) : TestCgroups(false));
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

TEST_P(LocalExecutorTest, AdoptsOrphanAndReadsItsExitFile) {
  auto dir = TempDir("adopt_orphan");
  std::string go = (dir / "go").string();
  ProcessRef ref = LaunchFromDoomedDaemon(
      Spec(dir, 9, "while [ ! -e " + go + " ]; do sleep 0.01; done; exit 4", 2), cgroups_);
  ASSERT_GT(ref.pid, 0);
  ASSERT_TRUE(ex_->Adopt(JobId(9), 2, ref, (dir / "job").string()));
  EXPECT_TRUE(ex_->Poll().empty());
  std::ofstream(go) << "";
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->attempt, 2);
  EXPECT_EQ(e->exit_code, 4);

  // An adopted job killed by SIGKILL leaves no exit file: reported as SIGKILL.
  ref = LaunchFromDoomedDaemon(Spec(dir, 10, "exec sleep 30", 3), cgroups_);
  ASSERT_TRUE(ex_->Adopt(JobId(10), 3, ref, (dir / "job").string()));
  ASSERT_TRUE(ex_->Signal(ref, SIGKILL).ok());
  e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, SIGKILL);
}

TEST_P(LocalExecutorTest, JobThatEndedWhileDaemonWasDown) {
  auto dir = TempDir("down");
  std::string job_dir = (dir / "job").string();
  ProcessRef ref = LaunchFromDoomedDaemon(Spec(dir, 11, "exit 6", 1), cgroups_);
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(ref.pid, ref.start_ticks); }));
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ExitFilePath(job_dir, 1)); }));
  EXPECT_FALSE(ex_->Adopt(JobId(11), 1, ref, job_dir));
  auto e = ex_->ReadExit(JobId(11), 1, job_dir);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->job, JobId(11));
  EXPECT_EQ(e->Describe(), "exit 6");
  EXPECT_FALSE(ex_->ReadExit(JobId(11), 0, job_dir));  // no such attempt
}

// The start time of `pid` (0 if it is not there).
int64_t TicksOf(int pid) {
  auto st = ReadProcStat(pid);
  return st ? st->start_ticks : 0;
}

// The pid a job wrote into `file`, once it has.
int PidFrom(const std::string& file) {
  int pid = 0;
  WaitFor([&] {
    std::string text = testing::ReadAll(file);
    if (text.empty() || text.back() != '\n') return false;
    pid = std::stoi(text);
    return true;
  });
  return pid;
}

TEST_P(LocalExecutorTest, WhatTheCommandLeftBehindIsGoneBeforeItsExitIsReported) {
  // A background process in the job's group outlives the command; it still holds the job's
  // GPUs, so the exit is reported only once it is gone (killed by the executor).
  auto dir = TempDir("leftover");
  const std::string f = (dir / "leftover").string();
  ASSERT_TRUE(ex_->Launch(Spec(dir, 12, "sleep 30 & echo $! > " + f + "; exit 3")).ok());
  const int leftover = PidFrom(f);
  ASSERT_GT(leftover, 0);
  const int64_t ticks = TicksOf(leftover);
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Describe(), "exit 3");
  EXPECT_NE(Probe(leftover, ticks), Liveness::kAlive) << "reported while it still ran";
}

TEST_P(LocalExecutorTest, SetsidEscapeeIsKilledBeforeTheExitIsReported) {
  // Defect: `setsid sh -c "sleep 20" &` left the job's process group; the job was marked
  // finished and its GPUs handed on while the escapee still ran. In its cgroup it is found.
  if (!cgroups_) GTEST_SKIP() << "process groups cannot contain setsid (README: Containment)";
  auto dir = TempDir("escapee");
  const std::string f = (dir / "escapee").string();
  ASSERT_TRUE(ex_->Launch(Spec(dir, 13,
                               "setsid sh -c 'echo $$ > " + f +
                                   "; exec sleep 30' & "
                                   "while [ ! -s " +
                                   f + " ]; do sleep 0.01; done; exit 0"))
                  .ok());
  const int escapee = PidFrom(f);
  ASSERT_GT(escapee, 0);
  const int64_t ticks = TicksOf(escapee);
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Describe(), "exit 0");
  EXPECT_NE(Probe(escapee, ticks), Liveness::kAlive) << "reported while the escapee still ran";
  EXPECT_FALSE(fs::exists(cgroups_->PathOf(ex_->CgroupName(JobId(13), 0, (dir / "job").string()))))
      << "the attempt's cgroup is removed with it";
}

TEST_P(LocalExecutorTest, PreemptedJobsEscapeeIgnoringSigtermIsKilledToo) {
  // The same on preemption: the command checkpoints and exits on SIGTERM, its escapee ignores
  // SIGTERM. The attempt ends, as a checkpoint exit, only when the escapee is gone.
  if (!cgroups_) GTEST_SKIP() << "process groups cannot contain setsid (README: Containment)";
  auto dir = TempDir("escapee_term");
  const std::string f = (dir / "escapee").string(), ready = (dir / "ready").string();
  auto ref = ex_->Launch(Spec(dir, 14,
                              "setsid sh -c 'trap \"\" TERM; echo $$ > " + f +
                                  "; while :; do sleep 0.05; done' & "
                                  "trap 'exit 0' TERM; while [ ! -s " +
                                  f + " ]; do sleep 0.01; done; touch " + ready +
                                  "; while :; do sleep 0.01; done"));
  ASSERT_TRUE(ref.ok());
  ASSERT_TRUE(WaitFor([&] { return fs::exists(ready); }));
  const int escapee = PidFrom(f);
  const int64_t ticks = TicksOf(escapee);
  ASSERT_TRUE(ex_->Signal(ref->ref, SIGTERM).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Describe(), "exit 0");
  EXPECT_NE(Probe(escapee, ticks), Liveness::kAlive) << "reported while the escapee still ran";
}

TEST_P(LocalExecutorTest, RecoveryFindsTheJobsProcessesNotOnlyTheShim) {
  // Defect: with the daemon down, the job's shim was killed (kill -9) while its command ran
  // on. The restarted daemon saw the shim gone, called the job vanished and launched attempt 1
  // beside attempt 0. The attempt's cgroup still has live members: it is adopted.
  if (!cgroups_) {
    GTEST_SKIP() << "without cgroups a job whose shim is gone cannot be found (README: "
                    "Containment)";
  }
  auto dir = TempDir("shim_killed");
  const std::string job_dir = (dir / "job").string();
  const std::string f = (dir / "cmd").string(), go = (dir / "go").string();
  ProcessRef ref = LaunchFromDoomedDaemon(
      Spec(dir, 15, "echo $$ > " + f + "; while [ ! -e " + go + " ]; do sleep 0.01; done; exit 0"),
      cgroups_);
  ASSERT_GT(ref.pid, 0);
  const int cmd = PidFrom(f);
  ASSERT_EQ(kill(ref.pid, SIGKILL), 0);  // the shim only
  ASSERT_TRUE(WaitFor([&] { return Probe(ref.pid, ref.start_ticks) != Liveness::kAlive; }));
  ASSERT_TRUE(ProcessAlive(cmd, TicksOf(cmd)));

  auto found = ex_->FindLaunched(JobId(15), 0, job_dir);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->pid, ref.pid);
  ASSERT_TRUE(ex_->Adopt(JobId(15), 0, ref, job_dir)) << "its command still runs";
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_TRUE(ex_->Poll().empty());
  std::ofstream(go) << "";
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  // No shim recorded how the command ended: that is what is said, not a made-up SIGKILL.
  EXPECT_FALSE(e->known());
  EXPECT_EQ(e->Describe(), "unknown (no exit record)");
}

TEST_P(LocalExecutorTest, AdoptedAttemptEndingWithoutARecordIsUnknownNotSigkill) {
  // Defect: an adopted shim that disappeared without an exit file was reported as killed by
  // SIGKILL, which nobody sent. Someone else kills the whole job here.
  auto dir = TempDir("no_record");
  ProcessRef ref = LaunchFromDoomedDaemon(Spec(dir, 16, "exec sleep 30"), cgroups_);
  ASSERT_GT(ref.pid, 0);
  ASSERT_TRUE(ex_->Adopt(JobId(16), 0, ref, (dir / "job").string()));
  ASSERT_EQ(kill(-ref.pid, SIGKILL), 0);
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, -1);
  EXPECT_EQ(e->signal, 0);
  EXPECT_EQ(e->Describe(), "unknown (no exit record)");
}

TEST_P(LocalExecutorTest, AnUnreadableProcEntryIsNoEvidenceThatTheJobEnded) {
  // Defect: a healthy adopted job was SIGKILLed and recorded as failed. When the shim's /proc
  // entry could not be read (here: the daemon is out of file descriptors, as under a burst of
  // API clients), Poll took the job for gone, reported SIGKILL, and the loop then signalled
  // its process group. Nothing can be concluded from a failed read: the job runs on.
  auto dir = TempDir("unreadable");
  ProcessRef ref = LaunchFromDoomedDaemon(Spec(dir, 18, "exec sleep 30"), cgroups_);
  ASSERT_GT(ref.pid, 0);
  ASSERT_TRUE(ex_->Adopt(JobId(18), 0, ref, (dir / "job").string()));
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = 64;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> hogs;
  for (int fd; (fd = dup(0)) >= 0;) hogs.push_back(fd);
  const int err = errno;
  std::vector<ExitInfo> seen;
  for (int i = 0; i < 5; ++i) {
    for (const ExitInfo& e : ex_->Poll()) seen.push_back(e);
  }
  const Liveness probed = Probe(ref.pid, ref.start_ticks);
  for (int fd : hogs) close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_EQ(err, EMFILE);
  EXPECT_EQ(probed, Liveness::kUnknown);
  EXPECT_TRUE(seen.empty()) << "reported " << seen.front().Describe() << " for a running job";
  EXPECT_TRUE(ProcessAlive(ref.pid, ref.start_ticks)) << "the job was killed";
  EXPECT_TRUE(ex_->Poll().empty());
  ASSERT_TRUE(ex_->Signal(ref, SIGKILL).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->Describe(), "killed by signal 9 (SIGKILL)");
}

// Forks a process with pid `target` (through /proc/sys/kernel/ns_last_pid) that makes a new
// session and process group, starts a `sleep` in it and exits: group `target` then lives on
// without a process `target`. Returns the sleep's pid, or 0 when the pid could not be had.
int UnrelatedGroupWithId(int target) {
  for (int attempt = 0; attempt < 200; ++attempt) {
    {
      std::ofstream last("/proc/sys/kernel/ns_last_pid");
      if (!last) return 0;
      last << target - 1 << std::flush;
      if (!last) return 0;
    }
    int fds[2];
    if (pipe(fds) != 0) return 0;
    pid_t leader = fork();
    if (leader == 0) {
      if (getpid() != target) _exit(1);
      setsid();
      pid_t member = fork();
      if (member == 0) {
        execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
        _exit(127);
      }
      ssize_t n = write(fds[1], &member, sizeof member);
      _exit(n == sizeof member ? 0 : 1);
    }
    close(fds[1]);
    int status = 0;
    waitpid(leader, &status, 0);
    pid_t member = 0;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
                    read(fds[0], &member, sizeof member) == sizeof member;
    close(fds[0]);
    if (ok) return member;
  }
  return 0;
}

TEST_P(LocalExecutorTest, NeverSignalsAProcessGroupItCannotProveIsTheJobs) {
  // Defect: with the shim's /proc entry gone, the executor signalled process group -pid on the
  // assumption that its id could not be reused. Once the job's group is empty, a new group
  // with that id can belong to anyone.
  if (geteuid() != 0) GTEST_SKIP() << "needs root to choose a pid (ns_last_pid)";
  auto dir = TempDir("reuse");
  auto launched = ex_->Launch(Spec(dir, 17, "exit 0"));
  ASSERT_TRUE(launched.ok());
  const ProcessRef ref = launched->ref;
  ASSERT_TRUE(WaitExit(*ex_));
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);  // to reap the unrelated member below
  const int member = UnrelatedGroupWithId(ref.pid);
  if (member == 0) {
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    GTEST_SKIP() << "could not get pid " << ref.pid << " again (ns_last_pid not writable, or "
                 << "other processes took it)";
  }
  EXPECT_EQ(getpgid(member), ref.pid);
  EXPECT_FALSE(ReadProcStat(ref.pid)) << "the group's leader is gone";
  EXPECT_EQ(ex_->Signal(ref, SIGKILL).code(), StatusCode::kNotFound);
  LocalExecutor restarted = Make();
  EXPECT_FALSE(restarted.Adopt(JobId(17), 0, ref, (dir / "job").string()));
  EXPECT_EQ(restarted.Signal(ref, SIGKILL).code(), StatusCode::kNotFound);
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_TRUE(ProcessAlive(member, TicksOf(member))) << "an unrelated process was killed";
  kill(member, SIGKILL);
  waitpid(member, nullptr, 0);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_P(LocalExecutorTest, ContainmentIsDescribed) {
  if (cgroups_) {
    EXPECT_EQ(ex_->Containment(), cgroups_->Describe() + " (one cgroup per job attempt)");
  } else {
    EXPECT_EQ(ex_->Containment(), "process groups only: disabled for this test");
  }
}

TEST_P(LocalExecutorTest, ShimArgumentsPassThroughTheCli) {
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

INSTANTIATE_TEST_SUITE_P(Containment, LocalExecutorTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Cgroup" : "ProcessGroup"; });

}  // namespace
}  // namespace tiresias
