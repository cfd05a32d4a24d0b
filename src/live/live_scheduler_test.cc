// LiveScheduler on a virtual clock with scripted processes: the daemon's driver logic makes
// the same decisions as the simulator for the same job list, and a crash at any step
// (dropping the LiveScheduler, keeping the database and the processes) loses nothing.
#include "live/live_scheduler.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "cli/whatif.h"
#include "common/strings.h"
#include "live_fixture.h"
#include "sim/simulator.h"

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, SchedulesLikeTheSimulator) {
  const int64_t epoch = world_.now;  // the database is created at the first Start
  Drive(Workload());
  ExpectMatchesSimulator(final_, Simulate(Workload(), 0), epoch);
  // Job 1 (4 GPUs) starts alone at 0 and is preempted at 5 s (demoted after 20 GPU-s) when
  // jobs 2 and 3 arrive at 2 s? No: they arrive in Q1 while job 1 is still in Q1 (8 GPU-s
  // attained), so they wait until job 1 is demoted at 5 s, then preempt it.
  EXPECT_EQ(world_.launches.front(), fmt::format("1@{}:0,1,2,3", epoch));
}

// The journal's submits and the core's decisions (start, preempt) and finishes, as the event
// log lines both drivers write: time, kind, job and GPUs. Narration (ticks, launches, holds,
// exits) and free-text reasons are left out.
std::vector<std::string> DecisionLines(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) {
    if (e.kind != EventKind::kSubmit && e.kind != EventKind::kStart &&
        e.kind != EventKind::kPreempt && e.kind != EventKind::kFinish &&
        e.kind != EventKind::kDemote && e.kind != EventKind::kPromote) {
      continue;
    }
    Event kept{.t = e.t, .kind = e.kind, .job = e.job};
    if (e.detail.contains("gpus")) kept.detail["gpus"] = e.detail["gpus"];
    if (e.detail.contains("to")) kept.detail["to"] = e.detail["to"];
    out.push_back(ToJsonLine(kept));
  }
  return out;
}

std::vector<Event> Journal(const std::filesystem::path& db) {
  auto store = Store::Open(db.string(), 0);
  EXPECT_TRUE(store.ok());
  auto rows = (*store)->LoadEvents();
  EXPECT_TRUE(rows.ok());
  std::vector<Event> out;
  for (const auto& r : *rows) out.push_back(r.event);
  return out;
}

TEST_F(LiveSchedulerTest, JournalEqualsTheSimulatorsEventLog) {
  // Same job list, the daemon's driver on a virtual clock (with and without crashes) and the
  // simulator: their event logs, line by line, agree on every submit, start (with its GPUs),
  // preemption and finish. Core time is ms since the database's creation, which is the
  // simulator's time 0 here.
  const std::vector<std::string> sim = DecisionLines(Simulate(Workload(), 0).event_log);
  ASSERT_GE(std::count_if(sim.begin(), sim.end(),
                          [](const std::string& l) { return l.find("preempt") != l.npos; }),
            2);
  ASSERT_GE(std::count_if(sim.begin(), sim.end(),
                          [](const std::string& l) { return l.find("demote") != l.npos; }),
            2)
      << "the comparison covers demotions too";
  Drive(Workload());
  EXPECT_EQ(DecisionLines(Journal(dir_ / "tiresias.db")), sim);
}

TEST_F(LiveSchedulerTest, JournalEqualsTheSimulatorsEventLogDespiteCrashes) {
  Drive(Workload(), /*crash_odds=*/0.3, /*seed=*/11);
  EXPECT_GE(crashes_, 5);
  EXPECT_EQ(DecisionLines(Journal(dir_ / "tiresias.db")),
            DecisionLines(Simulate(Workload(), 0).event_log));
}

TEST_F(LiveSchedulerTest, CrashesAtRandomStepsLoseNothing) {
  const int64_t epoch = world_.now;
  Drive(Workload(), /*crash_odds=*/0.3, /*seed=*/7);
  EXPECT_GE(crashes_, 5);
  ExpectMatchesSimulator(final_, Simulate(Workload(), 0), epoch);
}

TEST_F(LiveSchedulerTest, ProcessesIgnoringSigtermAreKilledAfterTheGraceAndNeverShareGpus) {
  // Every process ignores SIGTERM, so each preemption runs the whole grace period and ends
  // with SIGKILL. Whatever the grace (0 included), no launch may land on a GPU whose
  // previous process is still alive, and every job still finishes.
  world_.ignore_term = true;
  for (Duration grace : {Duration{0}, Seconds(2)}) {
    SCOPED_TRACE(fmt::format("grace {} ms", grace));
    grace_ = grace;
    Drive(Workload(), /*crash_odds=*/0.1, /*seed=*/3);
    EXPECT_TRUE(world_.overlaps.empty()) << fmt::format("{}", fmt::join(world_.overlaps, "\n"));
    int preemptions = 0;
    for (const auto& j : final_) {
      EXPECT_EQ(j["state"], "finished") << j.dump();
      preemptions += j["preemptions"].get<int>();
    }
    EXPECT_GE(preemptions, 2);
    TearDown();
    SetUp();
    world_ = FakeWorld{.ignore_term = true};
  }
}

TEST_F(LiveSchedulerTest, AKilledProcessSlowToGoAddsADrainEventPerSecondNotPerRound) {
  // A 4-GPU job ignores SIGTERM and, once killed, is reported gone only 10 s later (Slurm under
  // load). The job that preempted it waits for its GPUs with its progress start pinned: to the
  // kill deadline, to a second after the kill, then a second at a time while the process
  // lingers. The loop steps every 20 ms as serve's does; a drain event on every round would
  // be ~450 journal rows. Nothing shares a GPU, and both jobs finish.
  world_.ignore_term = true;
  world_.linger = Seconds(10);
  grace_ = Seconds(1);
  auto d = Start();
  const int64_t t0 = world_.now;
  auto big = d->Submit({.name = "big", .gpus = 4, .argv = {"train"}});  // demoted after 5 s
  ASSERT_TRUE(big.ok());
  world_.work[*big] = 8'000;
  std::optional<JobId> small;
  for (int round = 0; round < 5'000; ++round) {
    if (!small && world_.now >= t0 + 6'000) {
      auto s = d->Submit({.name = "small", .gpus = 1, .argv = {"train"}});
      ASSERT_TRUE(s.ok());
      small = *s;
      world_.work[*small] = 1'000;
    }
    d->Step();
    world_.now += 20;
  }
  for (const auto& j : d->List()) EXPECT_EQ(j["state"], "finished") << j.dump();
  EXPECT_TRUE(world_.overlaps.empty()) << fmt::format("{}", fmt::join(world_.overlaps, "\n"));
  auto events = d->Events(0, 100'000, std::nullopt, false);
  ASSERT_TRUE(events.ok());
  int drains = 0;
  for (const auto& e : *events) drains += e["kind"] == "drain";
  EXPECT_GE(drains, 3);   // the kill deadline, the second after the kill, then overdue
  EXPECT_LE(drains, 14);  // about one per second of the 10 it lingered
}

TEST_F(LiveSchedulerTest, VanishedJobKeepsTheServiceItAttainedBeforeTheCrash) {
  // dlas with a 60 GPU-s first queue on 4 GPUs. Job A (4 GPUs) runs 14 s: 56 GPU-s. The daemon
  // crashes, and A's processes vanish while it is down (no exit record). It comes back 100 s
  // later and relaunches A. A keeps its 56 GPU-s (the daemon saw it alive until 14 s) and the
  // 100 s it was down are not service: 1 s after the relaunch A reaches 60 GPU-s and is
  // demoted, and job B, submitted meanwhile in the first queue, preempts it. Forgetting A's
  // service would let A run 15 s more ahead of B; counting the down time would demote it at once.
  policy_opts_ = {"thresholds=60"};
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 4, .argv = {"train"}});
  world_.work[a] = 1'000'000;
  d->Step();
  ASSERT_EQ(world_.launches, std::vector<std::string>{fmt::format("{}@{}:0,1,2,3", a.value(), t0)});
  world_.now += 14'000;
  d->Step();
  EXPECT_DOUBLE_EQ((*d->Get(a))["attained_gpu_s"].get<double>(), 56.0);
  d.reset();                                              // kill -9
  for (auto& [pid, p] : world_.procs) p.reported = true;  // vanished, no exit record
  world_.now += 100'000;
  d = Start();
  EXPECT_DOUBLE_EQ((*d->Get(a))["attained_gpu_s"].get<double>(), 56.0);
  d->Step();
  ASSERT_EQ(world_.launches.size(), 2u);
  EXPECT_EQ(world_.launches.back(), fmt::format("{}@{}:0,1,2,3", a.value(), t0 + 114'000));
  EXPECT_EQ((*d->Get(a))["state"], "running");
  world_.now += 500;
  const JobId b = *d->Submit({.name = "b", .gpus = 4, .argv = {"train"}});
  world_.work[b] = 1'000;
  d->Step();
  EXPECT_EQ((*d->Get(b))["state"], "pending") << "A has 58 GPU-s, still in the first queue";
  world_.now = t0 + 115'000;
  d->Step();
  d->Step();
  EXPECT_EQ((*d->Get(a))["queue"], "Q2");
  EXPECT_EQ((*d->Get(b))["first_start_ms"], t0 + 115'000);
  const double attained = (*d->Get(a))["attained_gpu_s"].get<double>();
  EXPECT_DOUBLE_EQ(attained, 60.0);

  // The journal says why, and a replay of it reproduces the service.
  bool interrupted = false;
  for (const Event& e : Journal(dir_ / "tiresias.db")) {
    if (e.kind != EventKind::kInterrupt) continue;
    interrupted = true;
    EXPECT_EQ(e.job, a);
    EXPECT_EQ(e.t, 114'000);
    EXPECT_EQ(e.detail["last_alive_ms"], 14'000) << e.detail.dump();
  }
  EXPECT_TRUE(interrupted);
  d.reset();
  d = Start();
  EXPECT_DOUBLE_EQ((*d->Get(a))["attained_gpu_s"].get<double>(), attained);
}

int Count(const std::vector<Event>& events, EventKind k) {
  return static_cast<int>(
      std::count_if(events.begin(), events.end(), [&](const Event& e) { return e.kind == k; }));
}

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

TEST_F(LiveSchedulerTest, OneProcessPerGpuIsRefusedUnderSlurm) {
  // The Slurm executor's batch script starts one task per node: --tasks-per-gpu is refused at
  // submit, with the way out, and nothing is stored. The same request is fine locally.
  cluster_ = {{"n1", 2}};
  executor_ = "slurm";
  auto d = Start();
  auto r = d->Submit({.gpus = 2, .argv = {"train"}, .tasks_per_gpu = 1});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("not supported with --executor slurm"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(d->List().empty());
  EXPECT_TRUE(d->Submit({.gpus = 2, .argv = {"train"}}).ok());
  d.reset();
  TearDown();
  SetUp();
  cluster_.clear();
  executor_.clear();
  d = Start();
  auto local = d->Submit({.gpus = 2, .argv = {"train"}, .tasks_per_gpu = 1});
  ASSERT_TRUE(local.ok()) << local.status().message();
  EXPECT_EQ((*d->Get(*local))["tasks_per_gpu"], 1);
}

// `whatif` with the live configuration reproduces the live run exactly: the journal replayed
// through a fresh core, then the finished jobs' stream (their submits, sizes and the work they
// did) simulated under the same configuration, gives every job the start and end it had live
// (this workload demotes and preempts). Under fifo the same stream ends differently.
TEST_F(LiveSchedulerTest, WhatIfWithTheLiveConfigurationReproducesTheLiveRun) {
  Drive(Workload(), /*crash_odds=*/0.05);  // crashes and replays change nothing
  auto run = ReplayJournal((dir_ / "tiresias.db").string(), {});
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->live.jobs.size(), Workload().size());
  ASSERT_EQ(run->whatif.jobs.size(), run->live.jobs.size());
  int preemptions = 0;
  for (size_t i = 0; i < run->live.jobs.size(); ++i) {
    const JobResult& l = run->live.jobs[i];
    const JobResult& w = run->whatif.jobs[i];
    SCOPED_TRACE(fmt::format("job {}", l.id.value()));
    ASSERT_EQ(w.id, l.id);
    EXPECT_EQ(w.first_start, l.first_start);
    EXPECT_EQ(w.end, l.end);
    EXPECT_EQ(w.preemptions, l.preemptions);
    preemptions += l.preemptions;
  }
  EXPECT_GE(preemptions, 2);
  auto fifo = ReplayJournal((dir_ / "tiresias.db").string(), {.policy = "fifo"});
  ASSERT_TRUE(fifo.ok()) << fifo.status().message();
  int differ = 0;
  for (size_t i = 0; i < fifo->live.jobs.size(); ++i) {
    differ += fifo->whatif.jobs[i].end != fifo->live.jobs[i].end;
  }
  EXPECT_GT(differ, 0);
}

// whatif --submit: a forecast for a job that does not exist; nothing is submitted. On 4 busy
// GPUs (4-GPU job, 60 s of work, alone) a 2-GPU job of known 10 s starts when that job ends
// (dlas: the newcomer waits in Q1 until the running job is demoted at 20 GPU-s = 5 s, then
// preempts it): within the first minute, and ends 10 s after it starts.
TEST_F(LiveSchedulerTest, WhatIfSubmitForecastsANewJobWithoutSubmittingIt) {
  auto d = Start();
  auto big = d->Submit({.gpus = 4, .argv = {"x"}});
  ASSERT_TRUE(big.ok());
  world_.work[*big] = 60'000;
  d->Step();
  auto est = d->WhatIfSubmit(2, Seconds(10));
  ASSERT_TRUE(est.ok()) << est.status().message();
  const int64_t start = (*est)["start"]["p50_ms"].get<int64_t>();
  const int64_t end = (*est)["end"]["p50_ms"].get<int64_t>();
  EXPECT_EQ(start, world_.now + 5'000);
  EXPECT_EQ(end, start + 10'000);
  EXPECT_EQ(d->List().size(), 1u);                      // nothing was submitted
  EXPECT_FALSE(d->WhatIfSubmit(5, std::nullopt).ok());  // could never fit 4 GPUs
}

// explain's margins adapt to how the daemon's own forecasts turn out (MarginTracker). On 4
// GPUs (dlas with one queue), A (4 GPUs, given duration 60 s) runs from 0 and W (4 GPUs) waits: its
// forecast is A's end at 60 s in every sample, p10 = 60 s and p90 moved up by kForecastMargin[1]:
// (60 + 60) e^0.782 - 60 = 202 s. A really runs 600 s, so at 300 s W still waits, past its p90:
// a late miss, known now. Explaining X (another waiting job) then resolves W's two sides: not
// early (past p10 while waiting: low margin 0 - 0.005, kept at 0), late (high 0.782 + 0.045).
TEST_F(LiveSchedulerTest, ExplainsMarginsAdaptToHowEarlierForecastsTurnedOut) {
  policy_opts_ = {"queues=1"};  // no demotion: W waits for A to end
  auto d = Start();
  auto a = d->Submit({.gpus = 4, .argv = {"x"}, .duration_s = 60});
  ASSERT_TRUE(a.ok()) << a.status().message();
  world_.work[*a] = 600'000;
  d->Step();
  auto w = d->Submit({.gpus = 4, .argv = {"x"}, .duration_s = 10});
  ASSERT_TRUE(w.ok());
  world_.work[*w] = 10'000;
  d->Step();
  const int64_t t0 = world_.now;
  auto first = d->Estimate(*w);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ((*first)["margins"][0].get<double>(), kForecastMargin[0]);
  EXPECT_EQ((*first)["margins"][1].get<double>(), kForecastMargin[1]);
  EXPECT_EQ((*first)["start"]["p10_ms"].get<int64_t>(), t0 + 60'000);
  EXPECT_NEAR((*first)["start"]["p90_ms"].get<int64_t>(), t0 + 202'000, 1'000);
  world_.now = t0 + 300'000;
  d->Step();
  auto x = d->Submit({.gpus = 4, .argv = {"x"}, .duration_s = 10});
  ASSERT_TRUE(x.ok());
  world_.work[*x] = 10'000;
  d->Step();
  auto second = d->Estimate(*x);
  ASSERT_TRUE(second.ok()) << second.status().message();
  EXPECT_EQ((*second)["margins"][0].get<double>(), 0);
  EXPECT_NEAR((*second)["margins"][1].get<double>(), kForecastMargin[1] + 0.045, 1e-9);
  EXPECT_EQ((*second)["margins_learned_from"].get<int>(), 2);
}

TEST_F(LiveSchedulerTest, RefusesWhatCanNeverRun) {
  auto d = Start();
  auto too_big = d->Submit({.gpus = 5, .argv = {"x"}});
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("never run"), std::string::npos)
      << too_big.status().message();
  EXPECT_FALSE(d->Submit({.gpus = 1}).ok());  // no command
  EXPECT_FALSE(d->Submit({.gpus = 0, .argv = {"x"}}).ok());
  EXPECT_TRUE(d->List().empty()) << "refused requests are not stored";
}

TEST_F(LiveSchedulerTest, FailedJobIsMarkedAndOthersRun) {
  auto d = Start();
  auto bad = d->Submit({.gpus = 4, .argv = {"crash"}});
  auto good = d->Submit({.gpus = 4, .argv = {"ok"}});
  world_.work[*bad] = 1000;
  world_.work[*good] = 1000;
  d->Step();
  ASSERT_EQ(world_.procs.size(), 1u);
  world_.procs.begin()->second.code = 3;
  world_.now += 1000;
  d->Step();
  d->Step();
  auto b = d->Get(*bad);
  EXPECT_EQ((*b)["state"], "failed");
  EXPECT_EQ((*b)["exit_code"], 3);
  EXPECT_EQ((*d->Get(*good))["state"], "running");
}

TEST_F(LiveSchedulerTest, ChangedSettingsAreRefusedOnRestart) {
  { auto d = Start(); }
  auto store = Store::Open((dir_ / "tiresias.db").string(), world_.now);
  ServeConfig c = Config();
  c.policy_opts = {"thresholds=30"};
  LiveScheduler d(c, std::move(*store), std::make_unique<FakeRunner>(world_),
                  [this] { return world_.now; });
  Status s = d.Open();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("same"), std::string::npos) << s.message();
}

// The options' defaults changed (version 2: dlas with 6 queues). A state directory records
// the version it was written under, and one written before versions were recorded (no
// "defaults" in its config) replays under version 1 (2 queues at 3600 GPU-s, FIFO inside a
// queue), the core its journal was decided by; a new one uses the current defaults.
std::string WhereOfAFirstJob(LiveScheduler& d) {
  auto id = d.Submit({.name = "j", .gpus = 1, .argv = {"train"}});
  EXPECT_TRUE(id.ok()) << id.status().message();
  if (!id.ok()) return "";
  auto e = d.Explain(*id);
  EXPECT_TRUE(e.ok());
  return e.ok() ? (*e)["where"].get<std::string>() : "";
}

TEST_F(LiveSchedulerTest, NewStateUsesTheCurrentDefaultsAndRecordsTheirVersion) {
  policy_opts_ = {};
  auto d = Start();
  EXPECT_NE(WhereOfAFirstJob(*d).find("queue 1 of 6"), std::string::npos);
  d.reset();
  auto store = Store::Open((dir_ / "tiresias.db").string(), world_.now);
  ASSERT_TRUE(store.ok());
  auto conf = nlohmann::json::parse(*(*store)->GetMeta("config"));
  EXPECT_EQ(conf["defaults"], 2);
  EXPECT_EQ(conf["policy_options"], nlohmann::json::array());
}

TEST_F(LiveSchedulerTest, StateFromBeforeTheDefaultsChangedReplaysUnderTheOldDefaults) {
  policy_opts_ = {};
  {
    auto store = Store::Open((dir_ / "tiresias.db").string(), world_.now);
    ASSERT_TRUE(store.ok());
    const nlohmann::json old = {{"policy", "dlas"},
                                {"policy_options", nlohmann::json::array()},
                                {"placement", "consolidate"},
                                {"placement_options", nlohmann::json::array()},
                                {"gpus", 4}};
    ASSERT_TRUE((*store)->SetMeta("config", old.dump()).ok());
  }
  auto d = Start();
  EXPECT_NE(WhereOfAFirstJob(*d).find("queue 1 of 2"), std::string::npos);
  EXPECT_NE(WhereOfAFirstJob(*d).find("of 3600 GPU-s in this queue's climb"), std::string::npos);
  // Other settings than those it was written with are still refused.
  d.reset();
  policy_opts_ = {"thresholds=30"};
  auto store = Store::Open((dir_ / "tiresias.db").string(), world_.now);
  LiveScheduler other(Config(), std::move(*store), std::make_unique<FakeRunner>(world_),
                      [this] { return world_.now; });
  EXPECT_FALSE(other.Open().ok());
}

}  // namespace
}  // namespace tiresias
