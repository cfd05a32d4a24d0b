// The Slurm executor and a slow Epilog: a run whose batch script ended by itself stays
// COMPLETING while the epilog runs, possibly past serve's grace, which then sends its kill.
// Slurm's own record of how and when the script ended is the run's end, not that kill. On a
// real one-node Slurm cluster with a 3 s Epilog (tests/slurm_executor_fixture.h).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <optional>
#include <string>

#include "slurm_executor_fixture.h"
#include "test_util.h"

namespace tiresias {
namespace {

using testing::WaitFor;

TEST_F(SlurmExecutorTest, ARunKilledWhileItsEpilogRunsEndsWithItsOwnExitAndEndTime) {
  // Regression (session 48): a preempted run checkpointed and exited 0 on SIGTERM, but its
  // Slurm job stayed COMPLETING (the epilog) past the grace; serve's kill then made the run
  // read "killed by signal 9" (no checkpoint, its work counted lost), and its end was taken as
  // the time the epilog ended.
  ASSERT_TRUE(ClusterWithSlowScript("Epilog"));
  auto x = Open("epilog", 250ms, 3s);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sh", "-c", "trap 'exit 0' TERM; sleep 300 & wait"});
  ProcessRef ref;
  const int64_t sid = Running(*x, spec, &ref);
  ASSERT_NE(sid, 0);
  ASSERT_TRUE(x->Signal(ref, SIGTERM).ok());
  // The script exits 0 at once; its Slurm job is COMPLETING for the epilog's 3 s. The kill
  // comes then, as serve's at the end of a grace shorter than the epilog.
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "ended while COMPLETING: " << e.reason;
        return x->EngineState(JobId(1)).find("COMPLETING") != std::string::npos;
      },
      30s))
      << Squeue(sid, "%T %r");
  const auto wall_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  // As serve's loop: the exits polled (none yet: COMPLETING), then the kill.
  for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "ended while COMPLETING: " << e.reason;
  const int64_t killed_at = wall_ms();
  ASSERT_TRUE(x->Signal(ref, SIGKILL).ok());
  auto end = NextExit(*x);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->exit_code, 0) << end->Describe();
  EXPECT_EQ(end->signal, 0) << end->Describe();
  EXPECT_FALSE(end->lost) << end->Describe();
  EXPECT_FALSE(end->cancelled) << end->Describe();
  ASSERT_TRUE(end->ended_wall_ms) << end->Describe();
  // Slurm's end time (whole seconds): when the script exited, before the kill and the epilog.
  EXPECT_LE(*end->ended_wall_ms, killed_at + 1'000);
}

}  // namespace
}  // namespace tiresias
