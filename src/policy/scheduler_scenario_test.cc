// Narrated scenario tests of the Scheduler's bookkeeping under the ordering policies, on tiny
// clusters at explicit millisecond times: a failed attempt requeued (keeping its service,
// paying the restore), rejection of jobs that can never fit, restore overhead on resume (and
// cut short by a preemption), a preempted job's GPUs not handed out twice, and determinism.
// Units: times in ms, service in GPU-ms; thresholds are given to the policies in GPU-seconds.
#include <gtest/gtest.h>

#include "policy_scenario_fixture.h"

namespace tiresias::policy_scenario_test {
namespace {

TEST(Requeue, AFailedAttemptWaitsAgainKeepingItsServiceAndPaysTheRestore) {
  // One GPU, las (least attained service first), 5 s restore. A starts at 0; B arrives at
  // 10 s and, having attained nothing, preempts A (10 s attained). At 40 s B's attempt fails
  // (30 s attained): it waits again with its 30 s, so A (10 s) is ahead and resumes, paying
  // the restore: progress from 45 s. A failed attempt is a restart, not a preemption.
  auto s = Make("las", {}, 1, SchedulerOptions{.restore_overhead = 5000});
  Submit(*s, J(1, 1, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  Submit(*s, J(2, 1, 10'000), 10'000);
  EXPECT_EQ(Str(s->Schedule(10'000)), "preempt 1, start 2");
  ASSERT_TRUE(s->Requeue(JobId(2), 40'000).ok());
  EXPECT_EQ(Str(s->Schedule(40'000)), "start 1");
  const Job* a = s->Find(JobId(1));
  EXPECT_EQ(a->progress_start, 45'000);
  EXPECT_EQ(a->overhead, 5'000);
  const Job* b = s->Find(JobId(2));
  EXPECT_EQ(b->state, JobState::kPending);
  EXPECT_EQ(b->AttainedAt(40'000), 30'000);
  EXPECT_EQ(b->restarts, 1);
  EXPECT_EQ(b->preemptions, 0);
  // Only a running job can fail an attempt.
  EXPECT_EQ(s->Requeue(JobId(2), 40'000).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Requeue(JobId(9), 40'000).code(), StatusCode::kNotFound);
}

TEST(Rejection, TooLargeJobRejectedWithReasonAndSchedulerKeepsWorking) {
  auto s = Make("dlas", {});
  Status st = s->Submit(J(1, 8, 0), 0);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("never fits"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("asks for 8 GPUs but the cluster has 4"), std::string::npos)
      << st.message();
  ASSERT_NE(s->Find(JobId(1)), nullptr);
  EXPECT_EQ(s->Find(JobId(1))->state, JobState::kRejected);
  EXPECT_EQ(s->Submit(J(2, 0, 0), 0).code(), StatusCode::kInvalidArgument);  // 0 GPUs
  EXPECT_EQ(s->Submit(J(1, 1, 0), 0).code(), StatusCode::kInvalidArgument);  // duplicate id
  Submit(*s, J(3, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 3");
  EXPECT_EQ(s->num_waiting(), 0u);
  EXPECT_EQ(s->Explain(JobId(1), 0).state, JobState::kRejected);
  // An oracle policy rejects a job without a duration.
  auto o = Make("srtf", {});
  EXPECT_EQ(o->Submit(J(1, 1, 0), 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(o->Find(JobId(1))->state, JobState::kRejected);
}

TEST(RestoreOverhead, ResumedJobProgressesOnlyAfterRestore) {
  // 3 queues: [0, 1), [1, 10), [10, inf) GPU-s. Restore costs 5000 ms.
  auto s = Make("dlas", {"thresholds=1,10", "queue_order=fifo", "promote_knob=0"}, 4,
                SchedulerOptions{.restore_overhead = 5000});
  Submit(*s, J(1, 4, 0), 0);
  auto a = s->Schedule(0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].progress_start, 0);  // a first start pays nothing
  s->Schedule(250);                   // job 1 reaches 1000 GPU-ms: Q2
  Submit(*s, J(2, 4, 1000), 1000);    // Q1 job: preempts job 1 at 4000 GPU-ms
  EXPECT_EQ(Str(s->Schedule(1000)), "preempt 1, start 2");
  EXPECT_EQ(s->Find(JobId(1))->AttainedAt(1000), 4000);
  ASSERT_TRUE(s->Finish(JobId(2), 1100).ok());
  a = s->Schedule(1100);
  ASSERT_EQ(Str(a), "start 1");
  // Resumed at 1100: progress starts 5000 ms later, at 6100.
  EXPECT_EQ(a[0].progress_start, 6100);
  EXPECT_NE(a[0].reason().find("restore"), std::string::npos) << a[0].reason();
  const Job* j1 = s->Find(JobId(1));
  EXPECT_EQ(j1->progress_start, 6100);
  EXPECT_EQ(j1->overhead, 5000);
  EXPECT_EQ(j1->AttainedAt(3000), 4000);  // no service during restore
  EXPECT_EQ(j1->AttainedAt(6100), 4000);
  EXPECT_EQ(j1->AttainedAt(7100), 8000);  // 4000 + 4 x 1000
  // Q2 ends at 10000 GPU-ms: 6000 more from 6100 on 4 GPUs -> 6100 + 1500 = 7600.
  EXPECT_EQ(s->NextWakeup(), 7600);
  // A Q1 job preempts job 1 at 2000, mid-restore: only 2000 - 1100 = 900 ms of overhead is
  // charged, and it held GPUs 1000 (0..1000) + 900 (1100..2000) ms.
  Submit(*s, J(3, 4, 2000), 2000);
  EXPECT_EQ(Str(s->Schedule(2000)), "preempt 1, start 3");
  j1 = s->Find(JobId(1));  // the job table may have grown
  EXPECT_EQ(j1->overhead, 900);
  EXPECT_EQ(j1->held, 1900);
  EXPECT_EQ(j1->executed, 1000);
  EXPECT_EQ(j1->AttainedAt(2000), 4000);
}

TEST(Preemption, GpusOfAPreemptedJobAreNotHandedOutTwice) {
  auto s = Make("dlas", {"thresholds=1", "queue_order=fifo", "promote_knob=0"});
  Submit(*s, J(1, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");  // n0:0-3; in Q2 from 1000 / 4 = 250 on
  s->Schedule(250);
  // Job 2 (2 GPUs, Q1) preempts job 1 and takes the lowest free GPUs: n0:0-1.
  Submit(*s, J(2, 2, 1000), 1000);
  auto a = s->Schedule(1000);
  ASSERT_EQ(Str(a), "preempt 1, start 2");
  EXPECT_EQ(a[1].alloc.str(), "n0:0-1");
  EXPECT_EQ(s->cluster().total_free(), 2);
  // Job 3 (2 GPUs, Q1) fits the 2 GPUs left: it must get n0:2-3, not job 2's.
  Submit(*s, J(3, 2, 1100), 1100);
  a = s->Schedule(1100);
  ASSERT_EQ(Str(a), "start 3");
  EXPECT_EQ(a[0].alloc.str(), "n0:2-3");
  EXPECT_EQ(s->cluster().free_mask(0), 0u);
}

// A fixed script of submits, finishes and timers; returns every action as text.
std::string Script(const std::string& policy, const std::vector<std::string>& opts) {
  auto s = Make(policy, opts, 4, SchedulerOptions{.restore_overhead = 700});
  std::string log;
  auto run = [&](Time t) {
    for (const auto& a : s->Schedule(t)) {
      log += fmt::format("{} {} {} {} {} {};", t, ToString(a.kind), a.job.value(), a.alloc.str(),
                         a.progress_start, a.reason());
    }
  };
  for (int i = 0; i < 12; ++i) {
    Time t = i * 300;
    while (s->NextWakeup() < t) run(s->NextWakeup());
    Submit(*s, J(i, 1 + (i * 7) % 4, t, 1000 + (i * 389) % 2500), t);
    if (i % 3 == 2) {
      for (const Job& j : s->jobs()) {
        if (j.running()) {
          EXPECT_TRUE(s->Finish(j.spec.id, t).ok());
          break;
        }
      }
    }
    run(t);
  }
  for (Time t = 3600; t < 20000 && s->NextWakeup() != kNever; t = s->NextWakeup()) run(t);
  return log;
}

TEST(Determinism, SameInputSameActions) {
  for (const auto& [policy, opts] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"dlas", {"thresholds=1,3", "promote_knob=1"}}, {"las2d", {}}, {"srsf", {}}}) {
    SCOPED_TRACE(policy);
    std::string first = Script(policy, opts);
    EXPECT_FALSE(first.empty());
    EXPECT_EQ(first, Script(policy, opts));
  }
}

}  // namespace
}  // namespace tiresias::policy_scenario_test
