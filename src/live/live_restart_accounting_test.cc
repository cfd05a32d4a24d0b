// LiveScheduler's accounting when serve is killed (-9) or the core moves on in the middle of
// a stop, on the virtual clock of tests/live_fixture.h: what a stopping run lost, whether its
// kill counts as a preemption's, and time limits, across restarts; a run stopped and started
// again elsewhere in one step; a run lost with its node in a stop's grace; how a restart names
// the runs it adopts.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <csignal>

#include "live_fixture.h"

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, AKill9DuringAPreemptionsGraceNeitherDemotesTheWaiterNorInflatesTheLoss) {
  // Regression (found by an exploratory test): dlas, 8 GPU-s first queue, 4 GPUs, grace 4 s,
  // processes that ignore SIGTERM. X (4 GPUs) runs from 0 and is demoted at 2 s (8 GPU-s).
  // Y (4 GPUs, Q1) arrives at 3 s and preempts X: X is told to stop and keeps its GPUs until
  // its kill at 7 s; Y's progress is pinned there. serve is killed at 4 s and is down 60 s.
  // At the restart Y has never run: it had attained 0 GPU-s and must still be in Q1 (the
  // downtime counted as its service demoted it: 57 s x 4 GPUs past its pin). X's run lost
  // what it did since its start when it was preempted, 3 s x 4 GPUs = 12 GPU-s, all it
  // attained (the loss was measured at the restart's stop: 64 s x 4 = 256 GPU-s).
  auto [d, x, y, t0] = PreemptATermIgnoringJob(1'000);
  world_.now = t0 + 4'000;
  d->Step();
  d.reset();  // kill -9
  world_.now = t0 + 64'000;
  d = Start();
  for (int round = 0; round < 1'000 && (*d->Get(y))["state"] != "finished"; ++round) {
    d->Step();
    ASSERT_EQ((*d->Get(y))["queue"], "Q1") << "at " << world_.now - t0 << " ms";
    world_.now += 100;
  }
  EXPECT_EQ((*d->Get(y))["state"], "finished");
  EXPECT_DOUBLE_EQ((*d->Get(y))["attained_gpu_s"].get<double>(), 4.0);  // its 1 s on 4 GPUs
  // X runs again: no exit yet (it showed its killed run's, ExitCode=0:9; an exploratory test).
  for (int round = 0; round < 100 && (*d->Get(x))["state"] != "running"; ++round) {
    world_.now += 100;
    d->Step();
  }
  ASSERT_EQ((*d->Get(x))["state"], "running");
  EXPECT_TRUE((*d->Get(x))["exit_code"].is_null()) << d->Get(x)->dump();
  // (X runs again once Y is done: its service grows from there.)
  EXPECT_DOUBLE_EQ((*d->Get(x))["lost_gpu_s"].get<double>(), 12.0);
  EXPECT_GE((*d->Get(x))["attained_gpu_s"].get<double>(), 12.0);
  EXPECT_TRUE(world_.overlaps.empty()) << fmt::format("{}", fmt::join(world_.overlaps, "\n"));
  // A replay of the journal tells the same story.
  const double y_attained = (*d->Get(y))["attained_gpu_s"].get<double>();
  d.reset();
  d = Start();
  EXPECT_DOUBLE_EQ((*d->Get(y))["attained_gpu_s"].get<double>(), y_attained);
  EXPECT_EQ((*d->Get(y))["queue"], "Q1");
}

TEST_F(LiveSchedulerTest, ARestartInAStopsGraceNeitherSignalsAgainNorMovesTheKillDeadline) {
  // Regression (found by an exploratory test: a job got SIGTERM twice and its kill came 2-7 s
  // late). As above: X, preempted at 3 s, ignores SIGTERM; its kill is due at 7 s. serve is
  // killed at 4 s and back at 5 s: X gets no second SIGTERM, SIGKILL at 7 s (not 5 + 4 = 9 s),
  // and Y starts then. Under an engine whose signals are queued (Slurm's scancel, lost with
  // serve), the signal is sent again at the restart, and the deadline is still the first.
  // Nor does a restart with another --grace (1 s, 30 s) move it (an exploratory test: X was
  // killed at once, or Y waited until 3 + 30 s), nor a second one with yet another grace at
  // 5.5 s (a review: the second restart took the first restart's grace, 1 s, and killed X at
  // once). A stop kept by a build before schema 7 (no deadline of its own, that build's grace
  // in meta grace_ms) is given that grace's deadline.
  struct Case {
    bool queued;
    Duration regrace, again;  // the grace at the restart, and at a second one (0: none)
    bool old_build = false;   // the stop as a build before schema 7 left it
  };
  for (const Case c : {Case{false, Seconds(4), 0},
                       {true, Seconds(4), 0},
                       {false, Seconds(1), 0},
                       {false, Seconds(30), 0},
                       {false, Seconds(1), Seconds(30)},
                       {false, Seconds(30), Seconds(1)},
                       {false, Seconds(30), 0, true}}) {
    SCOPED_TRACE(fmt::format("{}, restarted with grace {} ms, then {} ms{}",
                             c.queued ? "queued signals" : "signals at once", c.regrace, c.again,
                             c.old_build ? ", an older build's stop" : ""));
    world_ = FakeWorld{.queued_signals = c.queued};
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto [d, x, y, t0] = PreemptATermIgnoringJob(1'000);
    world_.now = t0 + 4'000;
    d->Step();
    d.reset();  // kill -9 (a serve stopped by SIGTERM leaves its jobs running too)
    if (c.old_build) {
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open((dir_ / "tiresias.db").c_str(), &db), SQLITE_OK);
      ASSERT_EQ(sqlite3_exec(db,
                             "UPDATE jobs SET stop_deadline = -1; INSERT OR REPLACE INTO "
                             "meta VALUES('grace_ms', '4000')",
                             nullptr, nullptr, nullptr),
                SQLITE_OK);
      sqlite3_close(db);
    }
    world_.now = t0 + 5'000;
    grace_ = c.regrace;
    d = Start();
    for (; world_.now < t0 + 6'900; world_.now += 100) {
      if (c.again > 0 && world_.now == t0 + 5'500) {
        d.reset();
        grace_ = c.again;
        d = Start();
      }
      d->Step();
      ASSERT_EQ((*d->Get(y))["state"], "starting") << "at " << world_.now - t0 << " ms";
    }
    for (; world_.now <= t0 + 7'300; world_.now += 100) d->Step();
    std::vector<std::string> want = {fmt::format("{}:15@{}", x.value(), t0 + 3'000)};
    if (c.queued) want.push_back(fmt::format("{}:15@{}", x.value(), t0 + 5'000));
    want.push_back(fmt::format("{}:9@{}", x.value(), t0 + 7'000));
    EXPECT_EQ(world_.signals, want);
    EXPECT_EQ((*d->Get(y))["state"], "running");
  }
}

TEST_F(LiveSchedulerTest, AKillSentBeforeARestartIsAKillWhenTheExitComesAfterIt) {
  // Found by a review: X (as above) is killed at 7 s and takes 2 s to go (an engine's kill);
  // serve is killed at 7.5 s and back at 8.9 s, when X is still there (adopted, its stop
  // going on); it exits at 9 s, SIGKILLed, before the new serve sends a kill of its own. That
  // is the kill's end, not a checkpoint: X lost its 12 GPU-s and counts one kill.
  auto [d, x, y, t0] = PreemptATermIgnoringJob(1'000);
  world_.linger = 2'000;
  for (world_.now = t0 + 3'100; world_.now <= t0 + 7'500; world_.now += 100) d->Step();
  d.reset();
  world_.now = t0 + 8'900;
  d = Start();
  world_.now = t0 + 9'000;
  d->Step();
  const auto job = *d->Get(x);
  EXPECT_DOUBLE_EQ(job["lost_gpu_s"].get<double>(), 12.0) << job.dump();
  EXPECT_EQ(job["kills"], 1) << job.dump();
}

TEST_F(LiveSchedulerTest, AKill9DuringATimeLimitsGraceStillEndsTheJobAsTimedOut) {
  // Regression (found by a review of the restart's drain): T has a 10 s limit and ignores
  // SIGTERM; grace 4 s. At 10 s it is told to stop (kill due at 14 s); serve is killed at 11 s
  // and restarts at 12 s. Its process is adopted and stopped again; the restart must not
  // move its progress start (that erased the 10 s it ran, so the limit found time left and
  // relaunched it). It ends `timeout` at its kill, having run once, 10 s.
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId t = TellToStopAtItsTimeLimit(d, t0);
  Kill9AndRestart(d, t0, 11'000, 12'000, 30'000);
  const auto tj = *d->Get(t);
  EXPECT_EQ(tj["state"], "timeout") << tj.dump();
  EXPECT_EQ(world_.launches.size(), 1u) << fmt::format("{}", fmt::join(world_.launches, " "));
  EXPECT_GE(tj["time_s"].get<double>(), 10.0);
  EXPECT_EQ(tj["kills"], 0);  // a time limit's kill is not a preemption's
}

TEST_F(LiveSchedulerTest, AKill9DuringARequeuesGraceCountsNeitherAPreemptionNorAKill) {
  // Regression: the record did not keep what started a stop, so after a restart a requeue's
  // stop still in progress counted as a preemption's, and its kill at the deadline in kills.
  // R (1 GPU) ignores SIGTERM; grace 4 s. It runs from 0 and is requeued at 3 s (kill due at
  // 7 s); the core starts it again at once (`starting`, behind its own process). serve is
  // killed at 4 s and restarts at 5 s, which stops the process again (kill at 9 s). That kill
  // is a requeue's: no kill, no preemption. The run lost the 3 s x 1 GPU it did, measured at
  // the requeue, not at the restart's stop (5 GPU-s).
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId r = *d->Submit({.name = "r", .gpus = 1, .argv = {"train"}});
  world_.work[r] = 1'000'000;
  d->Step();
  world_.now = t0 + 3'000;
  d->Step();
  ASSERT_TRUE(d->Requeue(r, "alice").ok());
  d->Step();
  ASSERT_EQ((*d->Get(r))["state"], "starting");
  // Its forecast starts it when its old process is gone at the latest, at 7 s (it said now).
  const auto e = d->Estimate(r);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ((*e)["start"]["p50_ms"], t0 + 7'000) << e->dump();
  EXPECT_EQ((*e)["running"], false);
  Kill9AndRestart(d, t0, 4'000, 5'000, 12'000);
  const auto rj = *d->Get(r);
  EXPECT_EQ(rj["state"], "running") << rj.dump();
  EXPECT_EQ(rj["kills"], 0);
  EXPECT_EQ(rj["preemptions"], 0);
  EXPECT_DOUBLE_EQ(rj["lost_gpu_s"].get<double>(), 3.0);
  EXPECT_EQ(world_.launches.size(), 2u) << fmt::format("{}", fmt::join(world_.launches, " "));
  // Its old process's end is a requeue's (it said "after preemption").
  const std::string events = d->Events(0, 100, r)->dump();
  EXPECT_NE(events.find("after requeue (killed at the end of its grace period, requeued)"),
            std::string::npos)
      << events;
  EXPECT_EQ(events.find("after preemption"), std::string::npos) << events;
}

TEST_F(LiveSchedulerTest, AKill9AfterThePreemptedJobWasStartedAgainKeepsItsOldRunsLoss) {
  // Regression: a restart stopping the process of a run the core had already replaced (it
  // started the job again during the old process's grace) measured the new run's loss.
  // dlas, 8 GPU-s first queue, grace 4 s, processes ignore SIGTERM; two nodes of 4 GPUs, n2
  // down at first. X (4 GPUs) runs on n1 from 0; Y (4 GPUs) preempts it at 3 s (kill due at
  // 7 s). n2 is back at 3.5 s: the core starts X again there at once, behind its old process
  // (`starting`). serve is killed at 4 s, restarts at 64 s and stops the old process again
  // (kill at 68 s). It is a preemption's kill (kills 1, checkpointed 0), and the old run lost
  // what it did before the preemption: 3 s x 4 GPUs = 12 GPU-s (the new run, drained to the
  // restart, had lost nothing). (Before session 42 the scenario was Y's cancel, which gave X
  // its own GPUs back at once; they are now left out until its old process is gone.)
  cluster_ = {{"n1", 4}, {"n2", 4}};
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "idle", .gpus = 4},
      {.name = "n2", .state = "down", .usable = false, .gpus = 4, .reason = "Not responding"}};
  auto [d, x, y, t0] = PreemptATermIgnoringJob(1'000'000);
  world_.now = t0 + 3'500;
  world_.node_report = std::vector<NodeReport>{{.name = "n1", .state = "mixed", .gpus = 4},
                                               {.name = "n2", .state = "idle", .gpus = 4}};
  d->Step();
  ASSERT_EQ((*d->Get(x))["state"], "starting");
  Kill9AndRestart(d, t0, 4'000, 64'000, 70'000);
  const auto xj = *d->Get(x);
  EXPECT_EQ(xj["state"], "running") << xj.dump();
  EXPECT_EQ(xj["preemptions"], 1);
  EXPECT_EQ(xj["kills"], 1);
  EXPECT_EQ(xj["checkpointed"], 0);
  EXPECT_DOUBLE_EQ(xj["lost_gpu_s"].get<double>(), 12.0);
}

TEST_F(LiveSchedulerTest, AnEvictedJobStartedAgainInTheSameStepKeepsItsOldRunsLoss) {
  // Regression (found by a review): the loss of a stopping run was measured after the step's
  // pass, which may already have started the job again elsewhere: then it measured the new
  // run (nothing yet). Two nodes x 2 GPUs, grace 4 s, processes ignore SIGTERM. n1 is down at
  // first, so B (2 GPUs) runs on n2 from 0. At 3 s n1 is back and n2 goes down: B is evicted
  // and the same pass starts it on n1, behind its old process. That process is killed at
  // 7 s: its run lost 3 s x 2 GPUs = 6 GPU-s, not 0. (The core keeps the loss of the run it
  // stopped, Job::stop_loss, which a replay after a crash rebuilds.)
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId b = RunOnTheSecondOfTwoNodes(d);
  world_.now = t0 + 3'000;
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "idle", .gpus = 2},
      {.name = "n2", .state = "down", .usable = false, .gpus = 2, .reason = "Not responding"}};
  d->Step();
  ASSERT_EQ((*d->Get(b))["state"], "starting") << (*d->Get(b)).dump();
  for (; world_.now < t0 + 9'000; world_.now += 100) d->Step();
  const auto bj = *d->Get(b);
  EXPECT_EQ(bj["state"], "running") << bj.dump();
  EXPECT_EQ(bj["kills"], 1);
  EXPECT_DOUBLE_EQ(bj["lost_gpu_s"].get<double>(), 6.0);
  EXPECT_EQ(world_.launches.size(), 2u) << fmt::format("{}", fmt::join(world_.launches, " "));
}

TEST_F(LiveSchedulerTest, AProcessPastItsTimeLimitThatExitsWhileServeIsDownEndsAsTimedOut) {
  // Regression (found by a review): T has a 10 s limit; at 10 s it is told to stop and exits
  // (it checkpoints on SIGTERM), but serve is killed before it sees the exit and restarts at
  // 12 s. `timing_out` is not stored: the exit read at the restart was taken for a
  // checkpointed preemption, T was relaunched and its run's time erased (it ran its whole
  // limit again). It ends `timeout`, having run once.
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId t = TellToStopAtItsTimeLimit(d, t0);
  d.reset();  // kill -9, before the next step reads the exit
  world_.now = t0 + 12'000;
  d = Start();
  for (; world_.now < t0 + 30'000; world_.now += 100) d->Step();
  const auto tj = *d->Get(t);
  EXPECT_EQ(tj["state"], "timeout") << tj.dump();
  EXPECT_EQ(world_.launches.size(), 1u) << fmt::format("{}", fmt::join(world_.launches, " "));
}

TEST_F(LiveSchedulerTest, ARunLostWithItsNodeCountsTheWorkItLost) {
  // Regression (found by a review): a node fails; the same poll reports it down and the run
  // on it lost. The eviction stops the job in the core, and the exit arrives before its
  // process was ever told to stop: it counted no lost work. B (2 GPUs) runs on n2 from 0 and
  // has reported no checkpoint; at 3 s n2 fails with it: 3 s x 2 GPUs = 6 GPU-s lost.
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId b = RunOnTheSecondOfTwoNodes(d);
  world_.now = t0 + 3'000;
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "down", .usable = false, .gpus = 2, .reason = "maintenance"},
      {.name = "n2", .state = "down", .usable = false, .gpus = 2, .reason = "Not responding"}};
  auto& run = world_.procs.begin()->second;
  run.lost = true;
  run.exit_at = world_.now;
  d->Step();
  const auto bj = *d->Get(b);
  EXPECT_EQ(bj["state"], "pending") << bj.dump();
  EXPECT_DOUBLE_EQ(bj["lost_gpu_s"].get<double>(), 6.0);
}

TEST_F(LiveSchedulerTest, ARunLostWithItsNodeInItsStopsGraceIsSaidLostNotCheckpointed) {
  // Regression (session 48): n2 fails under B (2 GPUs, from 0, no checkpoint reported); at
  // 3 s the node is reported down first: B is evicted and told to stop. At 4 s, in its grace,
  // the engine reports the run lost (Slurm requeued it). Its exit event said "checkpointed"
  // (or "killed at the end of its grace period"); it was lost with its node, and with it the
  // work since its start: 3 s x 2 GPUs = 6 GPU-s.
  grace_ = Seconds(10);
  world_.ignore_term = true;  // (a run on a dead node answers no signal)
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId b = RunOnTheSecondOfTwoNodes(d);
  world_.now = t0 + 3'000;
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "down", .usable = false, .gpus = 2, .reason = "maintenance"},
      {.name = "n2", .state = "down", .usable = false, .gpus = 2, .reason = "Not responding"}};
  d->Step();
  ASSERT_EQ((*d->Get(b))["state"], "preempting") << d->Get(b)->dump();
  world_.now = t0 + 4'000;
  auto& run = world_.procs.begin()->second;
  run.lost = true;
  run.exit_at = world_.now;
  d->Step();
  const auto bj = *d->Get(b);
  EXPECT_EQ(bj["state"], "pending") << bj.dump();
  EXPECT_DOUBLE_EQ(bj["lost_gpu_s"].get<double>(), 6.0);
  EXPECT_EQ(bj["kills"], 0);
  EXPECT_EQ(bj["checkpointed"], 0) << bj.dump();  // (it said 1)
  EXPECT_EQ(bj["lost_with_node"], 1) << bj.dump();
  EXPECT_NE(bj["message"].get<std::string>().find("lost with its node"), std::string::npos)
      << bj.dump();
  auto events = d->Events(0, 1000, b);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> exits;
  for (const auto& e : *events) {
    if (e["kind"] == "exit") exits.push_back(e["text"]);
  }
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0],
            "NODE_FAIL on n1 after preemption (lost with its node: its work since its last "
            "checkpoint, 6.0 GPU-s, is lost; requeued)");
  d.reset();  // a restart reads the count back
  d = Start();
  EXPECT_EQ((*d->Get(b))["lost_with_node"], 1);
  EXPECT_EQ((*d->Get(b))["checkpointed"], 0);
}

TEST_F(LiveSchedulerTest, ARunAdoptedAtARestartIsNamedAsItsSlurmJobNotAsAPid) {
  // Regression (session 48): under Slurm a run's ProcessRef "pid" is its Slurm job id, and the
  // adopt event said "process 100 survived the restart". Locally it is the pid.
  for (const bool engine : {true, false}) {
    SCOPED_TRACE(engine ? "Slurm" : "local");
    TearDown();
    SetUp();
    world_ = FakeWorld{.engine_jobs = engine};
    auto d = Start();
    const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
    world_.work[a] = 1'000'000;
    d->Step();
    ASSERT_EQ(world_.procs.size(), 1u);
    const int ref = world_.procs.begin()->first;
    d.reset();  // serve restarts; the run goes on
    world_.now += 1'000;
    d = Start();
    auto events = d->Events(0, 1000, a);
    ASSERT_TRUE(events.ok());
    std::vector<std::string> adopts;
    for (const auto& e : *events) {
      if (e["kind"] == "adopt") adopts.push_back(e["text"]);
    }
    EXPECT_EQ(adopts, std::vector<std::string>{fmt::format("{} {} survived the restart",
                                                           engine ? "Slurm job" : "process", ref)});
  }
}

TEST_F(LiveSchedulerTest, AnExitOfItsOwnThatTheEngineReportsAfterTheKillIsACheckpoint) {
  // Regression (session 48): X (4 GPUs) is preempted at 3 s and checkpoints and exits 0 at
  // once, but the engine reports that exit only 6 s later (Slurm: COMPLETING through a slow
  // epilog). Serve's kill at the end of the 4 s grace (7 s) finds it gone; the exit, reported
  // at 9 s, is its own (exit 0). It was counted a kill, its 3 s x 4 GPUs = 12 GPU-s lost.
  policy_opts_ = {"thresholds=8"};
  grace_ = Seconds(4);
  world_.completing = Seconds(6);
  auto d = Start();
  const int64_t t0 = world_.now;
  const JobId x = *d->Submit({.name = "x", .gpus = 4, .argv = {"train"}});
  world_.work[x] = 1'000'000;
  d->Step();
  world_.now = t0 + 3'000;
  d->Step();
  const JobId y = *d->Submit({.name = "y", .gpus = 4, .argv = {"train"}});
  world_.work[y] = 1'000'000;
  for (; world_.now <= t0 + 10'000; world_.now += 100) d->Step();
  const auto xj = *d->Get(x);
  EXPECT_EQ(xj["preemptions"], 1) << xj.dump();
  EXPECT_EQ(xj["kills"], 0) << xj.dump();
  EXPECT_EQ(xj["checkpointed"], 1) << xj.dump();
  EXPECT_DOUBLE_EQ(xj["lost_gpu_s"].get<double>(), 0.0) << xj.dump();
  // Y launched once the exit was reported (9 s), past X's kill deadline (7 s).
  ASSERT_EQ(world_.launches.size(), 2u);
  EXPECT_EQ(world_.launches[1], fmt::format("{}@{}:0,1,2,3", y.value(), t0 + 9'000));
  auto events = d->Events(0, 1000, x);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> exits;
  for (const auto& e : *events) {
    if (e["kind"] == "exit") exits.push_back(e["text"]);
  }
  EXPECT_EQ(exits, std::vector<std::string>{"exit 0 after preemption (checkpointed, requeued)"});
  EXPECT_EQ((*d->Get(y))["state"], "running");
}

TEST_F(LiveSchedulerTest, AKillAtTheDeadlineThatServeDidNotSeeEndIsStillAKill) {
  // Regression (found by a review): serve sends SIGKILL at a preempted job's deadline and is
  // killed before it reads the exit; the restart read the exit as a checkpoint (no kill, no
  // loss). X (4 GPUs, ignores SIGTERM) is preempted at 3 s, killed at 7 s; serve dies right
  // after and restarts at 8 s. X lost 3 s x 4 GPUs = 12 GPU-s, and it is a kill.
  auto [d, x, y, t0] = PreemptATermIgnoringJob(1'000'000);
  world_.now = t0 + 7'000;
  d->Step();
  d.reset();  // kill -9, before the next step reads the exit
  world_.now = t0 + 8'000;
  d = Start();
  d->Step();
  const auto xj = *d->Get(x);
  EXPECT_EQ(xj["kills"], 1) << xj.dump();
  EXPECT_EQ(xj["checkpointed"], 0);
  EXPECT_DOUBLE_EQ(xj["lost_gpu_s"].get<double>(), 12.0);
  EXPECT_EQ((*d->Get(y))["state"], "running");
}

}  // namespace
}  // namespace tiresias
