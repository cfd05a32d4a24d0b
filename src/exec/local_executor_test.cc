// Tests of the local executor with real processes: environment, log, exit codes, signals to
// the whole group, one process per GPU, the done file. Adoption after a daemon crash and
// containment are in local_executor_recovery_test.cc. Every test runs twice: with a cgroup per
// attempt and with process groups only (tests/local_executor_fixture.h).
#include "exec/local_executor.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "exec/exit_file.h"
#include "local_executor_fixture.h"

namespace tiresias::local_executor_test {
namespace {

namespace fs = std::filesystem;

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

TEST_P(LocalExecutorTest, RejectsBadSpecsAndFailsAJobWhoseCwdIsGone) {
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
  // A working directory that is gone fails the job with exit 126 and the reason, as it does
  // for a user's job (found by a tester: a root job's was a launch failure, no exit code).
  spec = Spec(dir, 1, "true");
  spec.cwd = (dir / "no-such-dir").string();
  ASSERT_TRUE(ex_->Launch(spec).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 126);
  EXPECT_EQ(e->Describe(), "exit 126: cannot enter the working directory " + spec.cwd +
                               ": No such file or directory");

  LocalExecutor no_shim({(dir / "no-such-shim").string(), "_shim"}, {"0"},
                        cgroups_ ? StatusOr<CgroupTree>(*cgroups_) : TestCgroups(false));
  auto r = no_shim.Launch(Spec(dir, 1, "true"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot execute shim"), std::string::npos);
}

TEST_P(LocalExecutorTest, ExitCodes) {
  auto dir = TempDir("codes");
  struct Case {
    std::vector<std::string> argv;
    int code;
    std::string why;
  };
  // As a shell: 127 for a command not found, 126 for one found but not executable (both were
  // 127; found by a tester).
  for (const Case& c :
       {Case{{"true"}, 0, ""}, Case{{"sh", "-c", "exit 3"}, 3, ""},
        Case{{"tiresias-no-such-command"},
             127,
             ": cannot run 'tiresias-no-such-command': No such file or directory"},
        Case{{dir.string()}, 126, ": cannot run '" + dir.string() + "': Permission denied"}}) {
    LaunchSpec spec = Spec(dir, 1, "");
    spec.argv = c.argv;
    ASSERT_TRUE(ex_->Launch(spec).ok());
    auto e = WaitExit(*ex_);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->exit_code, c.code) << c.argv[0];
    EXPECT_EQ(e->signal, 0);
    // A command that could not be started says why in its exit too (`show`), not only in
    // its log.
    EXPECT_EQ(e->Describe(), "exit " + std::to_string(c.code) + c.why);
  }
  std::string log = testing::ReadAll(dir / "job" / "output.log");
  EXPECT_NE(log.find("cannot run 'tiresias-no-such-command': No such file or directory"),
            std::string::npos)
      << log;
  // An --output file that cannot be opened: exit 126 with the reason, also when read back
  // from the exit file (a restart: ReadExit).
  LaunchSpec spec = Spec(dir, 1, "true", 1);
  spec.stdout_path = (dir / "no-such-dir" / "out.log").string();
  ASSERT_TRUE(ex_->Launch(spec).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  const std::string why = "exit 126: cannot open " + spec.stdout_path +
                          " for the job's stdout: No such file or directory";
  EXPECT_EQ(e->Describe(), why);
  auto again = ex_->ReadExit(JobId(1), 1, (dir / "job").string());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->Describe(), why);
}

// --output as sbatch opens it (found by a tester: a resubmitted job's -o file kept every
// earlier run's output): the first attempt empties it, a resumed one appends, and tasks of
// one attempt keep each other's lines.
TEST_P(LocalExecutorTest, TheFirstAttemptEmptiesItsOutputFileAndLaterOnesAppend) {
  auto dir = TempDir("open_mode");
  const fs::path out = dir / "out.txt";
  std::ofstream(out) << "an earlier job's line\n";
  LaunchSpec spec = Spec(dir, 1, "echo task-$RANK", 0);
  spec.stdout_path = out.string();
  spec.gpus = {{0, 0}, {0, 1}};
  spec.tasks_per_gpu = 1;
  ASSERT_TRUE(ex_->Launch(spec).ok());
  ASSERT_TRUE(WaitExit(*ex_));
  std::string text = testing::ReadAll(out);
  EXPECT_EQ(text.find("an earlier job's line"), std::string::npos) << text;
  EXPECT_TRUE(HasLine(text, "task-0")) << text;
  EXPECT_TRUE(HasLine(text, "task-1")) << text;
  spec = Spec(dir, 1, "echo resumed", 1);
  spec.stdout_path = out.string();
  ASSERT_TRUE(ex_->Launch(spec).ok());
  ASSERT_TRUE(WaitExit(*ex_));
  text = testing::ReadAll(out);
  EXPECT_TRUE(HasLine(text, "task-0") && HasLine(text, "resumed")) << text;
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

TEST_P(LocalExecutorTest, AJobWritesItsLogThroughTheShimWhichRotatesItAtTheLimit) {
  // A 64 KiB limit (serve --max-log-size): a job that prints 200,000 numbered lines (1.29 MB)
  // and then how it ends. Its stdout is a pipe (the shim's); output.log and output.log.1 each
  // hold at most 64 KiB of it (plus tiresias' lines), the newest output is whole in the log,
  // and the two files join without a lost or split line.
  ex_->SetLogLimits(64 << 10, 0);
  auto dir = TempDir("rotate");
  ASSERT_TRUE(ex_->Launch(Spec(dir, 8,
                               "readlink /proc/self/fd/1 >&2; seq 1 200000; echo the "
                               "end >&2; exit 3"))
                  .ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 3);
  const std::string log = testing::ReadAll(dir / "job" / "output.log");
  const std::string older = testing::ReadAll(dir / "job" / "output.log.1");
  EXPECT_LE(log.size(), (64u << 10) + 400) << log.size();
  EXPECT_LE(older.size(), (64u << 10) + 400) << older.size();
  EXPECT_TRUE(HasLine(log, "200000")) << log.substr(log.size() - 200);
  EXPECT_TRUE(HasLine(log, "the end"));
  EXPECT_NE(log.find("==== tiresias: command ended: exit 3 ===="), std::string::npos);
  // The last number of output.log.1 and the first of output.log are consecutive.
  auto numbers = [](const std::string& text) {
    std::vector<long> v;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos)
        v.push_back(std::stol(line));
    }
    return v;
  };
  const auto a = numbers(older), b = numbers(log);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(a.back() + 1, b.front());
  EXPECT_EQ(b.back(), 200000);

  // Without limits (serve --max-log-size 0 --disk-reserve 0) the job writes its log itself.
  ex_->SetLogLimits(0, 0);
  auto plain = TempDir("plain");
  ASSERT_TRUE(ex_->Launch(Spec(plain, 9, "readlink /proc/self/fd/1")).ok());
  ASSERT_TRUE(WaitExit(*ex_));
  EXPECT_TRUE(HasLine(testing::ReadAll(plain / "job" / "output.log"),
                      (plain / "job" / "output.log").string()));
}

}  // namespace

TEST_P(LocalExecutorTest, TasksWritingLongLinesAtOnceNeverSplitEachOthersLines) {
  // Regression: with --tasks-per-gpu the tasks shared one pipe to the log, which keeps only
  // writes of up to 4 KiB whole: two ranks printing 20,000-character lines at once could cut
  // each other's lines. Each task has its own pipe now, joined into whole lines. Rank r
  // prints 100 lines of 20,000 times the digit r, one write each; every line of the log is
  // one task's, whole.
  auto dir = TempDir("lines");
  const fs::path job = dir / "job";
  LaunchSpec spec = Spec(dir, 8,
                         "line=$(printf \"%020000d\" 0 | tr 0 $RANK); for i in $(seq 100); do "
                         "printf '%s\\n' \"$line\"; done");
  spec.gpus = {{0, 0}, {0, 1}};
  spec.tasks_per_gpu = 1;
  ASSERT_TRUE(ex_->Launch(spec).ok());
  auto e = WaitExit(*ex_);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 0);
  std::istringstream log(testing::ReadAll(job / "output.log"));
  int whole[2] = {0, 0};
  for (std::string line; std::getline(log, line);) {
    if (line.starts_with("====")) continue;
    ASSERT_EQ(line.size(), 20000u) << line.substr(0, 80);
    ASSERT_TRUE(line == std::string(20000, line[0]) && (line[0] == '0' || line[0] == '1'))
        << "a line with two tasks' output: " << line.substr(0, 80);
    ++whole[line[0] - '0'];
  }
  EXPECT_EQ(whole[0], 100);
  EXPECT_EQ(whole[1], 100);
}

INSTANTIATE_TEST_SUITE_P(Containment, LocalExecutorTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Cgroup" : "ProcessGroup"; });

}  // namespace tiresias::local_executor_test
