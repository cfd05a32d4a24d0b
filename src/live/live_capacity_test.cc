// LiveScheduler's capacity while processes stop (live_scheduler_capacity.cc), on the virtual
// clock of tests/live_fixture.h: the core avoids the GPUs of a cancelled job whose process
// runs through its grace until it is gone, so that the next job starts on idle GPUs instead
// of waiting for it (across a restart too), yet a job with no other place still takes them
// and nothing is preempted for them; a requeued job's own GPUs are not avoided.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "live_fixture.h"

namespace tiresias {
namespace {

// One node of 4 GPUs, dlas with one queue in effect, grace 4 s, processes that ignore SIGTERM
// (only the kill at the end of the grace stops them), and a 2-GPU job `name` started on GPUs
// 0,1 at t0.
class LiveSchedulerStoppingTest : public LiveSchedulerTest {
 protected:
  struct Started {
    std::unique_ptr<LiveScheduler> d;
    JobId id;
    int64_t t0;
  };
  Started StartATermIgnoringJob(const std::string& name) {
    policy_opts_ = {"thresholds=100000"};
    grace_ = Seconds(4);
    world_.ignore_term = true;
    Started s{.d = Start(), .t0 = world_.now};
    s.id = *s.d->Submit({.name = name, .gpus = 2, .argv = {"train"}});
    world_.work[s.id] = 1'000'000;
    s.d->Step();
    return s;
  }
};

TEST_F(LiveSchedulerStoppingTest, ACancelledJobsGpusAreAvoidedUntilItsProcessIsGone) {
  // One node of 4 GPUs, grace 4 s, processes that ignore SIGTERM (only the kill at the end of
  // the grace stops them). A (2 GPUs) runs on GPUs 0,1 and is cancelled at 1 s: its process
  // holds them until 5 s. C (2 GPUs), submitted then, starts at once on the idle GPUs 2,3
  // (the core gave it 0,1 before, and it waited 4 s for A's process while 2,3 stayed idle).
  // A restart in the grace keeps 0,1 avoided: E (2 GPUs), with no other place, takes them and
  // waits for A's process (`starting`), and starts once it is gone.
  auto [d, a, t0] = StartATermIgnoringJob("a");
  ASSERT_EQ(world_.launches, std::vector<std::string>{fmt::format("{}@{}:0,1", a.value(), t0)});
  world_.now = t0 + 1'000;
  ASSERT_TRUE(d->Cancel(a).ok());
  const JobId c = *d->Submit({.name = "c", .gpus = 2, .argv = {"train"}});
  world_.work[c] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches.size(), 2u);
  EXPECT_EQ(world_.launches[1], fmt::format("{}@{}:2,3", c.value(), t0 + 1'000));
  EXPECT_EQ((*d->Get(c))["state"], "running");
  // The nodes view: every GPU usable, 0 and 1 still A's.
  const auto n = d->Nodes()["nodes"][0];
  EXPECT_EQ(n["gpus_usable"], 4);
  EXPECT_EQ(n["gpus"][0]["job"], a.value());
  // /metrics counts them busy, as the nodes view (it said 2 busy, 2 free).
  const std::string metrics = d->MetricsText();
  EXPECT_NE(metrics.find("tiresias_gpus{state=\"busy\"} 4"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("tiresias_gpus{state=\"free\"} 0"), std::string::npos) << metrics;
  const std::string events = d->Events(0, 100)->dump();
  EXPECT_NE(events.find(
                fmt::format("GPU(s) 0,1 still held by the stopping process of job {}", a.value())),
            std::string::npos)
      << events;

  // A restart in the grace: the journal's replay has the core avoid 0,1 as before.
  world_.now = t0 + 2'000;
  d.reset();
  d = Start();
  d->Step();
  const JobId e = *d->Submit({.name = "e", .gpus = 2, .argv = {"train"}});
  world_.work[e] = 1'000;
  d->Step();
  EXPECT_EQ((*d->Get(e))["state"], "starting") << "0,1 are still A's";
  EXPECT_EQ(world_.launches.size(), 2u);

  // A is killed at 5 s: E starts there at once.
  world_.now = t0 + 5'000;
  d->Step();
  d->Step();
  ASSERT_EQ(world_.launches.size(), 3u);
  EXPECT_EQ(world_.launches[2], fmt::format("{}@{}:0,1", e.value(), t0 + 5'000));
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
  // (E on them waited for A's process; once it was gone they are no longer avoided.)
  const std::string after = d->Events(0, 100)->dump();
  EXPECT_NE(after.find("GPU(s) 0,1 free again (their stopping processes are gone)"),
            std::string::npos)
      << after;
}

TEST_F(LiveSchedulerStoppingTest, AvoidedGpusAreFreeAgainOnceTheStoppingProcessIsGone) {
  // A (2 GPUs, ignores SIGTERM) is cancelled at 1 s; its process holds GPUs 0,1 until its
  // kill at 5 s. Then they are free again, and a job submitted after takes them.
  auto [d, a, t0] = StartATermIgnoringJob("a");
  world_.now = t0 + 1'000;
  ASSERT_TRUE(d->Cancel(a).ok());
  d->Step();
  world_.now = t0 + 5'000;
  d->Step();  // the kill
  d->Step();  // its exit
  const std::string events = d->Events(0, 100)->dump();
  EXPECT_NE(events.find("GPU(s) 0,1 free again (their stopping processes are gone)"),
            std::string::npos)
      << events;
  const JobId b = *d->Submit({.name = "b", .gpus = 4, .argv = {"train"}});
  world_.work[b] = 1'000;
  d->Step();
  EXPECT_EQ((*d->Get(b))["state"], "running");
}

TEST_F(LiveSchedulerTest, NoJobIsPreemptedForTheGpusOfAStoppingProcess) {
  // dlas with an 8 GPU-s first queue, one node of 8 GPUs, grace 4 s, processes that ignore
  // SIGTERM. W (4 GPUs) runs from 0 and is demoted at 2 s. A (4 GPUs, first queue) starts at
  // 3 s on the other four and is cancelled at 3.5 s: its process holds them until its kill at
  // 7.5 s. C (4 GPUs, first queue) arrives then. A's GPUs, to avoid, are the only place for
  // it: it takes them and waits (`starting`), and W, behind it in the order, is not preempted
  // for it (a core that left A's GPUs out of its budget stopped W, whose GPUs C would then
  // wait for anyway). C starts once A's process is gone.
  cluster_ = {{"n1", 8}};
  policy_opts_ = {"thresholds=8"};
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId w = *d->Submit({.name = "w", .gpus = 4, .argv = {"train"}});
  world_.work[w] = 1'000'000;
  d->Step();
  world_.now = t0 + 3'000;
  d->Step();
  EXPECT_EQ((*d->Get(w))["queue"], "Q2");
  const JobId a = *d->Submit({.name = "a", .gpus = 4, .argv = {"train"}});
  world_.work[a] = 1'000'000;
  d->Step();
  ASSERT_EQ((*d->Get(a))["state"], "running");
  world_.now = t0 + 3'500;
  ASSERT_TRUE(d->Cancel(a).ok());
  const JobId c = *d->Submit({.name = "c", .gpus = 4, .argv = {"train"}});
  world_.work[c] = 1'000'000;
  for (; world_.now < t0 + 7'500; world_.now += 500) {
    d->Step();
    ASSERT_EQ((*d->Get(c))["state"], "starting") << "at " << world_.now - t0;
    ASSERT_EQ((*d->Get(w))["state"], "running") << "at " << world_.now - t0;
  }
  d->Step();
  d->Step();
  EXPECT_EQ((*d->Get(c))["state"], "running");
  EXPECT_EQ((*d->Get(w))["preemptions"], 0);
  ASSERT_EQ(world_.launches.size(), 3u);
  EXPECT_EQ(world_.launches[2], fmt::format("{}@{}:4,5,6,7", c.value(), t0 + 7'500));
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
}

TEST_F(LiveSchedulerTest, AVictimCancelledInItsGraceAndKilledCountsAKillNotACheckpoint) {
  // X (4 GPUs, ignores SIGTERM) is preempted by Y at 3 s (kill due at 7 s) and cancelled at
  // 4 s; it is killed at 7 s. Its preemption ended in a kill: kills 1, checkpointed 0 (it
  // said checkpointed 1). Y, on X's GPUs, starts once X's process is gone.
  auto [d, x, y, t0] = PreemptATermIgnoringJob(1'000'000);
  world_.now = t0 + 4'000;
  ASSERT_TRUE(d->Cancel(x).ok());
  for (; world_.now <= t0 + 8'000; world_.now += 500) d->Step();
  const auto xj = *d->Get(x);
  EXPECT_EQ(xj["state"], "cancelled");
  EXPECT_EQ(xj["preemptions"], 1);
  EXPECT_EQ(xj["kills"], 1);
  EXPECT_EQ(xj["checkpointed"], 0);
  EXPECT_EQ((*d->Get(y))["state"], "running");
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
}

TEST_F(LiveSchedulerStoppingTest, ARequeuedJobsOwnGpusAreNotAvoided) {
  // R (2 GPUs of 4, ignores SIGTERM) runs on 0,1 and is requeued at 1 s: its process holds
  // them until its kill at 5 s. S (2 GPUs) submitted then starts at once on 2,3, and R goes
  // back on 0,1 behind its own process (avoiding them sent R to 2,3, where it waited for that
  // process all the same, and kept S waiting).
  auto [d, r, t0] = StartATermIgnoringJob("r");
  world_.now = t0 + 1'000;
  ASSERT_TRUE(d->Requeue(r, "alice").ok());
  const JobId s = *d->Submit({.name = "s", .gpus = 2, .argv = {"train"}});
  world_.work[s] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches.size(), 2u);
  EXPECT_EQ(world_.launches[1], fmt::format("{}@{}:2,3", s.value(), t0 + 1'000));
  world_.now = t0 + 5'000;
  d->Step();  // the kill
  d->Step();  // its exit, and R's launch
  ASSERT_EQ(world_.launches.size(), 3u);
  EXPECT_EQ(world_.launches[2], fmt::format("{}@{}:0,1", r.value(), t0 + 5'000));
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
}

TEST_F(LiveSchedulerTest, AJobArrivingInAnothersTimeLimitsGracePreemptsNobodyForItsGpus) {
  // Regression (an exploratory test): dlas with a 3 GPU-s first queue on 4 GPUs, grace 4 s,
  // processes that ignore SIGTERM. X (2 GPUs, limit 1 s) and then L (2 GPUs) start at 0. X is
  // told to stop at 1 s (kill due at 5 s); L is demoted at 1.5 s (2 GPUs x 1.5 s). N (2 GPUs,
  // first queue) arrives at 2.5 s. The core ran X until its process exited: no GPU was free,
  // so it preempted L for N (or X, which it could then start again past its limit), though
  // X's GPUs were about to be free. Now X's run ends in the core at its limit: N is placed on
  // X's GPUs (no other place) and waits for X's process; L runs on, never preempted. X ends
  // `timeout` at its kill, with no preemption and one launch; N runs then. A restart in X's
  // grace keeps all that.
  policy_opts_ = {"thresholds=3"};
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId x = *d->Submit({.name = "x", .gpus = 2, .argv = {"train"}, .time = "0:01"});
  const JobId l = *d->Submit({.name = "l", .gpus = 2, .argv = {"train"}});
  world_.work[x] = world_.work[l] = 1'000'000;
  d->Step();
  world_.now = t0 + 1'000;
  d->Step();
  ASSERT_EQ((*d->Get(x))["state"], "preempting");
  world_.now = t0 + 2'500;
  const JobId n = *d->Submit({.name = "n", .gpus = 2, .argv = {"train"}});
  world_.work[n] = 1'000'000;
  d->Step();
  EXPECT_EQ((*d->Get(x))["state"], "preempting");
  EXPECT_EQ((*d->Get(x))["reason"], "TimeLimit");
  EXPECT_EQ((*d->Get(l))["state"], "running");
  EXPECT_EQ((*d->Get(n))["state"], "starting");
  world_.now = t0 + 3'000;
  d.reset();  // a restart in X's grace
  d = Start();
  for (; world_.now <= t0 + 8'000; world_.now += 500) d->Step();
  const auto xj = *d->Get(x);
  EXPECT_EQ(xj["state"], "timeout") << xj.dump();
  EXPECT_EQ(xj["preemptions"], 0);
  EXPECT_EQ(xj["checkpointed"], 0);
  const auto lj = *d->Get(l);
  EXPECT_EQ(lj["state"], "running") << lj.dump();
  EXPECT_EQ(lj["preemptions"], 0);
  EXPECT_EQ((*d->Get(n))["state"], "running");
  EXPECT_EQ(world_.launches.size(), 3u) << Join(world_.launches, " ");
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
  const std::string events = d->Events(0, 100, x)->dump();
  EXPECT_NE(events.find("timeout: its run ends at its time limit"), std::string::npos) << events;
  EXPECT_NE(events.find("after time limit"), std::string::npos) << events;
}

TEST_F(LiveSchedulerTest, ATimeLimitReachedWhileARunWaitsBehindItsOwnStoppingProcessEndsIt) {
  // Regression (a review): R (1 GPU, limit 5 s, ignores SIGTERM) runs from 0 and is requeued
  // at 4.9 s (grace 2 s: killed at 6.9 s); the core starts it again at once, behind its own
  // process, whose end the engine reports 4 s after the kill. Its time counts again from
  // 6.9 s until the launch's next try puts it off; the loop steps every 300 ms, so at 7 s its
  // limit comes while that run still waits to launch: the core's run was ended but it stayed
  // to be launched, and the same step aborted the daemon. It ends `timeout` then (its run
  // had not begun); its old process ends as it was told (a requeue's kill: no preemption,
  // no kill counted); one launch in all; a restart agrees.
  grace_ = Seconds(2);
  world_.ignore_term = true;
  world_.linger = Seconds(4);
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId r = *d->Submit({.name = "r", .gpus = 1, .argv = {"train"}, .time = "0:05"});
  world_.work[r] = 1'000'000;
  d->Step();
  world_.now = t0 + 4'900;
  d->Step();
  ASSERT_TRUE(d->Requeue(r, "alice").ok());
  d->Step();
  ASSERT_EQ((*d->Get(r))["state"], "starting");
  for (; world_.now <= t0 + 12'000; world_.now += 300) d->Step();
  auto rj = *d->Get(r);
  EXPECT_EQ(rj["state"], "timeout") << rj.dump();
  EXPECT_TRUE(rj["message"].get<std::string>().starts_with(
      "time limit 00:00:05 reached (its run not launched yet)"))
      << rj.dump();
  EXPECT_EQ(rj["preemptions"], 0);
  EXPECT_EQ(rj["kills"], 0);
  EXPECT_EQ(rj["pid"], 0) << rj.dump();
  EXPECT_EQ(world_.launches.size(), 1u) << Join(world_.launches, " ");
  d.reset();
  d = Start();
  rj = *d->Get(r);
  EXPECT_EQ(rj["state"], "timeout") << rj.dump();
}

TEST_F(LiveSchedulerTest, AnArrayTaskInItsTimeLimitsGraceStillHoldsItsSlot) {
  // Regression (a review): array 0-1%1 with a 1 s limit, processes that ignore SIGTERM, grace
  // 4 s. Task 0 runs from 0 and is told to stop at 1 s; task 1 waits ("JobArrayTaskLimit")
  // until task 0's process is killed at 5 s: the core ended task 0's run at 1 s, and the
  // next change of eligibility (a submission at 2 s) released task 1 beside it.
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  auto d = Start();
  std::vector<JobId> tasks;
  ASSERT_TRUE(d->Submit({.gpus = 1, .argv = {"x"}, .time = "0:01", .array = "0-1%1"}, &tasks).ok());
  for (JobId t : tasks) world_.work[t] = 1'000'000;
  d->Step();
  world_.now = t0 + 1'000;
  d->Step();
  ASSERT_EQ((*d->Get(tasks[0]))["state"], "preempting");
  world_.now = t0 + 2'000;
  const JobId other = *d->Submit({.name = "o", .gpus = 1, .argv = {"x"}});
  world_.work[other] = 1'000'000;
  for (; world_.now < t0 + 5'000; world_.now += 500) {
    d->Step();
    const auto tj = *d->Get(tasks[1]);
    EXPECT_EQ(tj["state"], "pending") << world_.now - t0 << ": " << tj.dump();
    EXPECT_EQ(tj["reason"], "JobArrayTaskLimit") << tj.dump();
  }
  for (; world_.now <= t0 + 6'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(tasks[0]))["state"], "timeout");
  EXPECT_EQ((*d->Get(tasks[1]))["state"], "running");
  EXPECT_EQ((*d->Get(other))["state"], "running");
}

TEST_F(LiveSchedulerTest, ANodeDownUnderAStoppingProcessIsJournalledOnce) {
  // Regression (a review): B (2 GPUs, ignores SIGTERM, grace 4 s) runs on n2 and is cancelled
  // at 1 s; its process holds n2's GPUs until 5 s. At 2 s n2 goes down (a Slurm node whose
  // kill failed is drained so). The GPUs to avoid were all those such a process holds, but the
  // core keeps only usable ones: the two never agreed, and every step journalled a capacity
  // event (and ran a pass). One event now, for the node.
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId b = RunOnTheSecondOfTwoNodes(d);
  world_.now = t0 + 1'000;
  ASSERT_TRUE(d->Cancel(b).ok());
  d->Step();
  const int before = Count(Journal(dir_ / "tiresias.db"), EventKind::kCapacity);
  world_.now = t0 + 2'000;
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "down", .usable = false, .gpus = 2, .reason = "maintenance"},
      {.name = "n2", .state = "drain", .usable = false, .gpus = 2, .reason = "Kill task failed"}};
  for (; world_.now <= t0 + 4'000; world_.now += 100) d->Step();
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kCapacity), before + 1);
}

}  // namespace
}  // namespace tiresias

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, UnderSlurmAMultiNodeJobIsSplitEvenly) {
  // Two Slurm nodes of 4 GPUs (consolidate). Slurm gives every node of a job the same number
  // of GPUs, so a 6-GPU job placed 4+2 would hold 4+4, and a 2-GPU job beside it on the
  // second node would be evicted by the surplus (or the 6-GPU job would evict itself, in a
  // loop). The 6-GPU job runs 3+3 instead; the 2-GPU job then waits (1 GPU free per node) and
  // explain says why. A 7-GPU job (no even split over two nodes of 4) is refused at submit.
  // The state records the choice: its replay keeps it.
  cluster_ = {{"n1", 4}, {"n2", 4}};
  executor_ = "slurm";
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  const JobId big = *d->Submit({.gpus = 6, .argv = {"train"}});
  world_.work[big] = 1'000'000;
  d->Step();
  const JobId small = *d->Submit({.gpus = 2, .argv = {"train"}});
  world_.work[small] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches.size(), 1u);
  EXPECT_EQ(world_.launches[0], fmt::format("{}@{}:0,1,2,1:0,1:1,1:2", big.value(), world_.now));
  EXPECT_EQ((*d->Get(small))["state"], "pending");
  const std::string why = d->Explain(small)->dump();
  EXPECT_NE(why.find("waits for one node with 2 free GPUs"), std::string::npos) << why;
  auto seven = d->Submit({.gpus = 7, .argv = {"train"}});
  ASSERT_FALSE(seven.ok());
  EXPECT_NE(seven.status().message().find("cannot be split evenly over 2 nodes of 4 GPUs"),
            std::string::npos)
      << seven.status().message();
  d.reset();
  d = Start();
  EXPECT_EQ((*d->Get(big))["state"], "running");
  EXPECT_FALSE(d->Submit({.gpus = 7, .argv = {"train"}}).ok());
}

TEST_F(LiveSchedulerTest, AStateMadeBeforeEvenSplitsReplaysWithoutThem) {
  // A Slurm state whose recorded configuration has no `even_split` (made by an older build)
  // replays as it was decided: a 6-GPU job is placed 4+2 there, and a 7-GPU job is accepted.
  // The configuration a new state records says `even_split`.
  cluster_ = {{"n1", 4}, {"n2", 4}};
  executor_ = "slurm";
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  d.reset();
  {
    auto store = Store::Open((dir_ / "tiresias.db").string(), world_.now);
    ASSERT_TRUE(store.ok());
    auto conf = nlohmann::json::parse(*(*store)->GetMeta("config"));
    EXPECT_EQ(conf["even_split"], true);
    conf.erase("even_split");
    ASSERT_TRUE((*store)->SetMeta("config", conf.dump()).ok());
  }
  d = Start();
  const JobId big = *d->Submit({.gpus = 6, .argv = {"train"}});
  world_.work[big] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches.size(), 1u);
  EXPECT_EQ(world_.launches[0], fmt::format("{}@{}:0,1,2,3,1:0,1:1", big.value(), world_.now));
  EXPECT_TRUE(d->Submit({.gpus = 7, .argv = {"train"}}).ok());
}

TEST_F(LiveSchedulerTest, AnExitOfItsOwnInTheStepThatEvictsItIsTheJobsEnd) {
  // Two nodes of 2 GPUs: A (2 GPUs, 10 s of work) runs on n2. At 10 s n2 goes down and A's
  // process exits 0 by itself, both seen in one step: capacity comes first and evicts A, which
  // was never told to stop. Its exit 0 is its end (a review: it was taken for a checkpoint,
  // and the finished job ran again).
  cluster_ = {{"n1", 2}, {"n2", 2}};
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  const JobId blocker = *d->Submit({.name = "b", .gpus = 2, .argv = {"train"}});
  const JobId a = *d->Submit({.name = "a", .gpus = 2, .argv = {"train"}});
  world_.work[blocker] = 1'000'000;
  world_.work[a] = 10'000;
  d->Step();
  ASSERT_EQ(world_.launches.size(), 2u);
  world_.now += 10'000;
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "mixed", .gpus = 2},
      {.name = "n2", .state = "down", .usable = false, .gpus = 2, .reason = "Not responding"}};
  d->Step();
  auto j = *d->Get(a);
  EXPECT_EQ(j["state"], "finished") << j.dump();
  EXPECT_NE(j["message"].get<std::string>().find("exited before it was told to stop"),
            std::string::npos)
      << j.dump();
  d->Step();
  EXPECT_EQ(world_.launches.size(), 2u);
}

}  // namespace
}  // namespace tiresias
