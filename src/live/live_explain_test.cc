// LiveScheduler's answers to "why is my job pending?" (explain) and its forecasts for jobs the
// core holds back (a hold, a dependency, an array's limit), jobs in their time limit's grace,
// and jobs that ended, on the virtual clock of tests/live_fixture.h. Found by exploratory use
// of the CLI.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "live_fixture.h"

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, AJobHeldBackHasNoForecastButItsReason) {
  // Regression: a job waiting on a dependency or its array's limit was forecast as held for
  // ever ("likely to start not within a year") with running jobs it does not wait for named
  // "most in the way"; it started seconds later. Now the estimate says why there is none.
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"x"}});
  const JobId b = *d->Submit(
      {.name = "b", .gpus = 1, .argv = {"x"}, .dependency = fmt::format("afterok:{}", a.value())});
  const JobId c = *d->Submit({.name = "c", .gpus = 1, .argv = {"x"}, .hold = true});
  std::vector<JobId> tasks;
  ASSERT_TRUE(d->Submit({.gpus = 1, .argv = {"x"}, .array = "0-1%1"}, &tasks).ok());
  for (JobId j : {a, b, c, tasks[0], tasks[1]}) world_.work[j] = 100'000;
  d->Step();
  ASSERT_EQ((*d->Get(a))["state"], "running");
  const auto unknown = [&](JobId j) {
    auto e = d->Estimate(j);
    EXPECT_TRUE(e.ok()) << e.status().message();
    return e.ok() ? e->value("unknown", "(a forecast)") : "";
  };
  const std::string dep = fmt::format("waiting for its dependency (afterok:{})", a.value());
  EXPECT_EQ(unknown(b), dep);
  EXPECT_EQ((*d->Explain(b))["reasons"][0], dep);
  EXPECT_EQ(unknown(c), fmt::format("held by its user (tiresias release {})", c.value()));
  EXPECT_EQ(unknown(tasks[1]),
            "waiting for a running task of its array to end (at most 1 at once)");
  EXPECT_EQ(unknown(tasks[0]), "(a forecast)");  // running: forecast as before
}

TEST_F(LiveSchedulerTest, ACancelInTheTimeLimitsGraceEndsTheJobTimedOut) {
  // Regression: explain said a job stopping at its time limit was "preempted; checkpointing",
  // and a cancel during that grace made it `cancelled` (`wait`: 125), although its end was
  // its time limit (Slurm: TIMEOUT; `wait`: 124). An ended job's explain named its state.
  grace_ = Seconds(30);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId t = TellToStopAtItsTimeLimit(d, t0);
  EXPECT_EQ((*d->Explain(t))["reasons"][0],
            "its time limit (00:00:10) is reached; its process is stopping (grace period)");
  world_.now = t0 + 12'000;
  ASSERT_TRUE(d->Cancel(t).ok());
  for (; world_.now < t0 + 50'000; world_.now += 1'000) d->Step();
  auto tj = *d->Get(t);
  EXPECT_EQ(tj["state"], "timeout") << tj.dump();
  EXPECT_EQ(tj["message"], "time limit 00:00:10 reached (cancelled in its grace period)");
  EXPECT_EQ((*d->Explain(t))["reasons"][0], "timeout; nothing to wait for");
  d.reset();
  d = Start();  // a replay agrees
  EXPECT_EQ((*d->Get(t))["state"], "timeout");
}

}  // namespace
}  // namespace tiresias
