// A run the engine ended at a time limit of its own (Slurm's TIMEOUT: `--sbatch-arg=--time`,
// or `scontrol update TimeLimit=` on the running job), on the virtual clock of
// tests/live_fixture.h: the job ends `timeout`, not `failed`, with the engine's words, also
// after a replay.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "live_fixture.h"

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, ARunTheEnginesTimeLimitEndedEndsTheJobTimedOut) {
  // Regression (an exploratory test under Slurm): the job ended "failed ... (exit 143: Slurm
  // job 48 TIMEOUT (TimeLimit))". Fails without the fix: its state is "failed". The job has
  // no time limit of tiresias's (the engine's message does not name one).
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.procs.size(), 1u);
  world_.now += 3'000;
  auto& run = world_.procs.begin()->second;
  run.code = 143;  // the SIGTERM Slurm sent at its limit, as the batch script exits then
  run.timed_out = true;
  run.exit_at = world_.now;
  d->Step();
  auto ja = *d->Get(a);
  EXPECT_EQ(ja["state"], "timeout") << ja.dump();
  EXPECT_NE(ja["message"].get<std::string>().find("Slurm job 48 TIMEOUT"), std::string::npos)
      << ja.dump();
  EXPECT_EQ(world_.launches.size(), 1u) << "not run again";
  d.reset();
  d = Start();
  EXPECT_EQ((*d->Get(a))["state"], "timeout");
}

}  // namespace
}  // namespace tiresias
