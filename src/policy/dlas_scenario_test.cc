// Narrated scenario tests of dlas, driving the Scheduler directly on tiny clusters at explicit
// millisecond times: demotion exactly at the threshold (and where the public simulator is
// late), a late or interrupted start moving service and demotion, FIFO / running-first order
// inside a queue, PROMOTEKNOB promotion, thresholds taken from history quantiles (fixed, or
// learning from completions and moving waiting and running jobs), and the checks on
// threshold_quantiles.
// Units: times in ms, service in GPU-ms; thresholds are given to the policies in GPU-seconds.
#include <gtest/gtest.h>

#include "policy_scenario_fixture.h"

namespace tiresias::policy_scenario_test {
namespace {

TEST(DlasScenario, SetProgressStartMovesServiceAndDemotion) {
  // The daemon starts job 1 at 0, but a preempted process may hold the GPUs until its kill
  // deadline at 3000: progress is held until then. 10 GPU-s on 4 GPUs = 2500 ms of
  // progress, so demotion moves from 2500 to 3000 + 2500 = 5500.
  auto s = Make("dlas", {"thresholds=10", "queue_order=fifo", "promote_knob=0"});
  Submit(*s, J(1, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  EXPECT_EQ(s->NextWakeup(), 2500);
  ASSERT_TRUE(s->SetProgressStart(JobId(1), 3000, 0).ok());
  EXPECT_EQ(s->NextWakeup(), 5500);
  EXPECT_EQ(s->Find(JobId(1))->AttainedAt(1000), 0);
  // The holder exits early; the process really starts at 1500: demotion at 1500 + 2500 =
  // 4000, 4 x 500 = 2000 GPU-ms attained at 2000, and 1500 ms of overhead.
  ASSERT_TRUE(s->SetProgressStart(JobId(1), 1500, 1500).ok());
  EXPECT_EQ(s->NextWakeup(), 4000);
  EXPECT_EQ(s->Find(JobId(1))->AttainedAt(2000), 2000);
  EXPECT_EQ(s->Find(JobId(1))->overhead, 1500);
  EXPECT_FALSE(s->SetProgressStart(JobId(1), -1, 1500).ok());    // before its start
  EXPECT_FALSE(s->SetProgressStart(JobId(2), 3000, 1500).ok());  // unknown job
}

TEST(DlasScenario, InterruptedKeepsServiceUntilLastAliveAndNotTheDownTime) {
  // Job 1 (1 GPU) starts at 0 under a 60 GPU-s first queue. Its process vanishes while the
  // daemon is down; the daemon last knew it alive at 56 s and comes back at 100 s. The 56 GPU-s
  // it attained stay (it is 4 s from demotion, not 60), the 44 s it was down are overhead, and
  // progress counts again from 100 s: demotion at 104 s.
  auto s = Make("dlas", {"thresholds=60", "queue_order=fifo", "promote_knob=0"});
  Submit(*s, J(1, 1, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  EXPECT_EQ(s->NextWakeup(), 60'000);
  ASSERT_TRUE(s->Interrupted(JobId(1), 56'000, 100'000).ok());
  const Job& j = *s->Find(JobId(1));
  EXPECT_EQ(j.AttainedAt(100'000), 56'000);
  EXPECT_EQ(j.overhead, 44'000);
  EXPECT_EQ(s->NextWakeup(), 104'000);
  // The relaunch comes up at 100.5 s: its real start, as for any launch.
  ASSERT_TRUE(s->SetProgressStart(JobId(1), 100'500, 100'500).ok());
  EXPECT_EQ(j.AttainedAt(102'500), 58'000);
  EXPECT_EQ(j.overhead, 44'500);
  EXPECT_EQ(s->NextWakeup(), 104'500);
  EXPECT_EQ(j.queue, 0);
  s->Schedule(104'500);
  EXPECT_EQ(j.queue, 1) << "demoted after 60 GPU-s of service in all";

  // Last alive before its progress started (it never made any) keeps nothing; after `now`
  // is clamped to `now` (then nothing is lost either).
  Submit(*s, J(2, 1, 200'000), 200'000);
  s->Schedule(200'000);
  ASSERT_TRUE(s->Find(JobId(2))->running());
  ASSERT_TRUE(s->Interrupted(JobId(2), 150'000, 201'000).ok());
  EXPECT_EQ(s->Find(JobId(2))->AttainedAt(201'000), 0);
  EXPECT_EQ(s->Find(JobId(2))->overhead, 1'000);
  ASSERT_TRUE(s->Interrupted(JobId(2), 999'000, 202'000).ok());
  EXPECT_EQ(s->Find(JobId(2))->AttainedAt(202'000), 1'000);
  EXPECT_EQ(s->Find(JobId(2))->overhead, 1'000);
  EXPECT_EQ(s->Interrupted(JobId(3), 0, 202'000).code(), StatusCode::kNotFound);
  Submit(*s, J(3, 1, 202'000), 202'000);  // waiting until the next pass
  EXPECT_EQ(s->Interrupted(JobId(3), 0, 202'000).code(), StatusCode::kFailedPrecondition);
}

TEST(DlasScenario, DemotedExactlyAtThresholdThenPreemptedByQ1Job) {
  auto s = Make("dlas", {"thresholds=10", "queue_order=fifo",
                         "promote_knob=0"});  // Q1: [0, 10 GPU-s), Q2: beyond
  Submit(*s, J(1, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  // 10 GPU-s = 10000 GPU-ms on 4 GPUs: 10000 / 4 = 2500 ms.
  EXPECT_EQ(s->NextWakeup(), 2500);
  Submit(*s, J(2, 4, 1000), 1000);  // same queue, submitted later: waits behind job 1
  EXPECT_EQ(Str(s->Schedule(1000)), "");
  EXPECT_EQ(s->Find(JobId(1))->queue, 0);
  EXPECT_EQ(Str(s->Schedule(2499)), "");  // 9996 GPU-ms < 10000: still in Q1
  EXPECT_EQ(s->Find(JobId(1))->queue, 0);
  // At 2500 job 1 has 4 x 2500 = 10000 GPU-ms: demoted to Q2 (queue index 1); job 2, still
  // in Q1, now comes first and takes all 4 GPUs.
  EXPECT_EQ(Str(s->Schedule(2500)), "preempt 1, start 2");
  EXPECT_EQ(s->Find(JobId(1))->queue, 1);
  EXPECT_EQ(s->Find(JobId(1))->AttainedAt(2500), 10000);
  EXPECT_EQ(s->Find(JobId(1))->preemptions, 1);
  // Job 2 started at 2500 with 0 service: demoted at 2500 + 10000 / 4 = 5000.
  EXPECT_EQ(s->NextWakeup(), 5000);
}

TEST(DlasScenario, IsolatedFourGpuJobDemotedOnTimeUnlikeReference) {
  auto s = Make("dlas", {"thresholds=3250", "queue_order=fifo", "promote_knob=0"});
  Submit(*s, J(1, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  // Ours: 3250 GPU-s = 3,250,000 GPU-ms on 4 GPUs -> 812,500 ms = 812.5 s, exactly.
  // The public simulator (reference-results.md) sets its timer to floor((3250 - 0) / 4) = 812 s,
  // finds 4 x 812 = 3248 GPU-s < 3250 there, and next wakes at
  // 812 + floor((3250 - 812) / 4) = 812 + 609 = 1421 s: demoted 608.5 s late.
  EXPECT_EQ(s->NextWakeup(), 812500);
  s->Schedule(812499);
  EXPECT_EQ(s->Find(JobId(1))->queue, 0);
  s->Schedule(812500);
  EXPECT_EQ(s->Find(JobId(1))->queue, 1);
  EXPECT_EQ(s->NextWakeup(), kNever);  // last queue: no further timer
}

TEST(DlasScenario, FifoBySubmitTimeInsideAQueue) {
  auto s = Make("dlas",
                {"thresholds=3600", "queue_order=fifo", "promote_knob=0"});  // the paper's 2 queues
  Submit(*s, J(9, 4, 0), 0);
  s->Schedule(0);
  // Ids are not in submit order: submit time decides, id breaks ties of equal submit.
  Submit(*s, J(5, 4, 1000), 1000);
  Submit(*s, J(3, 4, 2000), 2000);
  Submit(*s, J(4, 4, 2000), 2000);
  s->Schedule(2000);
  EXPECT_EQ(Order(*s), "5 3 4");
  ASSERT_TRUE(s->Finish(JobId(9), 3000).ok());
  EXPECT_EQ(Str(s->Schedule(3000)), "start 5");
}

// Job 1 (4 GPUs, submit 0) is demoted at 250 (1 GPU-s = 1000 GPU-ms / 4); job 2 (4 GPUs,
// submit 1000) arrives in Q1 and preempts it; job 2 is demoted at 1000 + 250 = 1250. Both
// are now in Q2: job 1 waiting (submitted first), job 2 running.
std::string AtSecondDemotion(const std::string& queue_order) {
  auto s = Make("dlas", {"thresholds=1", "promote_knob=0", "queue_order=" + queue_order});
  Submit(*s, J(1, 4, 0), 0);
  s->Schedule(0);
  EXPECT_EQ(s->NextWakeup(), 250);
  s->Schedule(250);
  Submit(*s, J(2, 4, 1000), 1000);
  EXPECT_EQ(Str(s->Schedule(1000)), "preempt 1, start 2");
  EXPECT_EQ(s->NextWakeup(), 1250);
  return Str(s->Schedule(1250));
}

TEST(DlasScenario, FifoOrderPreemptsForEarlierSubmittedJobInSameQueue) {
  // FIFO inside Q2: job 1 (submit 0) is ahead of running job 2 (submit 1000).
  EXPECT_EQ(AtSecondDemotion("fifo"), "preempt 2, start 1");
}

TEST(DlasScenario, RunningFirstKeepsRunningJobAheadOfEarlierWaitingJob) {
  // running-first: inside Q2 running job 2 sorts before waiting job 1: nothing changes.
  EXPECT_EQ(AtSecondDemotion("running-first"), "");
}

TEST(DlasScenario, PromoteKnobPromotesExactlyAtWaitEqualsKnobTimesService) {
  auto s = Make("dlas", {"queues=2", "thresholds=1", "promote_knob=2", "queue_order=fifo"});
  Submit(*s, J(1, 4, 0), 0);  // job 1 first by id
  Submit(*s, J(2, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  // Job 1 reaches 1000 GPU-ms at 1000 / 4 = 250 and drops to Q2; job 2 (Q1) preempts it.
  EXPECT_EQ(Str(s->Schedule(250)), "preempt 1, start 2");
  // Job 1 waits in Q2 with e = 1000 GPU-ms since entering Q1 (its wait timer would fire at
  // 250 + 2 x 1000 = 2250). Job 2 reaches 1000 GPU-ms at 250 + 250 = 500 and drops to Q2 too,
  // where job 1 (same submit time, lower id) goes first: job 1 resumes, job 2 waits.
  EXPECT_EQ(s->NextWakeup(), 500);
  EXPECT_EQ(Str(s->Schedule(500)), "preempt 2, start 1");
  // Job 2 was preempted at t = 500 with e = 4 x 250 = 1000 GPU-ms: promotion is due at
  // t + knob x e = 500 + 2 x 1000 = 2500 (w in ms >= knob x GPU-ms). Job 1 is in the last
  // queue and has no timer.
  EXPECT_EQ(s->NextWakeup(), 2500);
  EXPECT_EQ(Str(s->Schedule(2499)), "");
  EXPECT_EQ(s->Find(JobId(2))->queue, 1);
  EXPECT_EQ(s->Find(JobId(2))->promotions, 0);
  // At 2500 job 2 returns to Q1 and preempts job 1 (Q2).
  EXPECT_EQ(Str(s->Schedule(2500)), "preempt 1, start 2");
  const Job* j2 = s->Find(JobId(2));
  EXPECT_EQ(j2->queue, 0);
  EXPECT_EQ(j2->promotions, 1);
  EXPECT_EQ(j2->q_base, 1000);  // its climb restarts from its attained 1000 GPU-ms
  // Job 2 must attain another 1000 GPU-ms to leave Q1 again: 2500 + 1000 / 4 = 2750.
  EXPECT_EQ(s->NextWakeup(), 2750);
  // Job 2 leaves Q1 again at 2750; in Q2 job 1 (same submit, lower id) is ahead and resumes.
  // (Job 1 itself waited from 2500 with e = 4 x (250 + 2000) = 9000 GPU-ms: its promotion
  // would be due at 2500 + 2 x 9000 = 20500.)
  EXPECT_EQ(s->Explain(JobId(1), 2600).next_transition, std::optional<Time>(20500));
  EXPECT_EQ(Str(s->Schedule(2750)), "preempt 2, start 1");
  EXPECT_EQ(s->Find(JobId(1))->promotions, 0);
}

// Two GPUs; dlas with T1 = the median of a GPU-time history {10, 20} GPU-s (nearest rank:
// the 1st of 2, 10 GPU-s), learning from every completion (history_batch=1) or not.
// X (50 s) and B (1000 s) start at 0 and drop to Q2 at 10 s. C and D (1000 s each) arrive at
// 12 s in Q1 and preempt both (X and B have 12 GPU-s each); C and D drop to Q2 at 22 s with
// 10 GPU-s, where X and B (submitted first) resume. X ends at 22 + 38 = 60 s with 50 GPU-s.
std::string AtXsEnd(bool online) {
  MemoryHistory history({Seconds(10), Seconds(20)});
  auto p = MakeOrderingPolicy(
      "dlas",
      {"threshold_quantiles=0.5", "history=mem", "history_batch=1", "queue_order=fifo",
       "promote_knob=0", std::string("online=") + (online ? "true" : "false")},
      history);
  EXPECT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
  Scheduler s(*Topology::Create(1, 1, 2), std::move(*p), std::move(*pl));
  Submit(s, J(1, 1, 0, Seconds(50)), 0);  // X
  Submit(s, J(2, 1, 0), 0);               // B
  EXPECT_EQ(Str(s.Schedule(0)), "start 1, start 2");
  EXPECT_EQ(s.NextWakeup(), Seconds(10));
  EXPECT_EQ(Str(s.Schedule(Seconds(10))), "");   // both demoted, nobody waits
  Submit(s, J(3, 1, Seconds(12)), Seconds(12));  // C
  Submit(s, J(4, 1, Seconds(12)), Seconds(12));  // D
  EXPECT_EQ(Str(s.Schedule(Seconds(12))), "preempt 1, preempt 2, start 3, start 4");
  EXPECT_EQ(Str(s.Schedule(Seconds(22))), "preempt 3, preempt 4, start 1, start 2");
  EXPECT_EQ(s.Find(JobId(3))->queue, 1);
  EXPECT_TRUE(s.Finish(JobId(1), Seconds(60)).ok());
  return Str(s.Schedule(Seconds(60)));
}

TEST(DlasScenario, FixedQuantileThresholdsGiveXsGpuToTheNextInQ2) {
  // online=false: T1 stays 10 GPU-s. In Q2, B runs and C (submitted before D) is next.
  EXPECT_EQ(AtXsEnd(false), "start 3");
}

TEST(DlasScenario, ThresholdsThatLearnMoveWaitingJobsBackUp) {
  // online=true: X's 50 GPU-s joins the history {10, 20, 50}; its median (2nd of 3) is 20,
  // so T1 becomes 20 GPU-s. C and D (10 GPU-s each, waiting) are below it and return to Q1;
  // B (50 GPU-s) stays in Q2. Q1 goes first: B is preempted, C and D start.
  EXPECT_EQ(AtXsEnd(true), "preempt 2, start 3, start 4");
}

TEST(DlasScenario, ARunningJobsDemotionMovesWithTheThresholds) {
  // T1 = the 0.6-quantile of {10, 20} GPU-s: nearest rank ceil(0.6 x 2) = 2, 20 GPU-s.
  MemoryHistory history({Seconds(10), Seconds(20)});
  auto p = MakeOrderingPolicy("dlas",
                              {"threshold_quantiles=0.6", "history=mem", "history_batch=1",
                               "online=true", "queue_order=fifo", "promote_knob=0"},
                              history);
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
  Scheduler s(*Topology::Create(1, 1, 2), std::move(*p), std::move(*pl));
  // X (4 s) and R (1000 s) start at 0; R would leave Q1 at 20 s.
  Submit(s, J(1, 1, 0, Seconds(4)), 0);
  Submit(s, J(2, 1, 0), 0);
  EXPECT_EQ(Str(s.Schedule(0)), "start 1, start 2");
  EXPECT_EQ(s.NextWakeup(), Seconds(20));
  // X ends at 4 s with 4 GPU-s: history {4, 10, 20}, rank ceil(0.6 x 3) = 2: T1 = 10 GPU-s.
  // R (4 GPU-s, running) stays in Q1 and now leaves it at 4 + (10 - 4) = 10 s.
  ASSERT_TRUE(s.Finish(JobId(1), Seconds(4)).ok());
  EXPECT_EQ(Str(s.Schedule(Seconds(4))), "");
  EXPECT_EQ(s.NextWakeup(), Seconds(10));
  EXPECT_EQ(s.Find(JobId(2))->queue, 0);
  EXPECT_EQ(Str(s.Schedule(Seconds(10))), "");
  EXPECT_EQ(s.Find(JobId(2))->queue, 1);
}

TEST(DlasOptions, ThresholdQuantilesAreCheckedAndExclusiveWithThresholds) {
  MemoryHistory history({Seconds(10)});
  auto both = MakeOrderingPolicy("dlas", {"thresholds=10", "threshold_quantiles=0.5"}, history);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("not both"), std::string::npos);
  auto bad = MakeOrderingPolicy("dlas", {"threshold_quantiles=0.9,0.5"}, history);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("strictly increasing"), std::string::npos);
  auto count = MakeOrderingPolicy("dlas", {"queues=3", "threshold_quantiles=0.5"}, history);
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("queues=3 needs 2 threshold_quantiles"),
            std::string::npos);
}

// Found by a tester: a history whose quantiles coincide gave thresholds 1 GPU-ms apart (an
// all-equal one: 100 and 100.001 GPU-s, a queue no job stays in), and an all-zero one
// thresholds of 0.001 and 0.002 GPU-s, below what thresholds= may be given as. Both refused,
// naming the history and the quantiles, for dlas and gittins alike.
TEST(DlasOptions, QuantilesOfADegenerateHistoryAreRefused) {
  MemoryHistory equal({Seconds(100), Seconds(100), Seconds(100)});
  for (const char* policy : {"dlas", "gittins"}) {
    auto p = MakeOrderingPolicy(policy, {"threshold_quantiles=0.3,0.6", "history=mem"}, equal);
    ASSERT_FALSE(p.ok()) << policy;
    EXPECT_EQ(p.status().message(),
              std::string("policy ") + policy +
                  ": threshold_quantiles: the 0.3- and 0.6-quantiles of the history mem are both "
                  "100 GPU-s, so queue 2 would be empty (thresholds must be strictly "
                  "increasing); give quantiles further apart, fewer queues, or a history with "
                  "more distinct GPU-times");
  }
  MemoryHistory zero({0, 0, Seconds(5)});
  auto z = MakeOrderingPolicy("dlas", {"threshold_quantiles=0.5", "history=mem"}, zero);
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("the 0.5-quantile of the history mem is 0 GPU-s, below the "
                                      "0.001 GPU-s a threshold must be at least"),
            std::string::npos)
      << z.status().message();
  // Quantiles that fall on distinct values still work: ceil(0.9 x 3) = 3rd, 5 GPU-s.
  auto ok = MakeOrderingPolicy("dlas", {"threshold_quantiles=0.9", "history=mem"}, zero);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)->queue_thresholds(), (std::vector<Service>{Seconds(5)}));
}

}  // namespace
}  // namespace tiresias::policy_scenario_test
