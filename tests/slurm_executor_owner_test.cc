// The Slurm executor against what a job's owner can do to its Slurm job behind tiresias's
// back (scontrol update, scontrol release), and Slurm's own time limit: a changed comment
// never makes a running job look vanished (it ran twice); a release of a held job never
// launched runs nothing; Slurm's TIMEOUT ends the run timed out, not failed. On a real
// one-node Slurm cluster (tests/slurm_executor_fixture.h).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>

#include "exec/slurm_batch.h"
#include "slurm_executor_fixture.h"
#include "test_util.h"

namespace tiresias {
namespace {

using testing::WaitFor;

TEST_F(SlurmExecutorTest, ARunningJobWhoseOwnerChangedItsCommentStaysOursAndRunsOnce) {
  // Regression (exploratory test): `scontrol update JobId=S Comment=mine` on a running job
  // made the executor read it as vanished ("Slurm no longer knows job S"): the run was
  // reported lost and a fresh Slurm job ran the job a second time while the first kept
  // running; a restarted serve did not adopt it either. The recorded id is the job's identity
  // (its batch script tells a reissued id); the comment is a hint. Fails without the fix:
  // the lost exit is reported within a poll.
  auto x = Open("comment", 250ms);
  ASSERT_TRUE(x);
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol update JobId={} Comment=mine", sid)).rc, 0);
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%k") == "mine"; }, 10s)) << Squeue(sid, "%k");
  // Many snapshots since (one every 250 ms): no end, the same Slurm job, still running.
  const auto until = std::chrono::steady_clock::now() + 4s;
  while (std::chrono::steady_clock::now() < until) {
    for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "an exit reported: " << e.Describe();
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(x->Drain(30s));
  EXPECT_EQ(x->SlurmId(JobId(1)), sid);
  EXPECT_NE(x->EngineState(JobId(1)).find("RUNNING"), std::string::npos)
      << x->EngineState(JobId(1));
  // No second Slurm job for it.
  EXPECT_EQ(testing::Trimmed(cluster_->Sh("squeue -h -t all -o %i").out), std::to_string(sid));
  // After a restart too (Adopt finds it by its recorded id, not its comment), and it is
  // still stopped as ours.
  x.reset();
  auto y = Open("comment", 250ms);
  ASSERT_TRUE(y);
  const ProcessRef ref{.pid = static_cast<int>(sid), .start_ticks = 0};
  ASSERT_TRUE(y->Adopt(JobId(1), 0, ref, Spec(1, {"sleep", "300"}).job_dir));
  ASSERT_TRUE(y->Signal(ref, SIGTERM).ok());
  const std::optional<ExitInfo> end = NextExit(*y);
  ASSERT_TRUE(end) << Squeue(sid, "%T %r");
  EXPECT_FALSE(end->lost) << end->Describe();
  EXPECT_FALSE(end->cancelled) << end->Describe();
}

TEST_F(SlurmExecutorTest, AnOutsideReleaseOfAHeldJobNeverLaunchedRunsNothing) {
  // Regression (exploratory test): the owner's `scontrol release` of the held Slurm job of a
  // job tiresias had not launched yet (an afterok dependent, a `submit -H` job) ran its
  // command, and nothing of it was journalled. Its attempt file said attempt 0 only; it now
  // says stopped until a launch writes it. Fails without the fix: output.log has the
  // command's banner.
  // Polled only after each batch of commands: the executor would hold the released job
  // again at its next snapshot, which here must not come before Slurm starts it.
  auto x = Open("release");
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"echo", "RAN-THE-COMMAND"});
  Prepared(*x, spec);
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_GT(sid, 0);
  // The snapshot after the submission first: none comes after the release.
  ASSERT_TRUE(
      WaitFor([&] { return x->EngineState(JobId(1)).find("PENDING") != std::string::npos; }, 10s));
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol release {}", sid)).rc, 0);
  const fs::path log = fs::path(spec.job_dir) / "output.log";
  ASSERT_TRUE(WaitFor(
      [&] {
        (void)x->Poll();
        const std::string out = testing::ReadAll(log);
        return out.find("RAN-THE-COMMAND") != std::string::npos ||
               out.find("stopped before it started") != std::string::npos;
      },
      30s))
      << Squeue(sid, "%T %r");
  const std::string out = testing::ReadAll(log);
  EXPECT_EQ(out.find("RAN-THE-COMMAND"), std::string::npos) << out;
  EXPECT_NE(out.find("stopped before it started"), std::string::npos) << out;
}

TEST_F(SlurmExecutorTest, SlurmsOwnTimeLimitEndsTheRunTimedOutNotFailed) {
  // Regression (exploratory test): a run Slurm ended at a time limit of its own (`scontrol
  // update TimeLimit=1`, or `--sbatch-arg=--time=...`) ended the job "failed ... exit 143:
  // Slurm job N TIMEOUT". It is now reported timed out (the live scheduler ends the job
  // `timeout`). Fails without the fix: timed_out is false. (Slurm checks limits about every
  // 30 s: this takes 1-1.5 minutes.)
  auto x = Open("timeout", 500ms);
  ASSERT_TRUE(x);
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol update JobId={} TimeLimit=1", sid)).rc, 0);
  std::optional<ExitInfo> end;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : x->Poll()) end = e;
        return end.has_value();
      },
      150s))
      << Squeue(sid, "%T %r");
  EXPECT_TRUE(end->timed_out) << end->Describe();
  EXPECT_FALSE(end->lost) << end->Describe();
  EXPECT_FALSE(end->cancelled) << end->Describe();
  EXPECT_NE(end->reason.find("TIMEOUT"), std::string::npos) << end->Describe();
}

}  // namespace
}  // namespace tiresias
