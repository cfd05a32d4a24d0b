// LiveScheduler's capacity while processes stop (live_scheduler_capacity.cc), on the virtual
// clock of tests/live_fixture.h: the GPUs of a cancelled job whose process runs through its
// grace are left out of the core until it is gone, so that the next job starts on idle GPUs
// instead of waiting for it; across a restart too.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "live_fixture.h"

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, ACancelledJobsGpusAreLeftOutUntilItsProcessIsGone) {
  // One node of 4 GPUs, grace 4 s, processes that ignore SIGTERM (only the kill at the end of
  // the grace stops them). A (2 GPUs) runs on GPUs 0,1 and is cancelled at 1 s: its process
  // holds them until 5 s. C (2 GPUs), submitted then, starts at once on the idle GPUs 2,3
  // (the core gave it 0,1 before, and it waited 4 s for A's process while 2,3 stayed idle).
  // A restart in the grace keeps 0,1 out; once A's process is gone they are usable again and
  // D (2 GPUs) starts there at once.
  policy_opts_ = {"thresholds=100000"};
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 2, .argv = {"train"}});
  world_.work[a] = 1'000'000;
  d->Step();
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
  const std::string events = d->Events(0, 100)->dump();
  EXPECT_NE(events.find(
                fmt::format("GPU(s) 0,1 still held by the stopping process of job {}", a.value())),
            std::string::npos)
      << events;

  // A restart in the grace: the journal's replay leaves 0,1 out as they were.
  world_.now = t0 + 2'000;
  d.reset();
  d = Start();
  d->Step();
  const JobId e = *d->Submit({.name = "e", .gpus = 2, .argv = {"train"}});
  world_.work[e] = 1'000;
  d->Step();
  EXPECT_EQ((*d->Get(e))["state"], "pending") << "0,1 are still A's";
  EXPECT_EQ(world_.launches.size(), 2u);

  // A is killed at 5 s: 0,1 are usable again and E starts there at once.
  world_.now = t0 + 5'000;
  d->Step();
  d->Step();
  ASSERT_EQ(world_.launches.size(), 3u);
  EXPECT_EQ(world_.launches[2], fmt::format("{}@{}:0,1", e.value(), t0 + 5'000));
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
  EXPECT_NE(d->Events(0, 100)->dump().find("GPU(s) 0,1 free again"), std::string::npos);
}

TEST_F(LiveSchedulerTest, AVictimsGpusTheCoreDidNotGiveAwayAreLeftOutUntilItIsGone) {
  // dlas with an 8 GPU-s first queue on 4 GPUs, grace 4 s, processes that ignore SIGTERM.
  // X (4 GPUs) runs from t0 and is demoted at 2 s; Y (2 GPUs) arrives at 3 s and preempts it:
  // the core gives Y two of X's GPUs and counts the other two free, but X's process holds all
  // four until its kill at 7 s. Z (2 GPUs, in the first queue too) arriving at 4 s waits for
  // them, as the core now knows, and starts at 7 s; no launch lands on a GPU X still holds.
  policy_opts_ = {"thresholds=8"};
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId x = *d->Submit({.name = "x", .gpus = 4, .argv = {"train"}});
  world_.work[x] = 1'000'000;
  d->Step();
  world_.now = t0 + 3'000;
  d->Step();
  const JobId y = *d->Submit({.name = "y", .gpus = 2, .argv = {"train"}});
  world_.work[y] = 1'000'000;
  d->Step();
  EXPECT_EQ((*d->Get(x))["state"], "preempting");
  world_.now = t0 + 4'000;
  const JobId z = *d->Submit({.name = "z", .gpus = 2, .argv = {"train"}});
  world_.work[z] = 1'000'000;
  d->Step();
  const std::string events = d->Events(0, 100)->dump();
  EXPECT_NE(events.find(fmt::format("still held by the stopping process of job {}", x.value())),
            std::string::npos)
      << events;
  for (world_.now = t0 + 7'000; world_.now <= t0 + 8'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(y))["state"], "running");
  EXPECT_EQ((*d->Get(z))["state"], "running");
  EXPECT_TRUE(world_.overlaps.empty()) << Join(world_.overlaps, "; ");
}

}  // namespace
}  // namespace tiresias
