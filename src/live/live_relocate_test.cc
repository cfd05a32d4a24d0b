// LiveScheduler's moves of parked jobs (RelocateParked, live_scheduler_capacity.cc), on the
// virtual clock of tests/live_fixture.h: a job placed on GPUs another job's process holds (a
// cancelled, timed-out or preempted job's) moves when GPUs free up elsewhere or beside those
// it holds, in the core's order, never onto GPUs another process still holds, and a restart
// replays the move.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "live_fixture.h"

namespace tiresias {
namespace {

// One node of 4 GPUs, dlas with one queue in effect (or a first queue of `thresholds` GPU-s),
// grace 10 s, processes that ignore SIGTERM (only the kill at the end of the grace stops
// them); jobs that run `work` ms.
class LiveRelocateTest : public LiveSchedulerTest {
 protected:
  std::unique_ptr<LiveScheduler> StartIgnoringTerm(const std::string& thresholds = "100000") {
    policy_opts_ = {"thresholds=" + thresholds};
    grace_ = Seconds(10);
    world_.ignore_term = true;
    t0_ = world_.now;
    return Start();
  }
  JobId Run(LiveScheduler& d, const std::string& name, int gpus, const std::string& time = "",
            Duration work = 1'000'000) {
    const JobId id = *d.Submit({.name = name, .gpus = gpus, .argv = {"x"}, .time = time});
    world_.work[id] = work;
    return id;
  }
  int64_t t0_ = 0;  // when StartIgnoringTerm started serve
};

TEST_F(LiveRelocateTest, AJobParkedOnAStoppingProcessesGpusMovesWhenOthersFreeUp) {
  // Regression (an exploratory test): 4 GPUs, dlas with one queue in effect, grace 10 s,
  // processes that ignore SIGTERM. A (2 GPUs, limit 2 s) runs on 0,1 and B (2 GPUs, 5 s of
  // work) on 2,3, from 0. A is told to stop at 2 s (killed at 12 s). C (2 GPUs) arrives at
  // 3 s: no other place, it is placed on 0,1 and waits for A's process. B ends at 5 s: C
  // waited on until 12 s while 2,3 stayed idle, and D (2 GPUs), arriving at 7 s, overtook it
  // there. Now C moves to 2,3 at 5 s and starts; D waits for A's process on 0,1 and starts at
  // 12 s. A restart after the move replays it (nothing launched again), and the move is
  // asked once while nothing changed (one relocate event).
  auto d = StartIgnoringTerm();
  const int64_t t0 = t0_;
  const JobId a = Run(*d, "a", 2, "0:02");
  const JobId b = Run(*d, "b", 2, "", 5'000);
  d->Step();
  world_.now = t0 + 2'000;
  d->Step();
  world_.now = t0 + 3'000;
  const JobId c = Run(*d, "c", 2);
  for (; world_.now < t0 + 5'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(c))["state"], "starting");
  for (; world_.now <= t0 + 6'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(c))["state"], "running");
  d.reset();  // a restart after the move
  d = Start();
  world_.now = t0 + 7'000;
  const JobId dj = Run(*d, "d", 2);
  for (; world_.now <= t0 + 13'000; world_.now += 500) d->Step();
  EXPECT_EQ(world_.launches,
            (std::vector<std::string>{fmt::format("{}@{}:0,1", a.value(), t0),
                                      fmt::format("{}@{}:2,3", b.value(), t0),
                                      fmt::format("{}@{}:2,3", c.value(), t0 + 5'000),
                                      // (A's kill at 12 s seen at the next step)
                                      fmt::format("{}@{}:0,1", dj.value(), t0 + 12'500)}));
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
  EXPECT_EQ((*d->Get(a))["state"], "timeout");
  const auto cj = *d->Get(c);
  EXPECT_EQ(cj["state"], "running") << cj.dump();
  EXPECT_EQ(cj["preemptions"], 0);
  EXPECT_TRUE(cj["message"].get<std::string>().starts_with("moved to free GPUs")) << cj.dump();
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kRelocate), 1);
}

TEST_F(LiveRelocateTest, AParkedJobIsNotMovedOntoGpusAnotherProcessStillHolds) {
  // Regression (a review): 4 GPUs, one queue in effect, grace 10 s, processes that ignore
  // SIGTERM. X (1 GPU, limit 1 s) runs on GPU 0, V (1 GPU) on 1 and F (2 GPUs, 3 s of work) on
  // 2,3, from 0. X is told to stop at 1 s (killed at 11 s); C (1 GPU) arrives at 1.2 s and is
  // parked on GPU 0. V is requeued and held at 2 s: GPU 1 is free in the core, but V's
  // process holds it until 12 s. C was moved there (and launched at 12 s, not 11). It stays
  // on GPU 0 until F ends at 3 s, and then moves to GPU 2 and starts.
  auto d = StartIgnoringTerm();
  const int64_t t0 = t0_;
  const JobId x = Run(*d, "x", 1, "0:01");
  const JobId v = Run(*d, "v", 1);
  (void)Run(*d, "f", 2, "", 3'000);
  d->Step();
  world_.now = t0 + 1'000;
  d->Step();
  world_.now = t0 + 1'200;
  const JobId c = Run(*d, "c", 1);
  d->Step();
  world_.now = t0 + 2'000;
  ASSERT_TRUE(d->Requeue(v, "alice", /*hold=*/true).ok());
  for (; world_.now <= t0 + 4'000; world_.now += 100) d->Step();
  ASSERT_EQ(world_.launches.size(), 4u) << Join(world_.launches, " ");
  EXPECT_EQ(world_.launches[3], fmt::format("{}@{}:2", c.value(), t0 + 3'000));
  EXPECT_EQ((*d->Get(v))["state"], "preempting");  // (its process is stopping, held after)
  EXPECT_EQ((*d->Get(v))["held"], true);
  EXPECT_EQ((*d->Get(x))["state"], "preempting");
}

TEST_F(LiveRelocateTest, AParkedJobMovesOntoGpusFreedBesideOneItHolds) {
  // Regression (an exploratory test): 4 GPUs, one queue in effect, grace 10 s, processes that
  // ignore SIGTERM. S, R1, R2 (1 GPU each; R2 5 s of work) run on 0, 1, 2 from 0. S is
  // cancelled at 1 s; W (2 GPUs) arrives then and is placed on 0 and 3 (no other place); J
  // (1 GPU) arrives at 4 s and is parked on 0 too. R2 ends at 5 s: 2 and 3 make a slot for W,
  // but only the GPUs free elsewhere were counted (1 of 2), so W waited the whole grace, and
  // J would have overtaken it. W moves to 2,3 and starts at 5 s; J, behind it, waits for S.
  auto d = StartIgnoringTerm();
  const int64_t t0 = t0_;
  const JobId stub = Run(*d, "s", 1);
  const JobId r1 = Run(*d, "r1", 1);
  (void)Run(*d, "r2", 1, "", 5'000);
  d->Step();
  world_.now = t0 + 1'000;
  ASSERT_TRUE(d->Cancel(stub).ok());
  const JobId w = Run(*d, "w", 2);
  d->Step();
  EXPECT_EQ((*d->Get(w))["state"], "starting");
  // The devices it is placed on, as its run will see them (ls wrote the core's range "0-3").
  EXPECT_EQ((*d->Get(w))["devices"], "0,3");
  // The nodes view: GPU 3 is W's, placed there (it said free).
  const auto placed = d->Nodes()["nodes"][0]["gpus"][3];
  EXPECT_EQ(placed["job"], w.value()) << placed.dump();
  EXPECT_EQ(placed["starting"], true) << placed.dump();
  world_.now = t0 + 4'000;
  const JobId jj = Run(*d, "j", 1);
  for (; world_.now <= t0 + 6'000; world_.now += 100) d->Step();
  ASSERT_EQ(world_.launches.size(), 4u) << Join(world_.launches, " ");
  EXPECT_EQ(world_.launches[3], fmt::format("{}@{}:2,3", w.value(), t0 + 5'000));
  EXPECT_EQ((*d->Get(jj))["state"], "starting");
  // The nodes view names J on GPU 0 (S's process holds it) and explain counts no GPU free
  // (it counted GPU 0, which S's process holds).
  const auto n = d->Nodes()["nodes"][0];
  EXPECT_EQ(n["gpus"][0]["job"], stub.value());
  EXPECT_EQ(n["gpus"][0]["ref"], stub.str());
  EXPECT_EQ(n["gpus"][0]["stopping"], true);  // cancelled: its process stops (it said "job 1")
  EXPECT_FALSE(n["gpus"][1].contains("stopping")) << n.dump();  // R1 runs there
  EXPECT_EQ(n["gpus_busy"], 4);
  EXPECT_EQ((*d->Explain(jj))["gpus_free"], 0);
  EXPECT_EQ((*d->Get(r1))["state"], "running");
}

TEST_F(LiveRelocateTest, AJobPlacedOnAPreemptedJobsGpusMovesWhenOthersFreeUp) {
  // Regression (an exploratory test, under srtf): dlas with an 8 GPU-s first queue, grace
  // 10 s. B (2 GPUs, 6 s of work) runs on 0,1 and X (2 GPUs) on 2,3 from 0; both are demoted
  // at 4 s. Y (2 GPUs) arrives at 5 s and preempts X, the last of the second queue: placed on
  // 2,3, it waits for X's checkpoint (X ignores SIGTERM: killed at 15 s). B ends at 6 s: the
  // pass gave 0,1 to X, which then waited for its own process too, and Y waited until 15 s.
  // Y moves to 0,1 and starts at 6 s; X is placed on its own GPUs again, behind its process.
  auto d = StartIgnoringTerm("8");
  const int64_t t0 = t0_;
  const JobId b = Run(*d, "b", 2, "", 6'000);
  const JobId x = Run(*d, "x", 2);
  d->Step();
  world_.now = t0 + 5'000;
  const JobId y = Run(*d, "y", 2);
  d->Step();
  ASSERT_EQ((*d->Get(x))["state"], "preempting");
  ASSERT_EQ((*d->Get(y))["state"], "starting");
  for (; world_.now <= t0 + 7'000; world_.now += 100) d->Step();
  ASSERT_EQ(world_.launches.size(), 3u) << Join(world_.launches, " ");
  EXPECT_EQ(world_.launches[0], fmt::format("{}@{}:0,1", b.value(), t0));
  EXPECT_EQ(world_.launches[2], fmt::format("{}@{}:0,1", y.value(), t0 + 6'000));
  EXPECT_EQ((*d->Get(y))["state"], "running");
  EXPECT_EQ((*d->Get(x))["state"], "starting");
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
  // nodes: X's old process still stops on 2,3 though X is starting again (a review: the GPU
  // said "job X" as if it ran there).
  const auto gpus = d->Nodes()["nodes"][0]["gpus"];
  EXPECT_EQ(gpus[2]["job"], x.value()) << gpus.dump();
  EXPECT_EQ(gpus[2]["stopping"], true) << gpus.dump();
  EXPECT_FALSE(gpus[0].contains("stopping")) << gpus.dump();  // Y runs there
}

}  // namespace
}  // namespace tiresias
