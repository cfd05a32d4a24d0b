// The Slurm executor against what a job's owner can do to its Slurm job behind tiresias's
// back (scontrol update): a changed comment never makes a running job look vanished (it ran
// twice). On a real one-node Slurm cluster (tests/slurm_executor_fixture.h).
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
  // running. The recorded id is the job's identity (its batch script tells a reissued id);
  // the comment is a hint. Fails without the fix: the lost exit is reported within a poll.
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
  // And it is still stopped as ours.
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGTERM).ok());
  const std::optional<ExitInfo> end = NextExit(*x);
  ASSERT_TRUE(end) << Squeue(sid, "%T %r");
  EXPECT_FALSE(end->lost) << end->Describe();
  EXPECT_FALSE(end->cancelled) << end->Describe();
}

}  // namespace
}  // namespace tiresias
