// The fixture of the Slurm executor's tests (tests/slurm_executor_test.cc,
// tests/slurm_executor_replace_test.cc): a real one-node Slurm cluster per test
// (tests/slurm_cluster.h), executors opened on it, launch specs, and wrappers of the Slurm
// tools that inject faults (FaultyTools). Each test skips with the reason when the Slurm
// packages or root are missing.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "exec/slurm_executor.h"
#include "serve_process.h"
#include "slurm_cluster.h"
#include "test_util.h"

namespace tiresias {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class SlurmExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testing::SlurmCluster::Missing(); !why.empty()) GTEST_SKIP() << why;
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = testing::ScratchDir("slurmx_" + name.substr(0, 16));
    cluster_ = std::make_unique<testing::SlurmCluster>(1, 1);
    ASSERT_TRUE(cluster_->up()) << "could not bring up Slurm: " << cluster_->error();
  }
  void TearDown() override {
    if (old_path_.empty()) return;
    ::setenv("PATH", old_path_.c_str(), 1);
    if (HasFailure()) {
      std::cerr << "--- the Slurm commands run\n" << testing::ReadAll(dir_ / "bin" / "calls.log");
    }
  }

  // An executor for this cluster. With a poll interval of an hour the poller reads Slurm's
  // jobs only after each batch of commands (Refresh makes one).
  std::unique_ptr<SlurmExecutor> Open(const std::string& tag, std::chrono::milliseconds poll = 1h,
                                      std::chrono::milliseconds command_timeout = 10s) {
    auto x = SlurmExecutor::Open({.tag = tag,
                                  .env = {"SLURM_CONF=" + cluster_->conf()},
                                  .poll_interval = poll,
                                  .command_timeout = command_timeout,
                                  .max_backoff = 1s});
    EXPECT_TRUE(x.ok()) << x.status().message();
    return x.ok() ? std::move(*x) : nullptr;
  }
  LaunchSpec Spec(int job, std::vector<std::string> argv, int attempt = 0) const {
    return {.job = JobId(job),
            .attempt = attempt,
            .argv = std::move(argv),
            .gpus = {GpuId{0, 0}},
            .job_dir = (dir_ / std::to_string(job)).string()};
  }
  // `spec`'s job submitted (its Slurm job held): Prepare, and the worker done with it.
  static void Prepared(SlurmExecutor& x, const LaunchSpec& spec) {
    x.Prepare(spec);
    ASSERT_TRUE(x.Drain(30s));
  }
  // `spec`'s job prepared on `x` (opened polling every 30 s), and its Slurm job then held by
  // an admin, after the poll of its submission: the executor's snapshot is older than the
  // hold. Its Slurm id.
  int64_t HeldByAnAdminSinceTheSnapshot(SlurmExecutor& x, const LaunchSpec& spec) {
    Prepared(x, spec);
    const int64_t sid = x.SlurmId(spec.job);
    std::this_thread::sleep_for(1s);  // the poll after the submission is done: no other for 30 s
    EXPECT_EQ(cluster_->Sh(fmt::format("scontrol hold {}", sid)).rc, 0);
    return sid;
  }
  // A batch of commands (the submission of a throwaway job), after which the poller reads.
  void Refresh(SlurmExecutor& x) {
    x.Prepare({.job = JobId(++throwaway_),
               .argv = {"true"},
               .job_dir = (dir_ / std::to_string(throwaway_)).string()});
    ASSERT_TRUE(x.Drain(30s));
  }
  // The next exit Poll reports (nullopt: none within 30 s).
  static std::optional<ExitInfo> NextExit(SlurmExecutor& x) {
    std::optional<ExitInfo> end;
    (void)testing::WaitFor(
        [&] {
          for (const ExitInfo& e : x.Poll()) end = e;
          return end.has_value();
        },
        30s);
    return end;
  }
  // Job 1 (`true`) prepared, then launched with `fault` (a FaultyTools file) saying that
  // the permission was denied; its end.
  std::optional<ExitInfo> TrueWithFault(SlurmExecutor& x, const fs::path& fault) {
    const LaunchSpec spec = Spec(1, {"true"});
    Prepared(x, spec);
    Put(fault, "scontrol: error: Access/permission denied for job\n");
    EXPECT_TRUE(x.Launch(spec).ok());
    return NextExit(x);
  }
  // What Slurm says of its job `sid` (squeue -o FORMAT, every state).
  std::string Squeue(int64_t sid, const std::string& format) const {
    return testing::Trimmed(
        cluster_->Sh(fmt::format("squeue -h -t all -j {} -o '{}'", sid, format)).out);
  }
  // Wrappers of the Slurm tools first on PATH. While <bin>/fail-<tool>-<first argument>
  // exists, that command fails saying what the file says; while <bin>/slow-<tool> exists, the
  // tool first sleeps as many seconds as it says; <bin>/lose-<tool> (or lose-<tool>-<first
  // argument>) makes its next run do its work and then fail saying what the file says (its
  // answer lost), once.
  fs::path FaultyTools() {
    const fs::path bin = dir_ / "bin";
    fs::create_directories(bin);
    for (const char* tool : {"sbatch", "scontrol", "scancel", "squeue", "sinfo"}) {
      const fs::path p = bin / tool;
      std::ofstream(p) << fmt::format(
          "#!/bin/sh\n"
          "d='{0}'; t={1}\n"
          "echo \"$t $*\" >> \"$d/calls.log\"\n"
          "if [ -e \"$d/fail-$t-$1\" ]; then cat \"$d/fail-$t-$1\" >&2; exit 1; fi\n"
          "if [ -e \"$d/slow-$t\" ]; then sleep \"$(cat \"$d/slow-$t\")\"; fi\n"
          "for f in \"$d/lose-$t\" \"$d/lose-$t-$1\"; do\n"
          "  [ -e \"$f\" ] || continue\n"
          "  /usr/bin/$t \"$@\" >/dev/null 2>&1; cat \"$f\" >&2; rm -f \"$f\"; exit 1\n"
          "done\n"
          "exec /usr/bin/$t \"$@\"\n",
          bin.string(), tool);
      ::chmod(p.c_str(), 0755);
    }
    old_path_ = ::getenv("PATH");
    ::setenv("PATH", (bin.string() + ":" + old_path_).c_str(), 1);
    return bin;
  }
  static void Put(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  // An sbatch in FaultyTools' `bin` that refuses a job while `most` jobs are queued, in
  // Slurm's words for a user's MaxSubmitJobs (as MaxSubmitJobsPerUser does).
  static void SubmitLimit(const fs::path& bin, int most) {
    Put(bin / "sbatch",
        fmt::format("#!/bin/sh\n"
                    "n=$(/usr/bin/squeue -h -t PD,R,CG,CF -o %i | wc -l)\n"
                    "if [ \"$n\" -ge {} ]; then\n"
                    "  echo 'sbatch: error: QOSMaxSubmitJobPerUserLimit' >&2\n"
                    "  echo 'sbatch: error: Batch job submission failed: Job violates "
                    "accounting/QOS policy (job submit limit, user'\\''s size and/or time "
                    "limits)' >&2; exit 1\n"
                    "fi\n"
                    "exec /usr/bin/sbatch \"$@\"\n",
                    most));
  }
  // Jobs 1, 2 and 3 (`sleep 300`) prepared on `x` (opened after FaultyTools) under a submit
  // limit of 2 jobs (SubmitLimit): 1 and 2 held in Slurm, as `x`'s snapshot shows, 3 refused.
  // The Slurm ids of 1 and 2 (0 with a failure recorded).
  std::pair<int64_t, int64_t> TwoHeldOneRefused(SlurmExecutor& x) {
    SubmitLimit(dir_ / "bin", 2);
    for (int job : {1, 2, 3}) Prepared(x, Spec(job, {"sleep", "300"}));
    const int64_t held1 = x.SlurmId(JobId(1)), held2 = x.SlurmId(JobId(2));
    EXPECT_EQ(x.SlurmId(JobId(3)), 0);  // refused: the limit
    const bool shown = testing::WaitFor(
        [&] {
          return x.EngineState(JobId(1)).find("PENDING") != std::string::npos &&
                 x.EngineState(JobId(2)).find("PENDING") != std::string::npos;
        },
        30s);
    if (held1 == 0 || held2 == 0 || !shown) {
      ADD_FAILURE() << "not both held: " << held1 << " " << held2;
      return {0, 0};
    }
    return {held1, held2};
  }
  // This test's cluster brought up again with a 3 s `setting` script (Prolog, Epilog): jobs
  // stay a while before their batch script runs, or in COMPLETING after they end.
  bool ClusterWithSlowScript(const std::string& setting) {
    const fs::path script = dir_ / (setting + ".sh");
    Put(script, "#!/bin/sh\nsleep 3\n");
    ::chmod(script.c_str(), 0755);
    cluster_.reset();
    cluster_ = std::make_unique<testing::SlurmCluster>(1, 1, setting + "=" + script.string());
    EXPECT_TRUE(cluster_->up()) << cluster_->error();
    return cluster_->up();
  }
  // Whether the batch script of `spec`'s attempt has started (its banner in output.log).
  // Slurm says RUNNING before (a loaded slurmd, a prolog), and a kill sent then may end the
  // run another way (the script ends itself at its start, TIRESIAS_KILLED) than the CANCELLED
  // a test of a running script's kill looks for.
  static bool ScriptStarted(const LaunchSpec& spec) {
    return testing::ReadAll(fs::path(spec.job_dir) / "output.log")
               .find(fmt::format("==== tiresias: job {} attempt {} started", spec.job.value(),
                                 spec.attempt)) != std::string::npos;
  }
  // `spec` (job 1) prepared and launched on `x`, and running in Slurm (as `x`'s snapshot
  // shows too; its script started): its Slurm job id, and its run in `ref` if given (0 with a
  // failure recorded when it did not run).
  int64_t Running(SlurmExecutor& x, const LaunchSpec& spec, ProcessRef* ref = nullptr) {
    x.Prepare(spec);
    EXPECT_TRUE(x.Drain(30s));
    auto launched = x.Launch(spec);
    if (!launched.ok()) {
      ADD_FAILURE() << launched.status().message();
      return 0;
    }
    if (ref) *ref = launched->ref;
    const int64_t sid = x.SlurmId(JobId(1));
    // Running, the executor's own snapshot says so too, and its batch script has started.
    if (!testing::WaitFor(
            [&] {
              return Squeue(sid, "%T") == "RUNNING" &&
                     x.EngineState(JobId(1)).find("RUNNING") != std::string::npos &&
                     ScriptStarted(spec);
            },
            30s)) {
      ADD_FAILURE() << "not running: " << Squeue(sid, "%T %r");
      return 0;
    }
    return sid;
  }
  // Job 1 (`sleep 300`, attempt 0) running (Running).
  int64_t RunningSleep(SlurmExecutor& x) { return Running(x, Spec(1, {"sleep", "300"})); }
  // Job 1 (`sleep 60`, attempt 0) prepared, launched and running on `x` (its snapshot says
  // so, polled meanwhile; its script started), then killed (SIGKILL) while `scontrol requeuehold`
  // cannot reach slurmctld (<bin>/fail-scontrol-requeuehold, left in place): its run (nullopt with
  // a failure recorded).
  std::optional<ProcessRef> KilledWithoutItsRequeue(SlurmExecutor& x, const fs::path& bin) {
    const LaunchSpec spec = Spec(1, {"sleep", "60"});
    Prepared(x, spec);
    auto launched = x.Launch(spec);
    if (!launched.ok()) {
      ADD_FAILURE() << launched.status().message();
      return std::nullopt;
    }
    if (!testing::WaitFor(
            [&] {
              (void)x.Poll();
              return x.EngineState(JobId(1)).find("RUNNING") != std::string::npos &&
                     ScriptStarted(spec);
            },
            30s)) {
      ADD_FAILURE() << "not running: " << x.EngineState(JobId(1));
      return std::nullopt;
    }
    Put(bin / "fail-scontrol-requeuehold",
        "scontrol: error: Unable to contact slurm controller (connect failure)\n");
    if (Status st = x.Signal(launched->ref, SIGKILL); !st.ok()) {
      ADD_FAILURE() << st.message();
      return std::nullopt;
    }
    return launched->ref;
  }
  // Slurm requeues its job `sid` by itself (`scontrol requeue`, as after a node failure): `x`
  // reports the run lost (not cancelled).
  void Requeue(SlurmExecutor& x, int64_t sid) {
    ASSERT_EQ(cluster_->Sh(fmt::format("scontrol requeue {}", sid)).rc, 0);
    auto end = NextExit(x);
    ASSERT_TRUE(end);
    EXPECT_TRUE(end->lost) << end->reason;
    EXPECT_FALSE(end->cancelled);
  }
  // `spec` launched on `x` once it can be (a fresh Slurm job may still be being submitted),
  // polling meanwhile (an exit reported then is a failure): the launch, or the last refusal
  // after 30 s.
  static StatusOr<Launched> LaunchWhenReady(SlurmExecutor& x, const LaunchSpec& spec) {
    StatusOr<Launched> launched = Unavailable("not tried");
    (void)testing::WaitFor(
        [&] {
          for (const ExitInfo& e : x.Poll()) ADD_FAILURE() << "an exit reported: " << e.reason;
          launched = x.Launch(spec);
          return launched.ok();
        },
        30s);
    return launched;
  }

  fs::path dir_;
  std::unique_ptr<testing::SlurmCluster> cluster_;
  std::string old_path_;
  int throwaway_ = 100;
};

}  // namespace tiresias
