// The local executor after a daemon crash and under containment, with real processes: an
// orphaned attempt is adopted (not run twice) and its exit file read; what a job leaves behind
// (also with setsid, also ignoring SIGTERM) is gone before its exit is reported; nothing that
// cannot be proven the job's is signalled (pid reuse). Every test runs twice: with a cgroup
// per attempt and with process groups only (tests/local_executor_fixture.h).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "exec/exit_file.h"
#include "local_executor_fixture.h"

namespace tiresias::local_executor_test {
namespace {

namespace fs = std::filesystem;

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

// Both ways to start the shim: the program serve uses (`tiresias-shim`, found beside the
// binary) and the CLI's `_shim` subcommand, its fallback.
TEST_P(LocalExecutorTest, ShimArgumentsPassThroughEitherShim) {
  const std::vector<std::string> standalone = DefaultShimArgv();
  ASSERT_EQ(standalone.size(), 1u) << "tiresias-shim is not beside the test binary";
  EXPECT_EQ(fs::path(standalone[0]).filename(), "tiresias-shim");
  for (const std::string& shim : {standalone[0], std::string(TIRESIAS_BINARY) + " _shim"}) {
    SCOPED_TRACE(shim);
    auto dir = TempDir("shim_cli");
    std::string exit_file = (dir / "x.exit").string(), out = (dir / "out").string();
    std::string cmd = shim + " --exit-file " + exit_file + " -- sh -c 'printf \"%s|\" \"$@\" > " +
                      out + "; exit 9' x -- --help sim 2>/dev/null";
    int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 9);
    EXPECT_EQ(testing::ReadAll(out), "--|--help|sim|");
    auto rec = ReadExitRecord(exit_file);
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->exit_code, 9);

    status = std::system((shim + " oops 2>/dev/null").c_str());
    EXPECT_EQ(WEXITSTATUS(status), 2);
  }
}

}  // namespace
}  // namespace tiresias::local_executor_test
