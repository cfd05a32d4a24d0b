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
  // Waiting on a held job: says so (found by exploratory use: explain named running jobs).
  const JobId e = *d->Submit(
      {.name = "e", .gpus = 1, .argv = {"x"}, .dependency = fmt::format("afterok:{}", c.value())});
  EXPECT_EQ(unknown(e), fmt::format("waiting for its dependency (afterok:{}; job {} is held by its "
                                    "user)",
                                    c.value(), c.value()));
  EXPECT_EQ(unknown(tasks[1]),
            "waiting for a running task of its array to end (at most 1 at once)");
  EXPECT_EQ(unknown(tasks[0]), "(a forecast)");  // running: forecast as before
}

TEST_F(LiveSchedulerTest, ExplainNamesArrayTasksAsTheirUsersDo) {
  // Regression (an exploratory test): explain named an array's tasks by their internal ids
  // ("running ahead: job 49", "tiresias release 19", "most in the way: job 50"), which read
  // as other jobs or a whole array. 4 GPUs; an array 5-7 of 4-GPU jobs: 5 runs, 6 and 7 wait.
  auto d = Start();
  std::vector<JobId> tasks;
  ASSERT_TRUE(d->Submit({.gpus = 4, .argv = {"x"}, .array = "5-7"}, &tasks).ok());
  for (JobId j : tasks) world_.work[j] = 100'000;
  d->Step();
  ASSERT_EQ((*d->Get(tasks[0]))["state"], "running");
  const std::string a = tasks[0].str();
  const auto why = *d->Explain(tasks[2]);
  EXPECT_EQ(why["running_ahead_refs"], nlohmann::json::array({a + "_5"})) << why.dump();
  EXPECT_EQ(why["waiting_ahead_refs"], nlohmann::json::array({a + "_6"})) << why.dump();
  const auto forecast = *d->Estimate(tasks[2]);
  ASSERT_FALSE(forecast["in_the_way"].empty()) << forecast.dump();
  EXPECT_EQ(forecast["in_the_way"][0]["ref"].get<std::string>().substr(0, a.size() + 1), a + "_")
      << forecast.dump();
  ASSERT_TRUE(d->Hold(tasks[2], true).ok());
  EXPECT_EQ((*d->Estimate(tasks[2]))["unknown"],
            fmt::format("held by its user (tiresias release {}_7)", a));
}

TEST_F(LiveSchedulerTest, ExplainOfAnArrayWithNoTaskWaitingExplainsOneNotEnded) {
  // Regression (an exploratory test): with no task waiting, explain of an array's id explained
  // its first task, finished, while another ran. Tasks 0 (1 s of work) and 1 (100 s) run at
  // once on 4 GPUs; at 2 s task 0 has finished: task 1 is explained.
  auto d = Start();
  std::vector<JobId> tasks;
  ASSERT_TRUE(d->Submit({.gpus = 1, .argv = {"x"}, .array = "0-1"}, &tasks).ok());
  world_.work[tasks[0]] = 1'000;
  world_.work[tasks[1]] = 100'000;
  const int64_t t0 = world_.now;
  for (; world_.now <= t0 + 2'000; world_.now += 100) d->Step();
  ASSERT_EQ((*d->Get(tasks[0]))["state"], "finished");
  const auto [target, array] = d->ExplainArray(tasks);
  EXPECT_EQ(target, tasks[1]);
  EXPECT_EQ(array["explained"], tasks[0].str() + "_1");
  EXPECT_EQ(array["explained_waits"], false);
}

TEST_F(LiveSchedulerTest, AHoldAndItsReleaseAreInTheJournalAlsoForAJobWaitingOnADependency) {
  // Regression (an exploratory test): holding and releasing a job that waits on a dependency
  // left no trace in its timeline (its eligibility, which the step journals, did not change).
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"x"}});
  world_.work[a] = 100'000;
  const JobId b = *d->Submit(
      {.name = "b", .gpus = 1, .argv = {"x"}, .dependency = fmt::format("afterok:{}", a.value())});
  d->Step();
  ASSERT_TRUE(d->Hold(b, true, nullptr, "alice").ok());
  d->Step();
  ASSERT_TRUE(d->Hold(b, false, nullptr, "root", /*admin=*/true).ok());
  d->Step();
  const std::string events = d->Events(0, 100, b)->dump();
  EXPECT_NE(events.find(R"("text":"held by alice")"), std::string::npos) << events;
  EXPECT_NE(events.find(R"("text":"released by root")"), std::string::npos) << events;
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kHold), 2);
  d.reset();
  d = Start();  // a narrative: the replay is as before
  EXPECT_EQ((*d->Get(b))["held"], false);
  EXPECT_EQ((*d->Get(b))["state"], "pending");
}

TEST_F(LiveSchedulerTest, ASingletonWaitsForEveryJobOfItsNameAndUserSubmittedBefore) {
  // sbatch --dependency=singleton: on 4 GPUs, alice's `train` (a, 5 s) and bob's `train` (b)
  // run; alice's singleton `train` (c) waits for a alone, and starts when a ends at 5 s;
  // alice's singleton `eval` (e) has no such job before it and runs at once. A restart keeps
  // the rule.
  auto d = Start();
  const int64_t t0 = world_.now;
  auto submit = [&](const char* name, const char* user, const char* dep, Duration work) {
    const JobId id =
        *d->Submit({.name = name, .user = user, .gpus = 1, .argv = {"x"}, .dependency = dep});
    world_.work[id] = work;
    return id;
  };
  const JobId a = submit("train", "alice", "", 5'000);
  const JobId b = submit("train", "bob", "", 100'000);
  const JobId c = submit("train", "alice", "singleton", 100'000);
  const JobId e = submit("eval", "alice", "singleton", 100'000);
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_EQ((*d->Get(b))["state"], "running");
  EXPECT_EQ((*d->Get(e))["state"], "running");
  EXPECT_EQ((*d->Get(c))["reason"], "Dependency");
  EXPECT_EQ((*d->Explain(c))["reasons"][0],
            fmt::format("waiting for its dependency (singleton; job {} of the same name and user "
                        "has not ended)",
                        a.value()));
  // A dependency that can never be met ends the job whatever else it waits for (a review:
  // `singleton,afterok:X` with X cancelled waited, `afterok:X,singleton` was cancelled).
  const JobId gone = submit("gone", "alice", "", 1'000);
  ASSERT_TRUE(d->Cancel(gone).ok());
  const JobId never =
      submit("train", "alice", fmt::format("singleton,afterok:{}", gone.value()).c_str(), 1'000);
  // An array's tasks wait one after another, each named as its user names it.
  std::vector<JobId> tasks;
  ASSERT_TRUE(d->Submit({.name = "arr",
                         .user = "alice",
                         .gpus = 1,
                         .argv = {"x"},
                         .dependency = "singleton",
                         .array = "0-1"},
                        &tasks)
                  .ok());
  for (JobId t : tasks) world_.work[t] = 100'000;
  d->Step();
  EXPECT_EQ((*d->Get(never))["state"], "cancelled");
  EXPECT_EQ((*d->Get(tasks[0]))["state"], "running");
  EXPECT_EQ((*d->Explain(tasks[1]))["reasons"][0],
            fmt::format("waiting for its dependency (singleton; job {}_0 of the same name and "
                        "user has not ended)",
                        tasks[0].value()));
  d.reset();
  d = Start();
  for (; world_.now < t0 + 4'900; world_.now += 100) d->Step();
  EXPECT_EQ((*d->Get(c))["state"], "pending");
  for (; world_.now <= t0 + 5'200; world_.now += 100) d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "finished");
  EXPECT_EQ((*d->Get(c))["state"], "running");
}

TEST_F(LiveSchedulerTest, ACancelInTheTimeLimitsGraceEndsTheJobTimedOut) {
  // Regression: explain said a job stopping at its time limit was "preempted; checkpointing",
  // and a cancel during that grace (by request, or in the engine) made it `cancelled`
  // (`wait`: 125), although its end was its time limit (Slurm: TIMEOUT; `wait`: 124). It ends
  // as a time limit's end does: one finish in the core, at the limit (the policies learn its
  // service). An ended job's explain names its state.
  for (const std::string how : {"request", "engine"}) {
    SCOPED_TRACE(how);
    world_ = FakeWorld{.ignore_term = true};
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    grace_ = Seconds(30);
    const int64_t t0 = world_.now;
    std::unique_ptr<LiveScheduler> d;
    const JobId t = TellToStopAtItsTimeLimit(d, t0);
    EXPECT_EQ((*d->Explain(t))["reasons"][0],
              "its time limit (00:00:10) is reached; its process is stopping (grace period)");
    world_.now = t0 + 12'000;
    if (how == "request") {
      ASSERT_TRUE(d->Cancel(t).ok());
    } else {
      for (auto& [pid, p] : world_.procs) {
        if (p.job == t) p.cancelled = true, p.exit_at = world_.now;
      }
    }
    for (; world_.now < t0 + 50'000; world_.now += 1'000) d->Step();
    auto tj = *d->Get(t);
    EXPECT_EQ(tj["state"], "timeout") << tj.dump();
    EXPECT_TRUE(tj["message"].get<std::string>().starts_with(
        how == "request" ? "time limit 00:00:10 reached (cancelled in its grace period)"
                         : "time limit 00:00:10 reached (cancelled outside tiresias in its grace"))
        << tj.dump();
    // Why it ended, as ls says (found by a tester: only "timeout; nothing to wait for").
    EXPECT_EQ((*d->Explain(t))["reasons"][0], "timeout: " + tj["message"].get<std::string>());
    const auto journal = Journal(dir_ / "tiresias.db");
    EXPECT_EQ(Count(journal, EventKind::kFinish), 1);
    EXPECT_EQ(Count(journal, EventKind::kCancel), 0);
    // The core ended its run at the limit; the cancel is said, as the exit after it.
    const std::string events = d->Events(0, 100, t)->dump();
    EXPECT_NE(
        events.find(how == "request" ? "cancelled (by request) in its time limit's grace period"
                                     : "after cancel"),
        std::string::npos)
        << events;
    if (how == "request") {  // its process, killed at the grace's end, exits after its limit
      EXPECT_NE(events.find("after time limit"), std::string::npos) << events;
      EXPECT_EQ(events.find("after cancel"), std::string::npos) << events;
    }
    d.reset();
    d = Start();  // a replay agrees
    EXPECT_EQ((*d->Get(t))["state"], "timeout");
  }
}

}  // namespace
}  // namespace tiresias
