// An admin's hold in the engine (Slurm: `scontrol hold` on a tiresias job's batch job), on the
// virtual clock of tests/live_fixture.h: the job is held here too (an admin hold that only
// the engine releases, journalled, explained), a run the core started meanwhile is requeued
// and held (the engine keeps it pending), and the job is released and runs once the engine's
// hold is gone. An engine that cannot say (no snapshot) changes nothing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "live_fixture.h"

namespace tiresias {
namespace {

const std::string kHeld =
    "held by an admin in Slurm (scontrol hold 7): `scontrol uhold 7` gives it back to tiresias";

TEST_F(LiveSchedulerTest, AnAdminsHoldInTheEngineHoldsTheJobUntilTheEngineReleasesIt) {
  // One node of 4 GPUs. A (4 GPUs) runs; B (1 GPU) waits behind it and an admin holds B's
  // Slurm job. B is held here, as an admin hold in the engine: show and explain say how to
  // release it, and `tiresias release` is refused even to an admin (the engine's hold would
  // stay). When A ends, B does not start. The engine's hold gone, B is released and runs.
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 4, .argv = {"train"}});
  world_.work[a] = 10'000;
  d->Step();
  const JobId b = *d->Submit({.name = "b", .gpus = 1, .argv = {"train"}});
  world_.work[b] = 1'000;
  world_.engine_holds = std::map<JobId, std::string>{{b, kHeld}};
  d->Step();
  auto jb = *d->Get(b);
  EXPECT_EQ(jb["held"], true) << jb.dump();
  EXPECT_EQ(jb["held_by"], "engine") << jb.dump();
  EXPECT_EQ((*d->Explain(b))["reasons"][0], kHeld) << d->Explain(b)->dump();
  auto release = d->Hold(b, /*hold=*/false, nullptr, "root", /*admin=*/true);
  ASSERT_FALSE(release.ok());
  EXPECT_EQ(release.message(), fmt::format("job {}: {}", b.value(), kHeld));
  const int64_t t0 = world_.now;
  for (; world_.now <= t0 + 15'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "finished");
  EXPECT_EQ((*d->Get(b))["state"], "pending");
  // An engine that cannot say (no contact): B stays held.
  world_.engine_holds.reset();
  d->Step();
  EXPECT_EQ((*d->Get(b))["held"], true);
  world_.engine_holds = std::map<JobId, std::string>{};
  for (const int64_t t1 = world_.now; world_.now <= t1 + 3'000; world_.now += 500) d->Step();
  jb = *d->Get(b);
  EXPECT_EQ(jb["state"], "finished") << jb.dump();
  EXPECT_EQ(jb["held"], false) << jb.dump();
  // Journalled as holds by "slurm", an admin's, with the engine's words.
  int holds = 0;
  for (const Event& e : Journal(dir_ / "tiresias.db")) {
    if (e.kind != EventKind::kHold) continue;
    EXPECT_EQ(e.job, b);
    EXPECT_EQ(e.detail["by"], "slurm");
    EXPECT_EQ(e.detail["held"], holds == 0) << e.detail.dump();
    ++holds;
  }
  EXPECT_EQ(holds, 2);
}

TEST_F(LiveSchedulerTest, ARunStartedWhileTheEngineHoldsItIsRequeuedAndHeld) {
  // The core starts A; its Slurm job was held by an admin meanwhile (Slurm keeps it pending,
  // and serve does not release it). A is requeued and held at the next step: its process is
  // stopped, its GPUs are free, and nothing counts. A restart keeps it held.
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 2, .argv = {"train"}});
  world_.work[a] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches.size(), 1u);
  world_.engine_holds = std::map<JobId, std::string>{{a, kHeld}};
  const int64_t t0 = world_.now;
  for (; world_.now <= t0 + 5'000; world_.now += 500) d->Step();
  auto ja = *d->Get(a);
  EXPECT_EQ(ja["state"], "pending") << ja.dump();
  EXPECT_EQ(ja["held_by"], "engine") << ja.dump();
  EXPECT_EQ(world_.launches.size(), 1u);
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kRequeue), 1);
  d.reset();
  d = Start();
  for (const int64_t t1 = world_.now; world_.now <= t1 + 2'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(a))["held_by"], "engine");
  EXPECT_EQ(world_.launches.size(), 1u);
}

TEST_F(LiveSchedulerTest, AHoldOfTiresiasOwnOutlivesTheEnginesAndTheOtherWayRound) {
  // Regression (a review): the engine's hold took over tiresias's hold fields, so a user's
  // `tiresias hold` ended with the admin's `scontrol release`, and a `tiresias hold` while
  // the engine held the job answered OK and recorded nothing. Now they are separate: A, held
  // by its user, then by the engine, then released by the engine, is still held by its user;
  // B, held by the engine, then by its user, released by the engine, is held by its user.
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}, .hold = true});
  const JobId b = *d->Submit({.name = "b", .gpus = 1, .argv = {"train"}});
  world_.work[a] = world_.work[b] = 1'000;
  world_.engine_holds = std::map<JobId, std::string>{{a, kHeld}, {b, kHeld}};
  d->Step();
  EXPECT_EQ((*d->Get(b))["held_by"], "engine");
  ASSERT_TRUE(d->Hold(b, /*hold=*/true, nullptr, "alice").ok());
  world_.engine_holds = std::map<JobId, std::string>{};
  for (const int64_t t0 = world_.now; world_.now <= t0 + 3'000; world_.now += 500) d->Step();
  for (JobId id : {a, b}) {
    auto j = *d->Get(id);
    EXPECT_EQ(j["state"], "pending") << j.dump();
    EXPECT_EQ(j["held_by"], "user") << j.dump();
  }
  EXPECT_TRUE(world_.launches.empty());
  // While the engine holds it, tiresias's own release ends only tiresias's hold.
  world_.engine_holds = std::map<JobId, std::string>{{a, kHeld}};
  d->Step();
  ASSERT_TRUE(d->Hold(a, /*hold=*/false).ok());
  EXPECT_EQ((*d->Get(a))["held_by"], "engine");
  EXPECT_FALSE(d->Hold(a, /*hold=*/false).ok());
}

}  // namespace
}  // namespace tiresias
