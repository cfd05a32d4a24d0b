// The core's eligibility and requeue calls, narrated on tiny clusters: a held job is out of
// every order (the job behind it starts), keeps its service, and waits for its turn again
// when released; a requeued job stops like a preempted one (not counted as a preemption) and
// the next pass decides again; a stopped job that completed its work finishes while waiting.
// Units: ms; service in GPU-ms.
#include <gtest/gtest.h>

#include <memory>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

std::unique_ptr<Scheduler> Make(const std::string& policy, const std::vector<std::string>& opts,
                                int gpus) {
  auto p = MakeOrderingPolicy(policy, opts, TestFiles());
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
  return std::make_unique<Scheduler>(*Topology::Create(1, 1, gpus), std::move(*p), std::move(*pl));
}

TEST(Eligibility, AHeldJobIsSkippedAndWaitsItsTurnAgainWhenReleased) {
  // fifo on 1 GPU: jobs 1, 2, 3 submitted at 0, 1, 2 ms. Job 1 runs; job 2 is held at 5 ms,
  // so when job 1 ends at 10 ms job 3 starts, although it came later. Released at 12 ms, job 2
  // waits behind nothing but the running job 3, and starts when job 3 ends at 20 ms.
  auto s = Make("fifo", {}, 1);
  ASSERT_TRUE(s->Submit({.id = JobId(1), .gpus = 1, .submit = 0}, 0).ok());
  ASSERT_TRUE(s->Submit({.id = JobId(2), .gpus = 1, .submit = 1}, 1).ok());
  ASSERT_TRUE(s->Submit({.id = JobId(3), .gpus = 1, .submit = 2}, 2).ok());
  EXPECT_EQ(Brief(s->Schedule(2)), "start 1");
  ASSERT_TRUE(s->SetEligible(JobId(2), false, 5).ok());
  EXPECT_EQ(s->Find(JobId(2))->state, JobState::kHeld);
  EXPECT_EQ(s->num_waiting(), 1u);  // job 3 only
  EXPECT_EQ(s->Explain(JobId(2), 5).reasons.front(), "not eligible to run until released (held)");
  ASSERT_TRUE(s->Finish(JobId(1), 10).ok());
  EXPECT_EQ(Brief(s->Schedule(10)), "start 3");
  ASSERT_TRUE(s->SetEligible(JobId(2), true, 12).ok());
  EXPECT_EQ(Brief(s->Schedule(12)), "");  // the GPU is taken; fifo does not preempt
  ASSERT_TRUE(s->Finish(JobId(3), 20).ok());
  EXPECT_EQ(Brief(s->Schedule(20)), "start 2");
}

TEST(Eligibility, HeldJobsKeepTheirServiceAndCanBeCancelled) {
  // las on 1 GPU. Job 1 runs 0..100 ms (100 GPU-ms), then job 2 (0 service) arrives and
  // preempts it. Held at 150 ms and released at 300 ms, job 1 still has its 100 GPU-ms, while
  // job 2 has run 100..300 ms (200 GPU-ms): job 1, with less service, preempts job 2.
  auto s = Make("las", {}, 1);
  ASSERT_TRUE(s->Submit({.id = JobId(1), .gpus = 1, .submit = 0}, 0).ok());
  EXPECT_EQ(Brief(s->Schedule(0)), "start 1");
  ASSERT_TRUE(s->Submit({.id = JobId(2), .gpus = 1, .submit = 100}, 100).ok());
  EXPECT_EQ(Brief(s->Schedule(100)), "preempt 1, start 2");
  ASSERT_TRUE(s->SetEligible(JobId(1), false, 150).ok());
  ASSERT_TRUE(s->SetEligible(JobId(1), true, 300).ok());
  EXPECT_EQ(s->Find(JobId(1))->AttainedAt(300), 100);
  EXPECT_EQ(Brief(s->Schedule(300)), "preempt 2, start 1");
  // A held job is cancelled like a waiting one; a running one cannot be held.
  EXPECT_EQ(s->SetEligible(JobId(1), false, 310).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(s->SetEligible(JobId(2), false, 310).ok());
  ASSERT_TRUE(s->Cancel(JobId(2), 320).ok());
  EXPECT_EQ(s->Find(JobId(2))->state, JobState::kCancelled);
  EXPECT_EQ(s->SetEligible(JobId(2), true, 330).code(), StatusCode::kFailedPrecondition);
}

TEST(Requeue, ARequeuedJobStopsAndTheNextPassDecidesAgain) {
  // fifo on 1 GPU: job 1 runs from 0; job 2 waits. Requeued at 50 ms, job 1 (submitted first)
  // is still first in fifo order, so the next pass starts it again: a requeue restarts a job,
  // it does not demote it. Not counted as a preemption but as a restart (the same call
  // replays a trace's failed attempts: src/policy/scheduler_scenario_test.cc, Requeue.*).
  auto s = Make("fifo", {}, 1);
  ASSERT_TRUE(s->Submit({.id = JobId(1), .gpus = 1, .submit = 0}, 0).ok());
  ASSERT_TRUE(s->Submit({.id = JobId(2), .gpus = 1, .submit = 1}, 1).ok());
  EXPECT_EQ(Brief(s->Schedule(1)), "start 1");
  ASSERT_TRUE(s->Requeue(JobId(1), 50).ok());
  EXPECT_EQ(s->Find(JobId(1))->state, JobState::kPending);
  EXPECT_EQ(s->Find(JobId(1))->preemptions, 0);
  EXPECT_EQ(s->Find(JobId(1))->restarts, 1);
  EXPECT_EQ(Brief(s->Schedule(50)), "start 1");
  EXPECT_EQ(s->Find(JobId(1))->starts, 2);
  EXPECT_EQ(s->Requeue(JobId(2), 60).code(), StatusCode::kFailedPrecondition);
}

TEST(FinishWhileWaiting, AJobStoppedAfterItsWorkWasDoneFinishesWithTheServiceItHad) {
  // las on 1 GPU. Job 1 runs 0..100 ms; job 2 arrives at 100 and preempts it. Job 1's process
  // completed its work during its grace: the daemon finishes it while it waits. It leaves
  // the order (job 3 is next once job 2 ends), keeps its 100 GPU-ms and never starts again.
  // A held job finishes the same way; a finished one cannot finish twice.
  auto s = Make("las", {}, 1);
  ASSERT_TRUE(s->Submit({.id = JobId(1), .gpus = 1, .submit = 0}, 0).ok());
  EXPECT_EQ(Brief(s->Schedule(0)), "start 1");
  ASSERT_TRUE(s->Submit({.id = JobId(2), .gpus = 1, .submit = 100}, 100).ok());
  EXPECT_EQ(Brief(s->Schedule(100)), "preempt 1, start 2");
  ASSERT_TRUE(s->Finish(JobId(1), 105).ok());
  const Job* j1 = s->Find(JobId(1));
  EXPECT_EQ(j1->state, JobState::kFinished);
  EXPECT_EQ(j1->end, 105);
  EXPECT_EQ(j1->AttainedAt(105), 100);
  EXPECT_EQ(s->num_waiting(), 0u);
  ASSERT_TRUE(s->Submit({.id = JobId(3), .gpus = 1, .submit = 110}, 110).ok());
  ASSERT_TRUE(s->SetEligible(JobId(3), false, 120).ok());
  ASSERT_TRUE(s->Finish(JobId(3), 130).ok());
  EXPECT_EQ(s->Find(JobId(3))->state, JobState::kFinished);
  ASSERT_TRUE(s->Finish(JobId(2), 200).ok());
  EXPECT_EQ(Brief(s->Schedule(200)), "");
  EXPECT_EQ(s->num_running(), 0u);
  EXPECT_EQ(s->Finish(JobId(1), 210).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace tiresias
