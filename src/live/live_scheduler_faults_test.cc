// LiveScheduler under faults and in the middle of its protocols, on the virtual clock of
// tests/live_fixture.h: nodes that go down and come back, GPUs held outside the scheduler,
// runs lost with their node or cancelled in the engine, array limits, jobs that complete
// during their grace period, checkpoint markers and checkpoint-aware victims.
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
    world_.now += 1000;  // the running two finish
    d->Step();
  }
  for (JobId t : tasks) EXPECT_EQ((*d->Get(t))["state"], "finished");
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

TEST_F(LiveSchedulerTest, AKill9DuringATimeLimitsGraceStillEndsTheJobAsTimedOut) {
  // Regression (found by a review of the restart's drain): T has a 10 s limit and ignores
  // SIGTERM; grace 4 s. At 10 s it is told to stop (kill due at 14 s); serve is killed at 11 s
  // and restarts at 12 s. Its process is adopted and stopped again; the restart must not
  // move its progress start (that erased the 10 s it ran, so the limit found time left and
  // relaunched it). It ends `timeout` at its kill, having run once, 10 s.
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId t = *d->Submit({.name = "t", .gpus = 1, .argv = {"train"}, .time = "0:10"});
  world_.work[t] = 1'000'000;
  d->Step();
  world_.now = t0 + 10'000;
  d->Step();
  ASSERT_EQ((*d->Get(t))["state"], "preempting");
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
  Kill9AndRestart(d, t0, 4'000, 5'000, 12'000);
  const auto rj = *d->Get(r);
  EXPECT_EQ(rj["state"], "running") << rj.dump();
  EXPECT_EQ(rj["kills"], 0);
  EXPECT_EQ(rj["preemptions"], 0);
  EXPECT_DOUBLE_EQ(rj["lost_gpu_s"].get<double>(), 3.0);
  EXPECT_EQ(world_.launches.size(), 2u) << fmt::format("{}", fmt::join(world_.launches, " "));
}

TEST_F(LiveSchedulerTest, AKill9AfterThePreemptedJobWasStartedAgainKeepsItsOldRunsLoss) {
  // Regression: a restart stopping the process of a run the core had already replaced (it
  // started the job again during the old process's grace) measured the new run's loss.
  // dlas, 8 GPU-s first queue, grace 4 s, processes ignore SIGTERM. X (4 GPUs) runs from 0;
  // Y (4 GPUs) preempts it at 3 s (kill due at 7 s). Y is cancelled at 3.5 s: the core starts
  // X again at once, behind its old process (`starting`). serve is killed at 4 s, restarts at
  // 64 s and stops the old process again (kill at 68 s). It is a preemption's kill (kills 1,
  // checkpointed 0), and the old run lost what it did before the preemption: 3 s x 4 GPUs =
  // 12 GPU-s (the new run, drained to the restart, had lost nothing).
  auto [d, x, y, t0] = PreemptATermIgnoringJob(1'000'000);
  world_.now = t0 + 3'500;
  ASSERT_TRUE(d->Cancel(y).ok());
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
  cluster_ = {{"n1", 2}, {"n2", 2}};
  policy_opts_ = {"thresholds=100000"};
  grace_ = Seconds(4);
  world_.ignore_term = true;
  const int64_t t0 = world_.now;
  world_.node_report = std::vector<NodeReport>{
      {.name = "n1", .state = "down", .usable = false, .gpus = 2, .reason = "maintenance"},
      {.name = "n2", .state = "idle", .gpus = 2}};
  auto d = Start();
  const JobId b = *d->Submit({.name = "b", .gpus = 2, .argv = {"train"}});
  world_.work[b] = 1'000'000;
  d->Step();
  ASSERT_EQ((*d->Get(b))["state"], "running");
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

}  // namespace
}  // namespace tiresias
