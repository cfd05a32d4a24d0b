// LiveScheduler under faults and in the middle of its protocols, on the virtual clock of
// tests/live_fixture.h: nodes that go down and come back, GPUs held outside the scheduler,
// runs lost with their node or cancelled in the engine, array limits, jobs that complete
// during their grace period, checkpoint markers and checkpoint-aware victims. Accounting
// across restarts: live_restart_accounting_test.cc.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "live_fixture.h"

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, NodeDownEvictsItsJobsAndTheCoreTakesItBackWhenItReturns) {
  // Two nodes x 2 GPUs (a cluster executor's), dlas + consolidate: A on n1 (node 0), B on n2
  // (node 1). n2 goes down at 10 s: B is evicted (SIGTERM, checkpoint) and waits; nothing is
  // placed on n2 while it is down, also after a crash and replay; when n2 returns B resumes
  // there. A 1-GPU job C waits meanwhile: n1 is full and n2 down.
  cluster_ = {{"n1", 2}, {"n2", 2}};
  policy_opts_ = {"thresholds=100000"};
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 2, .argv = {"train"}});
  const JobId b = *d->Submit({.name = "b", .gpus = 2, .argv = {"train"}});
  world_.work[a] = world_.work[b] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches,
            (std::vector<std::string>{fmt::format("{}@{}:0,1", a.value(), t0),
                                      fmt::format("{}@{}:1:0,1:1", b.value(), t0)}));
  world_.now += 10'000;
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "mixed", .gpus = 2},
      {.name = "n2", .state = "down", .usable = false, .gpus = 2, .reason = "Not responding"}};
  d->Step();  // capacity: n2 has no usable GPU; B is told to stop
  EXPECT_EQ((*d->Get(b))["state"], "preempting");
  d->Step();  // B's process checkpointed and exited
  EXPECT_EQ((*d->Get(b))["state"], "pending");
  EXPECT_NE((*d->Get(b))["message"].get<std::string>().find("evicted: node n2 is down: Not "
                                                            "responding"),
            std::string::npos)
      << (*d->Get(b)).dump();
  const JobId c = *d->Submit({.name = "c", .gpus = 1, .argv = {"train"}});
  world_.work[c] = 1'000;
  d->Step();
  EXPECT_EQ((*d->Get(c))["state"], "pending");
  auto why = d->Explain(c);
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->dump().find("2 of the cluster's 4 GPUs are unavailable"), std::string::npos)
      << why->dump();
  EXPECT_EQ(d->Nodes()["nodes"][1]["gpus_usable"], 0);
  EXPECT_EQ(d->Nodes()["nodes"][1]["state"], "down");
  // kill -9 and restart: the replayed core still has n2 down.
  d.reset();
  world_.now += 1'000;
  d = Start();
  d->Step();
  EXPECT_EQ((*d->Get(b))["state"], "pending");
  EXPECT_EQ(world_.launches.size(), 2u);
  // n2 is back: B resumes there (ahead of C in dlas's first queue, by submit time).
  world_.now += 5'000;
  world_.node_report = std::vector<NodeReport>{{.name = "n1", .state = "mixed", .gpus = 2},
                                               {.name = "n2", .state = "idle", .gpus = 2}};
  d->Step();
  ASSERT_EQ(world_.launches.size(), 3u);
  EXPECT_EQ(world_.launches.back(), fmt::format("{}@{}:1:0,1:1", b.value(), t0 + 16'000));
  EXPECT_EQ((*d->Get(b))["state"], "running");
  EXPECT_EQ((*d->Get(c))["state"], "pending");
  const auto journal = Journal(dir_ / "tiresias.db");
  EXPECT_EQ(Count(journal, EventKind::kCapacity), 2);
  EXPECT_EQ(Count(journal, EventKind::kEvict), 1);
}

TEST_F(LiveSchedulerTest, GpusHeldOutsideAreNeverBookedAndABigJobWaitsInsteadOfBeingRejected) {
  // One node x 4 GPUs; a job outside tiresias holds 2 of them. A 4-GPU job is accepted (it fits
  // the node) and waits; a 2-GPU job, ahead of it, runs on the 2 usable GPUs. The outside job
  // ends: the 4-GPU job starts once the 2-GPU job is done too.
  cluster_ = {{"n1", 4}};
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  world_.node_report = std::vector<NodeReport>{{.name = "n1",
                                                .state = "mixed",
                                                .gpus = 4,
                                                .gpus_outside = 2,
                                                .outside_jobs = {"slurm 9 (bob, 2 GPUs)"}}};
  d->Step();
  const JobId small = *d->Submit({.name = "small", .gpus = 2, .argv = {"train"}});
  auto big = d->Submit({.name = "big", .gpus = 4, .argv = {"train"}});
  ASSERT_TRUE(big.ok()) << big.status().message();
  world_.work[*big] = 1'000;
  world_.work[small] = 5'000;
  d->Step();
  EXPECT_EQ((*d->Get(*big))["state"], "pending");
  EXPECT_EQ((*d->Get(small))["state"], "running");
  ASSERT_EQ(world_.launches.size(), 1u);
  EXPECT_NE(d->Explain(*big)->dump().find("it needs 4 and only 2 are usable now"),
            std::string::npos);
  const auto n = d->Nodes()["nodes"][0];
  EXPECT_EQ(n["gpus_usable"], 2);
  EXPECT_EQ(n["outside_jobs"][0], "slurm 9 (bob, 2 GPUs)");
  world_.now += 1'000;
  world_.node_report = std::vector<NodeReport>{{.name = "n1", .state = "mixed", .gpus = 4}};
  d->Step();
  EXPECT_EQ((*d->Get(*big))["state"], "pending") << "the 2-GPU job still runs";
  world_.now += 4'000;
  d->Step();
  d->Step();
  EXPECT_EQ((*d->Get(small))["state"], "finished");
  EXPECT_EQ((*d->Get(*big))["state"], "running");
}

TEST_F(LiveSchedulerTest, ARunLostWithItsNodeResumesAndACancelInTheEngineCancels) {
  // A cluster engine reports A's run lost (its node failed): not A's end. A keeps its service,
  // is relaunched (attempt 1) and the journal says why. Then someone cancels A in the engine
  // (scancel): A is cancelled with the engine's reason, and H, which waited, takes its GPUs.
  cluster_ = {{"n1", 2}};
  policy_opts_ = {"thresholds=100000"};
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 2, .argv = {"train"}});
  const JobId h = *d->Submit({.name = "h", .gpus = 2, .argv = {"train"}});
  world_.work[a] = world_.work[h] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches.size(), 1u);
  world_.now += 3'000;
  auto& first = world_.procs.begin()->second;
  first.lost = true;
  first.exit_at = world_.now;
  d->Step();
  EXPECT_EQ(world_.launches.size(), 2u) << "relaunched at once";
  auto ja = *d->Get(a);
  EXPECT_EQ(ja["state"], "running");
  EXPECT_EQ(ja["attempt"], 1);
  EXPECT_DOUBLE_EQ(ja["attained_gpu_s"].get<double>(), 6.0);
  const auto journal = Journal(dir_ / "tiresias.db");
  EXPECT_EQ(Count(journal, EventKind::kRelaunch), 1);
  EXPECT_EQ(Count(journal, EventKind::kInterrupt), 1);
  EXPECT_EQ(Count(journal, EventKind::kFinish), 0);
  world_.now += 1'000;
  auto& second = world_.procs.rbegin()->second;
  second.cancelled = true;
  second.exit_at = world_.now;
  d->Step();
  ja = *d->Get(a);
  EXPECT_EQ(ja["state"], "cancelled");
  EXPECT_EQ(ja["message"], "cancelled outside tiresias: scancel by bob");
  EXPECT_EQ((*d->Get(h))["state"], "running");
  // A replay agrees: A cancelled, H running.
  d.reset();
  d = Start();
  EXPECT_EQ((*d->Get(a))["state"], "cancelled");
  EXPECT_EQ((*d->Get(h))["state"], "running");
}

TEST_F(LiveSchedulerTest, ARunLostAfterItsWorkWasDoneEndsFinishedAndIsNotRunAgain) {
  // Regression (an exploratory test under Slurm): slurmctld lost its state (kill -9) after a
  // job had done its work and left its done file; the engine reported the run lost, and the
  // job ran again (a preemption counted). Its done file makes the lost run its end; so too
  // for a run being stopped whose exit the engine no longer knows.
  for (const bool stopping : {false, true}) {
    SCOPED_TRACE(stopping ? "while it was being stopped" : "while it ran");
    world_ = FakeWorld{};
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    cluster_ = {{"n1", 2}};
    policy_opts_ = {"thresholds=100000"};
    auto d = Start();
    const JobId a = *d->Submit({.name = "a", .gpus = 2, .argv = {"train"}});
    world_.work[a] = 1'000'000;
    d->Step();
    ASSERT_EQ(world_.launches.size(), 1u);
    world_.now += 3'000;
    if (stopping) {
      ASSERT_TRUE(d->Requeue(a, "alice").ok());
    }
    auto& run = world_.procs.begin()->second;
    run.lost = !stopping;
    run.done_file = true;
    run.exit_at = world_.now;
    if (stopping) {  // its exit not known (Slurm forgot the job)
      run.sig = 0;
      run.code = -1;
    }
    d->Step();
    world_.now += 1'000;
    d->Step();
    EXPECT_EQ(world_.launches.size(), 1u) << "not run again";
    EXPECT_EQ((*d->Get(a))["state"], "finished") << d->Get(a)->dump();
    d.reset();
    d = Start();  // a replay agrees
    EXPECT_EQ((*d->Get(a))["state"], "finished");
  }
}

TEST_F(LiveSchedulerTest, ALaunchedRunTheEngineKeepsPendingCountsNoServiceAndNoTime) {
  // Regression (an exploratory test under Slurm): a job released to Slurm, which kept it
  // PENDING (a reservation on its node), showed `running`, attained service, was demoted, and
  // ended `timeout` at its 15 s limit without ever running. Once the engine has kept it
  // waiting 5 s (a release usually starts within a second), it is pinned (at most 120 s from
  // its start; the pin also takes back those 5 s): at 30 s it has 0 GPU-s and 0 s of its
  // limit; started then, it counts from the end of the pin in force (at most 10 s later).
  policy_opts_ = {"thresholds=8"};
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}, .time = "0:15"});
  world_.work[a] = 1'000'000;
  world_.not_started[a] = "Slurm has not started job 7 yet (ReqNodeNotAvail)";
  const int64_t t0 = world_.now;
  for (; world_.now <= t0 + 30'000; world_.now += 500) d->Step();
  auto j = *d->Get(a);
  // Launched, not started by the engine: `starting`, as a launch not yet begun (regression,
  // session 48: it showed `running`), in ls's state filter and explain too.
  EXPECT_EQ(j["state"], "starting") << j.dump();
  EXPECT_EQ(j["reason"], "Starting") << j.dump();
  ListFilter starting;
  starting.states = {LiveState::kStarting};
  EXPECT_EQ(d->List(starting).size(), 1u);
  EXPECT_EQ((*d->Explain(a))["state"], "starting");
  EXPECT_EQ((*d->Explain(a))["reasons"][0],
            "scheduled to start; launched; Slurm has not started job 7 yet (ReqNodeNotAvail)");
  EXPECT_DOUBLE_EQ(j["attained_gpu_s"].get<double>(), 0.0) << j.dump();
  EXPECT_DOUBLE_EQ(j["time_s"].get<double>(), 0.0) << j.dump();
  EXPECT_EQ(j["queue"], "Q1");
  EXPECT_NE(j["message"].get<std::string>().find("ReqNodeNotAvail"), std::string::npos);
  world_.not_started.erase(a);
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");  // the engine started it
  for (; world_.now <= t0 + 60'000; world_.now += 500) d->Step();
  j = *d->Get(a);
  EXPECT_EQ(j["state"], "timeout") << j.dump();  // its 15 s, run after it started
  // A replay agrees (the pins are journalled).
  const double attained = j["attained_gpu_s"].get<double>();
  d.reset();
  d = Start();
  EXPECT_DOUBLE_EQ((*d->Get(a))["attained_gpu_s"].get<double>(), attained);
}

// A start the engine cannot take yet (Slurm: the job's held batch job is still queued for
// sbatch, 60 s in a burst on a busy machine) holds its GPUs but does nothing: no service
// counts until its launch. dlas with an 8 GPU-s first queue: a 1-GPU job started at 0 and
// launched at 30 s has 0 GPU-s at 29 s (Q1; counted from its start it would have 29 GPU-s,
// demoted at 8 s), then runs its 3 s of work and finishes at 33 s in Q1. Found by the Slurm
// scale test: such a job was demoted and preempted before it ever ran.
TEST_F(LiveSchedulerTest, AStartTheEngineCannotTakeYetCountsNoServiceUntilItsLaunch) {
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId a = OneJobTheEngineTakesAt(d, t0 + 30'000);
  for (world_.now = t0; world_.now < t0 + 30'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Explain(a))["reasons"][0],
            fmt::format("scheduled to start; waiting for the cluster engine: job {}: its held "
                        "Slurm job is being submitted",
                        a.value()));
  auto ja = *d->Get(a);
  EXPECT_EQ(ja["state"], "starting") << ja.dump();  // its GPUs held, not launched
  EXPECT_EQ(ja["queue"], "Q1") << ja.dump();
  EXPECT_EQ(ja["attained_gpu_s"], 0.0) << ja.dump();
  EXPECT_NE(ja["message"].get<std::string>().find("being submitted"), std::string::npos)
      << ja.dump();
  EXPECT_TRUE(world_.launches.empty());
  for (; world_.now <= t0 + 40'000; world_.now += 500) d->Step();
  ASSERT_EQ(world_.launches.size(), 1u);
  EXPECT_EQ(world_.launches[0], fmt::format("{}@{}:0", a.value(), t0 + 30'000));
  ja = *d->Get(a);
  EXPECT_EQ(ja["state"], "finished") << ja.dump();
  EXPECT_EQ(ja["queue"], "Q1") << ja.dump();
  const auto journal = Journal(dir_ / "tiresias.db");
  EXPECT_EQ(Count(journal, EventKind::kDemote), 0);
  // Pinned 10 s ahead at a time: 3 for the 30 s wait (at 0, 10 and 20 s), not one a round.
  EXPECT_EQ(Count(journal, EventKind::kDrain), 3);
  for (const Event& e : journal) {
    if (e.kind == EventKind::kDrain) {
      EXPECT_TRUE(Describe(e).starts_with("not launched yet, no service counted until "))
          << Describe(e);
      EXPECT_TRUE(Describe(e).ends_with(fmt::format(
          "at least: waiting for the cluster engine: job {}: its held Slurm job is being "
          "submitted",
          a.value())))
          << Describe(e);
    }
  }
  // A replay agrees.
  d.reset();
  d = Start();
  EXPECT_EQ((*d->Get(a))["state"], "finished");
  EXPECT_EQ((*d->Get(a))["queue"], "Q1");
  EXPECT_EQ((*d->Get(a))["attained_gpu_s"], 3.0);
}

// A wait for the engine that may have no end (a submit limit waits for other jobs to end) is
// pinned for 2 minutes from the start at most; then its service counts, so that the policy
// can demote it and give its GPUs to a job that can run. dlas, 8 GPU-s first queue: the
// last pin is at 110 s (until 120 s); service from 120 s reaches 8 GPU-s at 128 s.
TEST_F(LiveSchedulerTest, AnEngineWaitWithoutEndCountsServiceAgainAfterTwoMinutes) {
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId a = OneJobTheEngineTakesAt(d, kNever);
  for (world_.now = t0; world_.now <= t0 + 127'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(a))["queue"], "Q1") << d->Get(a)->dump();
  for (; world_.now <= t0 + 129'000; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(a))["queue"], "Q2") << d->Get(a)->dump();
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kDrain), 12);  // 0, 10, ... 110 s
}

// An array 0-5%2 of 1-GPU tasks on 4 free GPUs: the limit, not the GPUs, decides. Tasks run
// two at a time in index order (0,1 then 2,3 then 4,5) and the rest say JobArrayTaskLimit.
// Found by the CLI scenario: tasks submitted pending in the core were never held.
TEST_F(LiveSchedulerTest, AnArraysLimitBoundsItsRunningTasksWhateverTheFreeGpus) {
  auto d = Start();
  std::vector<JobId> tasks;
  ASSERT_TRUE(d->Submit({.gpus = 1, .argv = {"x"}, .array = "0-5%2"}, &tasks).ok());
  ASSERT_EQ(tasks.size(), 6u);
  for (JobId t : tasks) world_.work[t] = 1000;
  for (int round = 0; round < 3; ++round) {
    d->Step();
    for (size_t i = 0; i < tasks.size(); ++i) {
      const auto j = *d->Get(tasks[i]);
      const bool now = i / 2 == static_cast<size_t>(round);
      EXPECT_EQ(j["state"], now                                  ? "running"
                            : i / 2 < static_cast<size_t>(round) ? "finished"
                                                                 : "pending")
          << "round " << round << " task " << i << j.dump();
      if (i / 2 > static_cast<size_t>(round)) {
        EXPECT_EQ(j["reason"], "JobArrayTaskLimit");
      }
    }
    if (round == 0) {  // the queues name a task as its user does (they gave its id alone)
      std::set<std::string> refs;
      const nlohmann::json queues = d->Queues();
      for (const auto& q : queues["queues"]) {
        for (const auto& j : q["jobs"]) refs.insert(j["ref"].get<std::string>());
      }
      const std::string a = std::to_string(tasks[0].value());
      EXPECT_EQ(refs, (std::set<std::string>{a + "_0", a + "_1"}));  // (the rest wait, held)
    }
    world_.now += 1000;  // the running two finish
    d->Step();
  }
  for (JobId t : tasks) EXPECT_EQ((*d->Get(t))["state"], "finished");
}

// Every way a job ends frees its array slot and settles its dependents in the next step:
// cancelled by request, cancelled in the engine, and refused by the engine at its launch.
// Regression: a cancel in the engine and a refused launch did not (the task's slot stayed
// taken until some other job ended, its dependents waited, its end was not counted in
// /metrics); a cancel by request did, by a path of its own.
TEST_F(LiveSchedulerTest, EveryEndFreesItsArraySlotAndSettlesItsDependents) {
  for (const std::string how : {"request", "engine", "refused"}) {
    SCOPED_TRACE(how);
    world_ = FakeWorld{};
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto d = Start();
    std::vector<JobId> tasks;
    ASSERT_TRUE(d->Submit({.gpus = 1, .argv = {"x"}, .array = "0-1%1"}, &tasks).ok());
    for (JobId t : tasks) world_.work[t] = 100'000;
    const JobId after = *d->Submit(
        {.gpus = 1, .argv = {"x"}, .dependency = fmt::format("afterok:{}", tasks[0].value())});
    world_.work[after] = 100'000;
    if (how == "refused") world_.refused.insert(tasks[0]);
    d->Step();
    if (how == "request") {
      ASSERT_TRUE(d->Cancel(tasks[0]).ok());
    } else if (how == "engine") {
      ASSERT_EQ((*d->Get(tasks[0]))["state"], "running");
      for (auto& [pid, p] : world_.procs) {
        if (p.job == tasks[0]) p.cancelled = true, p.exit_at = world_.now;
      }
    }
    for (int k = 0; k < 3; ++k, world_.now += 100) d->Step();
    EXPECT_EQ((*d->Get(tasks[0]))["state"], how == "refused" ? "failed" : "cancelled");
    if (how == "refused") {  // with the engine's words
      EXPECT_EQ((*d->Get(tasks[0]))["message"],
                fmt::format("launch failed: job {}: sbatch: exit 1: refused", tasks[0].value()));
    }
    EXPECT_EQ((*d->Get(tasks[1]))["state"], "running") << d->Get(tasks[1])->dump();
    const auto dep = *d->Get(after);
    EXPECT_EQ(dep["state"], "cancelled") << dep.dump();
    const std::string metrics = d->MetricsText();
    // The task and its dependent.
    EXPECT_NE(metrics.find(how == "refused" ? R"(tiresias_jobs_ended_total{state="failed"} 1)"
                                            : R"(tiresias_jobs_ended_total{state="cancelled"} 2)"),
              std::string::npos)
        << metrics;
    d.reset();
    d = Start();  // a replay of the journal agrees
    EXPECT_EQ((*d->Get(tasks[1]))["state"], "running");
    EXPECT_EQ((*d->Get(after))["state"], "cancelled");
    // Each end state's series is there from the start, at 0 (found by a tester: absent after a
    // restart until a job ended so).
    const std::string fresh = d->MetricsText();
    for (const char* st : {"finished", "failed", "cancelled", "timeout"}) {
      EXPECT_NE(fresh.find(fmt::format("tiresias_jobs_ended_total{{state=\"{}\"}} 0", st)),
                std::string::npos)
          << fresh;
    }
  }
}

TEST_F(LiveSchedulerTest, AJobThatCompletesDuringItsGraceAndSaysSoIsFinishedNotRelaunched) {
  // dlas with an 8 GPU-s first queue on 4 GPUs, grace 30 s. A (4 GPUs, 10 s of work) is
  // demoted at 2 s; B (4 GPUs, 1 s) arrives at 9.5 s in the first queue and preempts A. A does
  // not stop at the signal: it finishes its last 0.5 s within its grace and exits 0 at 10 s.
  // With its done file, A is finished at 10 s: never relaunched, with the 38 GPU-s it had when
  // the core stopped it; B starts on the GPUs A left. Without the done file the same exit 0 is
  // a checkpoint exit (the rule for jobs that exit 0 after checkpointing on the signal): A
  // waits, is relaunched when B ends at 11 s, and ends at once (nothing left to do).
  policy_opts_ = {"thresholds=8"};
  for (bool done_file : {true, false}) {
    SCOPED_TRACE(done_file ? "with the done file" : "without the done file");
    world_ = FakeWorld{.finish_on_term = true, .done_files = done_file};
    const int64_t t0 = world_.now;
    auto d = Start();
    const JobId a = *d->Submit({.name = "a", .gpus = 4, .argv = {"train"}});
    world_.work[a] = 10'000;
    d->Step();
    world_.now = t0 + 2'000;
    d->Step();
    EXPECT_EQ((*d->Get(a))["queue"], "Q2");
    world_.now = t0 + 9'500;
    const JobId b = *d->Submit({.name = "b", .gpus = 4, .argv = {"train"}});
    world_.work[b] = 1'000;
    d->Step();
    EXPECT_EQ((*d->Get(a))["state"], "preempting");
    EXPECT_EQ((*d->Get(b))["state"], "starting");
    world_.now = t0 + 10'000;
    d->Step();
    const std::vector<std::string> first_two = {
        fmt::format("{}@{}:0,1,2,3", a.value(), t0),
        fmt::format("{}@{}:0,1,2,3", b.value(), t0 + 10'000)};
    EXPECT_EQ(world_.launches, first_two);
    EXPECT_EQ((*d->Get(b))["state"], "running");
    if (done_file) {
      auto ja = *d->Get(a);
      EXPECT_EQ(ja["state"], "finished") << ja.dump();
      EXPECT_EQ(ja["attempt"], 0);
      EXPECT_EQ(ja["end_ms"], t0 + 10'000);
      EXPECT_EQ(ja["exit_code"], 0);
      EXPECT_DOUBLE_EQ(ja["attained_gpu_s"].get<double>(), 38.0);
      const auto journal = Journal(dir_ / "tiresias.db");
      bool exit_completed = false;
      for (const Event& e : journal) {
        if (e.job == a && e.kind == EventKind::kExit)
          exit_completed = BoolField(e.detail, "completed");
      }
      EXPECT_TRUE(exit_completed);
      EXPECT_EQ(Count(journal, EventKind::kFinish), 1);
      world_.now = t0 + 11'000;
      d->Step();
      d->Step();
      EXPECT_EQ(world_.launches, first_two) << "A is never run again";
      EXPECT_EQ((*d->Get(b))["state"], "finished");
      // A replay of the journal agrees (the finish of a job the core had stopped).
      d.reset();
      d = Start();
      EXPECT_EQ((*d->Get(a))["state"], "finished");
      EXPECT_EQ((*d->Get(b))["state"], "finished");
      d->Step();
      EXPECT_EQ(world_.launches.size(), 2u);
    } else {
      EXPECT_EQ((*d->Get(a))["state"], "pending");
      world_.now = t0 + 11'000;
      d->Step();
      d->Step();
      ASSERT_EQ(world_.launches.size(), 3u);
      EXPECT_EQ(world_.launches.back(), fmt::format("{}@{}:0,1,2,3", a.value(), t0 + 11'000));
      auto ja = *d->Get(a);
      EXPECT_EQ(ja["state"], "finished") << ja.dump();
      EXPECT_EQ(ja["attempt"], 1);
    }
    d.reset();
    TearDown();
    SetUp();
  }
}

TEST_F(LiveSchedulerTest, ACheckpointMarkerIsJournaledAndFedToTheCoreOnce) {
  // Job a (1 GPU, 60 s of work) starts at t0 (core time 0: the store's epoch is t0). At 5 s
  // the loop finds its marker, TIRESIAS_CHECKPOINT_FILE, touched at t0 + 3 s: one checkpoint
  // event, at_ms = 3000, and the core's job has ckpt_at 3000. Later steps with the same
  // marker journal nothing more, also after a restart that replays the journal; a marker
  // from before the run's start (an earlier attempt's) is ignored.
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 60'000;
  d->Step();
  auto touch = [&](int64_t wall_ms) { TouchMarker(a, wall_ms); };
  touch(t0 - 1'000);  // before the run: ignored
  world_.now = t0 + 2'000;
  d->Step();
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kCheckpoint), 0);
  touch(t0 + 3'000);
  world_.now = t0 + 5'000;
  d->Step();
  world_.now = t0 + 6'000;
  d->Step();
  auto journal = Journal(dir_ / "tiresias.db");
  ASSERT_EQ(Count(journal, EventKind::kCheckpoint), 1);
  // show: the last checkpoint, and 6 - 3 = 3 s x 1 GPU at risk at 6 s.
  auto ja = *d->Get(a);
  EXPECT_EQ(ja["last_checkpoint_ms"], t0 + 3'000) << ja.dump();
  EXPECT_DOUBLE_EQ(ja["at_risk_gpu_s"].get<double>(), 3.0);
  for (const Event& e : journal) {
    if (e.kind != EventKind::kCheckpoint) continue;
    EXPECT_EQ(e.job, a);
    EXPECT_EQ(e.t, 5'000);
    EXPECT_EQ(e.detail["at_ms"], 3'000);
  }
  d.reset();
  d = Start();  // replays the checkpoint into the core
  world_.now = t0 + 7'000;
  d->Step();
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kCheckpoint), 1);
}

TEST_F(LiveSchedulerTest, CheckpointAwareVictimsStopAtACheckpointAndCountTheWorkLost) {
  // 4 GPUs, dlas demoting after 20 GPU-s; processes ignore SIGTERM (only SIGKILL stops them),
  // grace 30 s. Jobs a and b (2 GPUs each, submitted in that order) start at t0 and are in Q2
  // from t0 + 10 s. b reports a checkpoint at t0 + 20 s, a at t0 + 40 s; a opted in to being
  // stopped at once within 30 s of a checkpoint. At t0 + 50 s job c (2 GPUs, Q1) arrives.
  // In policy order the victim is b (Q2's last). Checkpoint-aware (serve's default), b would
  // lose (50 - 20) s x 2 GPUs = 60 GPU-s and a only (50 - 40) x 2 = 20: a is the victim, and
  // as its checkpoint is 10 s old (<= 30) it is killed at once, so c starts at t0 + 50 s, not
  // after a 30 s grace. Lost: 20 GPU-s for a, not a kill at the deadline.
  // Not checkpoint-aware: b is the victim, ignores the signal, is killed at t0 + 80 s; c starts
  // then. Lost: 60 GPU-s (its work since its checkpoint when it was told to stop), one kill.
  world_.ignore_term = true;
  for (const bool aware : {true, false}) {
    SCOPED_TRACE(aware);
    if (!aware) checkpoint_aware_ = false;
    const int64_t t0 = world_.now;
    auto d = Start();
    const JobId a =
        *d->Submit({.name = "a", .gpus = 2, .argv = {"train"}, .stop_at_checkpoint_s = 30});
    const JobId b = *d->Submit({.name = "b", .gpus = 2, .argv = {"train"}});
    world_.work[a] = world_.work[b] = 1'000'000;
    d->Step();
    d->Step();
    ASSERT_EQ(world_.launches.size(), 2u);
    world_.now = t0 + 21'000;
    TouchMarker(b, t0 + 20'000);
    d->Step();
    world_.now = t0 + 41'000;
    TouchMarker(a, t0 + 40'000);
    d->Step();
    world_.now = t0 + 50'000;
    const JobId c = *d->Submit({.name = "c", .gpus = 2, .argv = {"train"}});
    world_.work[c] = 5'000;
    d->Step();
    d->Step();
    const JobId victim = aware ? a : b, other = aware ? b : a;
    if (!aware) {
      EXPECT_EQ(world_.launches.size(), 2u);  // c waits for b's grace
      world_.now = t0 + 80'000;
      d->Step();
      d->Step();
    }
    ASSERT_EQ(world_.launches.size(), 3u);
    EXPECT_EQ(world_.launches.back().substr(0, world_.launches.back().find(':')),
              fmt::format("{}@{}", c.value(), aware ? t0 + 50'000 : t0 + 80'000));
    auto jv = *d->Get(victim);
    EXPECT_EQ(jv["preemptions"], 1) << jv.dump();
    EXPECT_EQ(jv["kills"], aware ? 0 : 1) << jv.dump();
    EXPECT_DOUBLE_EQ(jv["lost_gpu_s"].get<double>(), aware ? 20.0 : 60.0) << jv.dump();
    EXPECT_EQ((*d->Get(other))["state"], "running");
    EXPECT_DOUBLE_EQ((*d->Get(other))["lost_gpu_s"].get<double>(), 0.0);
    int exits = 0;
    for (const Event& e : Journal(dir_ / "tiresias.db")) {
      if (e.kind != EventKind::kExit) continue;
      ++exits;
      EXPECT_EQ(e.detail["checkpointed"], aware) << e.detail.dump();
      EXPECT_EQ(e.detail["lost_gpu_ms"], aware ? 20'000 : 60'000) << e.detail.dump();
    }
    EXPECT_EQ(exits, 1);
    // The option is recorded with the state; a restart asking otherwise is refused.
    d.reset();
    auto store = Store::Open((dir_ / "tiresias.db").string(), world_.now);
    ASSERT_TRUE(store.ok());
    EXPECT_EQ(nlohmann::json::parse(*(*store)->GetMeta("config"))["checkpoint_aware"], aware);
    ServeConfig c2 = Config();
    c2.checkpoint_aware = !aware;
    LiveScheduler again(c2, std::move(*store), std::make_unique<FakeRunner>(world_),
                        [this] { return world_.now; });
    const Status s = again.Open();
    EXPECT_NE(s.message().find("--checkpoint-aware"), std::string::npos) << s.message();
    TearDown();
    SetUp();
    world_ = FakeWorld{.ignore_term = true};
  }
}

}  // namespace
}  // namespace tiresias
