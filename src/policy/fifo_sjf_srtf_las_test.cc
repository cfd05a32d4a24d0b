// Narrated scenario tests of the single-order policies, driving the Scheduler directly on
// tiny clusters at explicit millisecond times: strict FIFO head-of-line blocking vs backfill,
// sjf (fewest GPUs first, no preemption), srtf vs srsf (remaining time vs remaining GPU-time),
// and las vs las2d (attained time vs attained GPU-time).
// Units: times in ms, service in GPU-ms.
#include <gtest/gtest.h>

#include "policy_scenario_fixture.h"

namespace tiresias::policy_scenario_test {
namespace {

TEST(FifoScenario, StrictFifoHeadOfLineBlocksBackfillDoesNot) {
  for (const char* name : {"fifo", "fifo-backfill"}) {
    const std::string policy = name;
    SCOPED_TRACE(policy);
    auto s = Make(policy, {});
    Submit(*s, J(1, 2, 0), 0);
    EXPECT_EQ(Str(s->Schedule(0)), "start 1");  // 2 of 4 GPUs free
    Submit(*s, J(2, 4, 1000), 1000);
    EXPECT_EQ(Str(s->Schedule(1000)), "");  // needs 4, only 2 free
    Submit(*s, J(3, 1, 2000), 2000);
    // fifo stops at job 2 (head of line); fifo-backfill skips it and starts job 3 on 1 of the
    // 2 free GPUs.
    EXPECT_EQ(Str(s->Schedule(2000)), policy == "fifo" ? "" : "start 3");
    // Job 1 ends at 3000. fifo: all 4 GPUs free, job 2 starts and nothing is left for job 3.
    // fifo-backfill: job 3 holds 1 GPU, job 2 still cannot fit the 3 free ones.
    ASSERT_TRUE(s->Finish(JobId(1), 3000).ok());
    EXPECT_EQ(Str(s->Schedule(3000)), policy == "fifo" ? "start 2" : "");
  }
}

TEST(SjfScenario, FewestGpusFirstAndNoPreemption) {
  auto s = Make("sjf", {});
  Submit(*s, J(1, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  Submit(*s, J(2, 4, 1000), 1000);
  Submit(*s, J(3, 2, 1000), 1000);
  Submit(*s, J(4, 1, 1000), 1000);
  EXPECT_EQ(Str(s->Schedule(1000)), "");  // non-preemptive: all wait for job 1
  EXPECT_EQ(Order(*s), "4 3 2");          // 1 GPU, 2 GPUs, 4 GPUs
  ASSERT_TRUE(s->Finish(JobId(1), 5000).ok());
  // 4 free: job 4 (1) and job 3 (2) start, 1 GPU left, job 2 (4) waits.
  EXPECT_EQ(Str(s->Schedule(5000)), "start 4, start 3");
}

TEST(SrtfScenario, ShorterArrivalPreemptsLongerRunningJob) {
  auto s = Make("srtf", {}, 1);
  Submit(*s, J(1, 1, 0, 10000), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  // At 2000 job 1 has 10000 - 2000 = 8000 ms left; job 2 needs 3000 < 8000.
  Submit(*s, J(2, 1, 2000, 3000), 2000);
  EXPECT_EQ(Str(s->Schedule(2000)), "preempt 1, start 2");
  EXPECT_EQ(*s->Find(JobId(1))->RemainingAt(2000), 8000);
  // A job with 9000 ms left does not preempt job 2 (3000 left) nor pass job 1 (8000).
  Submit(*s, J(3, 1, 2000, 9000), 2000);
  EXPECT_EQ(Str(s->Schedule(2000)), "");
  EXPECT_EQ(Order(*s), "1 3");
}

// Job 1: 4 GPUs x 4000 ms from 0; at 1000 it has 3000 ms = 12000 GPU-ms left. Job 2 arrives
// at 1000 with 2 GPUs x 5000 ms = 10000 GPU-ms.
std::string RemainingScenario(const std::string& policy) {
  auto s = Make(policy, {});
  Submit(*s, J(1, 4, 0, 4000), 0);
  s->Schedule(0);
  Submit(*s, J(2, 2, 1000, 5000), 1000);
  return Str(s->Schedule(1000));
}

TEST(SrtfScenario, SrtfComparesTimeSrsfComparesGpuTime) {
  // srtf: 3000 ms < 5000 ms, job 1 keeps running and job 2 waits.
  EXPECT_EQ(RemainingScenario("srtf"), "");
  // srsf: 10000 GPU-ms < 12000 GPU-ms: job 2 goes first (budget 4 - 2 = 2 < 4 for job 1).
  EXPECT_EQ(RemainingScenario("srsf"), "preempt 1, start 2");
}

// Job 1 (4 GPUs) runs 0..1000: 1000 ms executed, 4000 GPU-ms attained. Job 2 (1 GPU) and
// job 4 (4 GPUs) arrive at 1000 with nothing attained; job 2 sorts first (submit, then id)
// and preempts job 1; job 4 does not fit the 3 GPUs left. At 3000 job 2 has 2000 ms = 2000
// GPU-ms. Cancelling job 4 then triggers a pass.
std::string LasScenario(const std::string& policy) {
  auto s = Make(policy, {});
  Submit(*s, J(1, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  Submit(*s, J(2, 1, 1000), 1000);
  Submit(*s, J(4, 4, 1000), 1000);
  EXPECT_EQ(Str(s->Schedule(1000)), "preempt 1, start 2");
  EXPECT_TRUE(s->Cancel(JobId(4), 3000).ok());
  return Str(s->Schedule(3000));
}

TEST(LasScenario, LasOrdersByTimeLas2dByGpuTime) {
  // las: job 1 (1000 ms) < job 2 (2000 ms): job 1 takes all 4 GPUs back.
  EXPECT_EQ(LasScenario("las"), "preempt 2, start 1");
  // las2d: job 2 (2000 GPU-ms) < job 1 (4000 GPU-ms): job 2 keeps running, job 1 cannot fit
  // the 3 GPUs left.
  EXPECT_EQ(LasScenario("las2d"), "");
}

}  // namespace
}  // namespace tiresias::policy_scenario_test
