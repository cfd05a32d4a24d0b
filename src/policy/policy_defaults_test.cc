// The shipped defaults of the ordering policies, run on a tiny cluster: dlas's six queues
// (1000 to 2,000,000 GPU-s, running-first, PROMOTEKNOB 8), gittins' one threshold at
// 7200 GPU-s, and the old (version 1) defaults pinned for state written under them.
// Units: times in ms, service in GPU-ms; thresholds are given to the policies in GPU-seconds.
#include <gtest/gtest.h>

#include "policy_scenario_fixture.h"

namespace tiresias::policy_scenario_test {
namespace {

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

}  // namespace
}  // namespace tiresias::policy_scenario_test
