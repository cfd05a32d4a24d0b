// Narrated scenario tests of the ordering policies, driving the Scheduler directly on tiny
// clusters at explicit millisecond times: dlas demotion exactly at the threshold (and where the
// public simulator is late), FIFO / running-first order inside a queue, PROMOTEKNOB promotion,
// strict FIFO head-of-line blocking vs backfill, sjf, srtf, srsf, las vs las2d, rejection of
// jobs that can never fit, restore overhead, and determinism.
// Units: times in ms, service in GPU-ms; thresholds are given to the policies in GPU-seconds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

std::unique_ptr<Scheduler> Make(const std::string& policy, const std::vector<std::string>& opts,
                                int gpus = 4, SchedulerOptions so = {}) {
  auto p = MakeOrderingPolicy(policy, opts, TestFiles());
  EXPECT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
  EXPECT_TRUE(pl.ok()) << pl.status().message();
  return std::make_unique<Scheduler>(*Topology::Create(1, 1, gpus), std::move(*p), std::move(*pl),
                                     so);
}

JobSpec J(int64_t id, int gpus, Time submit, std::optional<Duration> dur = std::nullopt) {
  return JobSpec{.id = JobId(id), .gpus = gpus, .submit = submit, .duration = dur};
}

// "preempt 1, start 2": the actions of one pass, in order.
std::string Str(const std::vector<Action>& acts) {
  std::string s;
  for (const auto& a : acts) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} {}", ToString(a.kind), a.job.value());
  }
  return s;
}

std::string Order(const Scheduler& s) {
  std::string o;
  for (JobId id : s.WaitingInOrder()) o += fmt::format("{}{}", o.empty() ? "" : " ", id.value());
  return o;
}

void Submit(Scheduler& s, const JobSpec& j, Time now) {
  Status st = s.Submit(j, now);
  ASSERT_TRUE(st.ok()) << st.message();
}

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

TEST(DlasDefaults, SixQueuesFrom1000To2000000GpuSecondsRunningFirstKnob8) {
  // The shipped dlas (README, "How the defaults were chosen"): thresholds 1000, 6687, 44721,
  // 299070 and 2000000 GPU-s (geometric, ratio 6.69), running jobs ahead of waiting ones in a
  // queue, PROMOTEKNOB 8. A 4-GPU job alone on 4 GPUs crosses them at 250 s, 1671.75 s,
  // 11180.25 s, 74767.5 s and 500000 s.
  auto s = Make("dlas", {});
  Submit(*s, J(1, 4, 0), 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1");
  for (Time at : {250'000, 1'671'750, 11'180'250, 74'767'500, 500'000'000}) {
    EXPECT_EQ(s->NextWakeup(), at);
    s->Schedule(at);
  }
  EXPECT_EQ(s->Find(JobId(1))->queue, 5);
  EXPECT_EQ(s->NextWakeup(), kNever);
  // t0 = 500000 s. Job 2 (4 GPUs) arrives in Q1 and preempts job 1 (Q6: 2,000,000 GPU-s of
  // service, so its promotion is due 8 x 2,000,000 s later). Job 3 arrives at t0 + 100 s and
  // waits behind job 2 (running, and submitted first). Job 2 drops to Q2 at t0 + 250 s and
  // job 3 (Q1) preempts it; job 3 drops to Q2 at t0 + 500 s. In Q2 job 2 waits (submitted
  // first) and job 3 runs: running-first keeps job 3 where the paper's FIFO would preempt it
  // for job 2 (DlasScenario.FifoOrderPreemptsForEarlierSubmittedJobInSameQueue).
  const Time t0 = 500'000'000;
  Submit(*s, J(2, 4, t0), t0);
  EXPECT_EQ(Str(s->Schedule(t0)), "preempt 1, start 2");
  EXPECT_EQ(s->Explain(JobId(1), t0).next_transition,
            std::optional<Time>(t0 + Time{8} * 2'000'000'000));
  Submit(*s, J(3, 4, t0 + 100'000), t0 + 100'000);
  EXPECT_EQ(Str(s->Schedule(t0 + 100'000)), "");
  EXPECT_EQ(Str(s->Schedule(t0 + 250'000)), "preempt 2, start 3");
  EXPECT_EQ(s->NextWakeup(), t0 + 500'000);
  EXPECT_EQ(Str(s->Schedule(t0 + 500'000)), "");
  EXPECT_EQ(s->Find(JobId(3))->queue, 1);
  EXPECT_TRUE(s->Find(JobId(3))->running());
}

TEST(GittinsDefaults, TwoQueuesAt7200GpuSecondsEvenWithQueues2Given) {
  // gittins' default is one threshold at 7200 GPU-s: a 4-GPU job alone crosses it at
  // 7,200,000 / 4 = 1,800,000 ms, with or without queues=2 (its own count). dlas given
  // queues=2 alone keeps the paper's 3600 GPU-s: 900,000 ms on 4 GPUs.
  MemoryHistory history({Seconds(10), Seconds(20)});
  for (const std::vector<std::string>& opts :
       {std::vector<std::string>{"history=mem"},
        std::vector<std::string>{"history=mem", "queues=2"}}) {
    auto p = MakeOrderingPolicy("gittins", opts, history);
    ASSERT_TRUE(p.ok()) << p.status().message();
    auto pl = MakePlacementPolicy("count", {}, TestFiles());
    Scheduler s(*Topology::Create(1, 1, 4), std::move(*p), std::move(*pl));
    ASSERT_TRUE(s.Submit(J(1, 4, 0), 0).ok());
    EXPECT_EQ(Str(s.Schedule(0)), "start 1");
    EXPECT_EQ(s.NextWakeup(), 1'800'000);
  }
  auto d = Make("dlas", {"queues=2"});
  Submit(*d, J(1, 4, 0), 0);
  d->Schedule(0);
  EXPECT_EQ(d->NextWakeup(), 900'000);
}

TEST(PolicyDefaults, OldDefaultsArePinnedForStateWrittenUnderThem) {
  // Version 1 (before the sweep): 2 queues at 3600 GPU-s, no promotion, dlas FIFO inside a
  // queue, gittins quantum 3600. Options given explicitly stay as given.
  EXPECT_EQ(PinDefaults("dlas", {}, 1),
            (std::vector<std::string>{"thresholds=3600", "queue_order=fifo", "promote_knob=0"}));
  EXPECT_EQ(PinDefaults("dlas", {"queues=2", "queue_order=running-first"}, 1),
            (std::vector<std::string>{"queues=2", "queue_order=running-first", "thresholds=3600",
                                      "promote_knob=0"}));
  EXPECT_EQ(PinDefaults("dlas", {"queues=1", "promote_knob=2"}, 1),
            (std::vector<std::string>{"queues=1", "promote_knob=2", "queue_order=fifo"}));
  EXPECT_EQ(PinDefaults("gittins", {"thresholds=100"}, 1),
            (std::vector<std::string>{"thresholds=100", "quantum=3600"}));
  EXPECT_EQ(PinDefaults("dlas", {}, 2), std::vector<std::string>{});
  EXPECT_EQ(PinDefaults("srtf", {"ties=stable"}, 1), std::vector<std::string>{"ties=stable"});
  // And they decide as version 1 did: one threshold at 3600 GPU-s (900 s on 4 GPUs).
  auto s = Make("dlas", PinDefaults("dlas", {}, 1));
  Submit(*s, J(1, 4, 0), 0);
  s->Schedule(0);
  EXPECT_EQ(s->NextWakeup(), 900'000);
}

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
  EXPECT_NE(a[0].reason.find("restore"), std::string::npos) << a[0].reason;
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
                         a.progress_start, a.reason);
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
}  // namespace tiresias
