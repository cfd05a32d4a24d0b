// The Slurm executor after Slurm requeued a run by itself (a node failure): the next attempt
// runs in a fresh Slurm job, seen live or after a restart (Slurm 22.05 applies a failed
// node's stale terminate of the old run to the same job id, killing the next run there);
// a fresh job sbatch refuses leaves the old one to run it. And a kill of a run whose job the
// journal lost cancels its Slurm job; a killed job's replaced and retired Slurm jobs end
// cancelled; a stop decided on a stale snapshot reaches the job; a job started under a
// submit limit takes the place of a held one, and one over a limit on its own size fails.
// An admin's `scontrol hold` is reported (EngineHolds), and a launch does not undo it.
// On a real one-node Slurm cluster
// (tests/slurm_executor_fixture.h); `scontrol requeue` stands for the node failure.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "exec/slurm_batch.h"
#include "slurm_executor_fixture.h"
#include "test_util.h"

namespace tiresias {
namespace {

using testing::WaitFor;

TEST_F(SlurmExecutorTest, ARunSlurmRequeuedByItselfRunsItsNextAttemptInAFreshSlurmJob) {
  // Regression (CI: SlurmTest.ANodeKilledMidRunLosesNoJob): a node dies under attempt 0;
  // Slurm requeues the job. When the node came back, the next attempt, released in the same
  // Slurm job on that node, was killed within seconds: slurmd applied the failed node's
  // stale terminate of the old run to the job id (SIGTERM, "CANCELLED ... DUE TO NODE
  // FAILURE"), or slurmctld aborted it at the next registration ("on wrong node", SIGKILL).
  // Now a run Slurm requeued by itself is replaced: a fresh held Slurm job runs the next
  // attempt; the old one is cancelled, and that cancel is not reported as the job's. Here
  // Slurm's own requeue (`scontrol requeue`, as after a node failure) stands for the failure.
  auto x = Open("fresh", 250ms, 3s);
  ASSERT_TRUE(x);
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  ASSERT_NO_FATAL_FAILURE(Requeue(*x, sid));
  // A fresh Slurm job, submitted at once; the old one cancelled.
  ASSERT_TRUE(WaitFor([&] { return x->Drain(1s) && x->SlurmId(JobId(1)) != sid; }, 30s));
  const int64_t fresh = x->SlurmId(JobId(1));
  EXPECT_GT(fresh, sid);
  EXPECT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "CANCELLED"; }, 30s))
      << Squeue(sid, "%T %r");
  auto launched = LaunchWhenReady(*x, Spec(1, {"sleep", "300"}, 1));
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  EXPECT_EQ(launched->engine_job, std::to_string(fresh));
  ASSERT_TRUE(WaitFor([&] { return Squeue(fresh, "%T") == "RUNNING"; }, 30s))
      << Squeue(fresh, "%T %r");
  // The old job's cancel is no news of the job's: no exit while the new run runs.
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "an exit reported: " << e.reason;
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_EQ(Squeue(fresh, "%T"), "RUNNING");
}

TEST_F(SlurmExecutorTest, ARunSlurmRequeuedInAStopsGraceIsReportedLostNotCheckpointed) {
  // Regression (session 48): a node failed under a run serve was stopping (the eviction from
  // that node: its signal sent, in its grace). Slurm requeued the job, and the executor
  // reported an end with no exit status that was not lost, which serve took for a checkpoint
  // (its events said "checkpointed, requeued"). Slurm's own requeue stands for the failure;
  // the run ignores SIGTERM, as a run on a dead node never answers it.
  auto x = Open("stopped-lost", 250ms, 3s);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sh", "-c", "trap '' TERM; sleep 300"});
  ProcessRef ref;
  const int64_t sid = Running(*x, spec, &ref);
  ASSERT_NE(sid, 0);
  ASSERT_TRUE(x->Signal(ref, SIGTERM).ok());
  ASSERT_TRUE(x->Drain(30s));  // the signal went out; the run goes on
  ASSERT_EQ(Squeue(sid, "%T"), "RUNNING");
  ASSERT_NO_FATAL_FAILURE(Requeue(*x, sid));  // lost (it was not), not cancelled
}

TEST_F(SlurmExecutorTest, ARunSlurmRequeuedWhileServeWasAwayIsNotAdoptedAndIsReplaced) {
  // The same failure while serve is down: Slurm requeues attempt 0's run (a node failure)
  // and, the job pending and not held, starts it again by itself on the same node. The
  // restarted serve must not adopt that run as attempt 0 (its restart count is above the one
  // the release recorded): the failed node's stale terminate may kill it. It is stopped; a
  // fresh Slurm job, submitted once serve prepares the job again, runs the next attempt.
  auto x = Open("away", 250ms, 3s);
  ASSERT_TRUE(x);
  const LaunchSpec first = Spec(1, {"sleep", "300"});
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  x.reset();  // serve goes away
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol requeue {}", sid)).rc, 0);
  const auto show = [&] { return cluster_->Sh(fmt::format("scontrol -o show job {}", sid)).out; };
  ASSERT_TRUE(WaitFor([&] { return show().find(" Restarts=1 ") != std::string::npos; }, 30s))
      << show();
  auto y = Open("away", 250ms, 3s);
  ASSERT_TRUE(y);
  Refresh(*y);
  const ProcessRef ref{.pid = static_cast<int>(sid), .start_ticks = 0};
  EXPECT_FALSE(y->Adopt(JobId(1), 0, ref, first.job_dir)) << Squeue(sid, "%T %r");
  EXPECT_FALSE(y->ReadExit(JobId(1), 0, first.job_dir));
  y->Prepare(first);  // as recovery does for every job still to run
  ASSERT_TRUE(WaitFor([&] { return y->Drain(1s) && y->SlurmId(JobId(1)) != sid; }, 30s));
  EXPECT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "CANCELLED"; }, 30s))
      << Squeue(sid, "%T %r");
  ASSERT_TRUE(LaunchWhenReady(*y, Spec(1, {"sleep", "300"}, 1)).ok());
  const int64_t fresh = y->SlurmId(JobId(1));
  EXPECT_TRUE(WaitFor([&] { return Squeue(fresh, "%T") == "RUNNING"; }, 30s))
      << Squeue(fresh, "%T %r");
}

TEST_F(SlurmExecutorTest, AFreshSlurmJobSbatchRefusesLeavesTheOldOneToRunTheNextAttempt) {
  // A run Slurm requeued is replaced, but sbatch refuses the fresh job (here a submit limit,
  // which the old job itself may fill): the old Slurm job, held, runs the next attempt
  // rather than none.
  const fs::path bin = FaultyTools();
  auto x = Open("fallback", 250ms, 3s);
  ASSERT_TRUE(x);
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  Put(bin / "fail-sbatch---parsable",
      "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job "
      "submit limit, user's size and/or time limits)\n");
  ASSERT_NO_FATAL_FAILURE(Requeue(*x, sid));
  auto launched = LaunchWhenReady(*x, Spec(1, {"sleep", "300"}, 1));
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  EXPECT_EQ(launched->engine_job, std::to_string(sid));
  // A fresh job was tried, then the old one released. (Whether its run then survives is
  // Slurm's stale-terminate risk, the reason for fresh jobs: not asserted.)
  ASSERT_TRUE(x->Drain(30s));
  const std::string calls = testing::ReadAll(bin / "calls.log");
  const size_t tried = calls.rfind("sbatch --parsable");
  ASSERT_NE(tried, std::string::npos) << calls;
  EXPECT_NE(calls.find(fmt::format("scontrol release {}", sid), tried), std::string::npos) << calls;
}

TEST_F(SlurmExecutorTest, AKillOfARunWhoseJobTheJournalLostCancelsItsSlurmJob) {
  // Regression (found by a review): serve started with --accept-journal-loss finds a job's
  // directory the journal no longer knows, and kills the attempts the executor can prove
  // alive (FindLaunched), so that their GPUs are not given out twice. Under Slurm that kill
  // was refused ("no attempt of it runs": this serve never launched it) and the run went on.
  auto x = Open("lost", 250ms, 3s);
  ASSERT_TRUE(x);
  const LaunchSpec first = Spec(1, {"sleep", "300"});
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  x.reset();  // serve goes away; the next one's journal lost job 1
  auto y = Open("lost", 250ms, 3s);
  ASSERT_TRUE(y);
  const auto ref = y->FindLaunched(JobId(1), 0, first.job_dir);
  ASSERT_TRUE(ref);
  ASSERT_TRUE(y->Signal(*ref, SIGKILL).ok());
  EXPECT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "CANCELLED"; }, 30s))
      << Squeue(sid, "%T %r");
  for (const ExitInfo& e : y->Poll()) ADD_FAILURE() << "an exit reported: " << e.reason;
}

TEST_F(SlurmExecutorTest, AKilledJobsReplacedAndRetiredSlurmJobsEndCancelledAndForgottenWithSlurm) {
  // A job killed at the end of its grace (scancel KILL, then requeuehold) is replaced by a
  // fresh Slurm job and the old one cancelled at once, while Slurm may still be completing
  // the kill (an epilog of 3 s here); when the job is retired, the fresh one is cancelled
  // too. Neither is left pending and held. (A stress run once found the old one pending and
  // held after its cancel, Slurm having requeued it after all; such a job is now cancelled
  // again, Sweep. That race is not forced here: this checks the end state.) The executor
  // remembers the job and both cancelled Slurm jobs while Slurm does, and forgets them once
  // Slurm has (here a slurmctld started clean; MinJobAge is 10 minutes): before, it remembered
  // every job and every Slurm job it ever cancelled for as long as serve ran. A held Slurm job
  // of the forgotten job that shows up later is cancelled.
  ASSERT_TRUE(ClusterWithSlowScript("Epilog"));
  auto x = Open("retire", 250ms, 3s);
  ASSERT_TRUE(x);
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGKILL).ok());
  auto end = NextExit(*x);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->signal, SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return x->Drain(1s) && x->SlurmId(JobId(1)) != sid; }, 30s));
  const int64_t fresh = x->SlurmId(JobId(1));
  // Polled meanwhile, as serve does (a cancel undone is cancelled again there).
  const auto cancelled = [&](int64_t id) {
    (void)x->Poll();
    return Squeue(id, "%T") == "CANCELLED";
  };
  EXPECT_TRUE(WaitFor([&] { return cancelled(sid); }, 30s)) << Squeue(sid, "%T %r");
  x->Retire(JobId(1));  // as serve does at the job's end
  EXPECT_TRUE(WaitFor([&] { return cancelled(fresh); }, 30s)) << Squeue(fresh, "%T %r");
  (void)x->Poll();
  EXPECT_EQ(x->Remembered(), std::make_pair(size_t{1}, size_t{2}));
  cluster_->StopController();
  cluster_->StartController(/*clean=*/true);
  EXPECT_TRUE(WaitFor(
      [&] {
        (void)x->Poll();
        return x->Remembered() == std::make_pair(size_t{0}, size_t{0});
      },
      30s))
      << x->Remembered().first << " " << x->Remembered().second;
  // A held Slurm job of the forgotten job that shows up (an sbatch answered late): cancelled.
  const std::string late = testing::Trimmed(
      cluster_->Sh("sbatch --parsable --hold --comment=tiresias:retire:1 --wrap true").out);
  EXPECT_TRUE(WaitFor([&] { return cancelled(std::stoll(late)); }, 30s))
      << late << ": " << Squeue(std::stoll(late), "%T %r");
}

TEST_F(SlurmExecutorTest, AStopDecidedOnASnapshotOlderThanTheStartStillReachesTheJob) {
  // Regression (a Slurm stress run): a job released and started at once was told to stop
  // while the executor's snapshot still showed it pending. The stop was a hold only (for a
  // job not started yet); the running job never got its SIGTERM and ran until the kill at
  // the end of the grace. Now it is held and signalled (the signal skips a pending job).
  auto x = Open("stale");  // snapshots only after each batch of commands
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "300"});
  Prepared(*x, spec);
  ASSERT_TRUE(x->Launch(spec).ok());
  ASSERT_TRUE(x->Drain(30s));
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "RUNNING"; }, 30s)) << Squeue(sid, "%T");
  const std::string seen = x->EngineState(JobId(1));
  if (seen.find("PENDING") == std::string::npos) {
    GTEST_SKIP() << "the executor's snapshot already shows the start: " << seen;
  }
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGTERM).ok());
  ASSERT_TRUE(x->Drain(30s));
  EXPECT_TRUE(WaitFor([&] { return Squeue(sid, "%T") != "RUNNING"; }, 10s))
      << "the stop did not reach it: " << Squeue(sid, "%T %r");
}

TEST_F(SlurmExecutorTest, AJobStartedUnderASubmitLimitTakesThePlaceOfAHeldJob) {
  // Every tiresias job waits in Slurm as a held job, so a user's submit limit (here 2 jobs,
  // an sbatch that counts them, as MaxSubmitJobsPerUser does) can leave a job the core starts
  // with no Slurm job: its GPUs sat idle until one of the user's jobs ended. Now it takes the
  // place of a job whose held Slurm job only waits and that the core has not started (job 2
  // is started too, held back: job 1), which is untagged and cancelled, and submits at once.
  // Job 1 submits again at its own launch, and a later serve does not read its cancelled job
  // as someone's cancel. A held job left untagged and not cancelled (serve stopped in
  // between) is cancelled by the next serve.
  FaultyTools();
  auto x = Open("limit", 250ms, 3s);
  ASSERT_TRUE(x);
  const auto [held1, held2] = TwoHeldOneRefused(*x);
  ASSERT_NE(held2, 0);
  x->Starting({JobId(2), JobId(3)}, {});
  auto launched = LaunchWhenReady(*x, Spec(3, {"sleep", "300"}));
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  const int64_t sid3 = x->SlurmId(JobId(3));
  ASSERT_NE(sid3, 0);
  EXPECT_TRUE(WaitFor([&] { return Squeue(sid3, "%T") == "RUNNING"; }, 30s)) << Squeue(sid3, "%T");
  EXPECT_EQ(x->SlurmId(JobId(1)), 0);
  EXPECT_EQ(x->SlurmId(JobId(2)), held2);
  EXPECT_EQ(Squeue(held1, "%T %k"), "CANCELLED tiresias:limit:gave-place-of:1");
  EXPECT_EQ(Squeue(held2, "%T"), "PENDING");
  for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "an exit reported: " << e.reason;
  // A later serve: job 1 has no Slurm job, and nothing is reported of it.
  x.reset();
  const std::string left = testing::Trimmed(
      cluster_
          ->Sh("/usr/bin/sbatch --parsable --hold --comment=tiresias:limit:gave-place-of:9 "
               "--wrap true")
          .out);
  auto y = Open("limit", 250ms, 3s);
  ASSERT_TRUE(y);
  EXPECT_EQ(y->SlurmId(JobId(1)), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : y->Poll()) ADD_FAILURE() << "an exit reported: " << e.reason;
        return Squeue(std::stoll(left), "%T") == "CANCELLED";
      },
      30s))
      << left << ": " << Squeue(std::stoll(left), "%T %k");
}

TEST_F(SlurmExecutorTest, TheHeldJobThatGivesItsPlaceIsTheOneTheCoreWouldStartLast) {
  // The core's order decides which held job gives its place under a submit limit: here it
  // would start job 2 before job 1, so job 1 gives it (before, the executor did not know the
  // order and took the newest that never ran: job 2, the next the core would start, which
  // then needed the same exchange).
  FaultyTools();
  auto x = Open("order", 250ms, 3s);
  ASSERT_TRUE(x);
  const auto [held1, held2] = TwoHeldOneRefused(*x);
  ASSERT_NE(held2, 0);
  x->Starting({JobId(3)}, {JobId(2), JobId(1)});
  auto launched = LaunchWhenReady(*x, Spec(3, {"sleep", "300"}));
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  EXPECT_EQ(x->SlurmId(JobId(1)), 0);
  EXPECT_EQ(x->SlurmId(JobId(2)), held2);
  EXPECT_EQ(Squeue(held1, "%T %k"), "CANCELLED tiresias:order:gave-place-of:1");
  EXPECT_EQ(Squeue(held2, "%T"), "PENDING");
}

TEST_F(SlurmExecutorTest, AnAdminsHoldIsReportedAndNotUndoneByALaunch) {
  // Regression (an exploratory test): an admin's `scontrol hold` on the held batch job of a
  // waiting tiresias job was released by serve's launch (scontrol release, as root, undoes
  // it). Now EngineHolds reports it, and a launch pins but does not release it: the run shows
  // released and not started (NotStarted, JobHeldAdmin), and a stop keeps the admin's hold.
  // Once the admin releases it there, the hold is no longer reported.
  auto x = Open("adminhold", 250ms);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "300"});
  Prepared(*x, spec);
  const int64_t sid = x->SlurmId(JobId(1));
  EXPECT_EQ(x->EngineJob(JobId(1)), std::to_string(sid));  // shown before the first launch
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol hold {}", sid)).rc, 0);
  ASSERT_TRUE(
      WaitFor([&] { return x->EngineHolds() && x->EngineHolds()->contains(JobId(1)); }, 30s));
  EXPECT_NE(x->EngineHolds()->at(JobId(1)).find(fmt::format("scontrol uhold {}", sid)),
            std::string::npos);
  ASSERT_TRUE(x->Launch(spec).ok());
  ASSERT_TRUE(x->Drain(30s));
  ASSERT_TRUE(WaitFor([&] { return !x->NotStarted(JobId(1)).empty(); }, 30s));
  EXPECT_NE(x->NotStarted(JobId(1)).find("JobHeldAdmin"), std::string::npos);
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(Squeue(sid, "%T %r"), "PENDING JobHeldAdmin");
  // Stopped (serve requeues and holds the job): no uhold, which, asked by an operator, would
  // turn the admin's hold into a user's (found by a review).
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGTERM).ok());
  ASSERT_TRUE(x->Drain(30s));
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(Squeue(sid, "%T %r"), "PENDING JobHeldAdmin");
  EXPECT_TRUE(x->EngineHolds() && x->EngineHolds()->contains(JobId(1)));
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol release {}", sid)).rc, 0);
  EXPECT_TRUE(WaitFor([&] { return x->EngineHolds() && x->EngineHolds()->empty(); }, 30s));
}

TEST_F(SlurmExecutorTest, AnAdminsHoldPlacedSinceTheLastSnapshotIsNotUndoneByALaunch) {
  // Regression (an exploratory test, 5 of 5): a job launched as soon as it was submitted,
  // held by an admin in between, was released: the check read the poller's snapshot, older
  // than the hold. Slurm is now asked again right before the release. Polls every 30 s here,
  // so the snapshot is the one from the submission.
  auto x = Open("freshhold", 30s);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "300"});
  const int64_t sid = HeldByAnAdminSinceTheSnapshot(*x, spec);
  ASSERT_TRUE(x->Launch(spec).ok());
  ASSERT_TRUE(x->Drain(30s));
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(Squeue(sid, "%T %r"), "PENDING JobHeldAdmin");
}

TEST_F(SlurmExecutorTest, ALaunchIsNotReleasedWhileSqueueCannotSayWhetherAnAdminHoldsIt) {
  // Regression (a closing note): when the squeue right before the release failed, the
  // release went ahead, undoing an admin's hold placed since the snapshot. Now nothing is
  // released until squeue answers; then the hold is seen and kept.
  const fs::path bin = FaultyTools();
  auto x = Open("squeuefails", 30s);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "300"});
  const int64_t sid = HeldByAnAdminSinceTheSnapshot(*x, spec);
  Put(bin / "fail-squeue--h", "squeue: error: something went wrong\n");
  ASSERT_TRUE(x->Launch(spec).ok());
  std::this_thread::sleep_for(3s);
  const auto state = [&] {  // not through the wrapper, which fails `squeue -h` now
    return testing::Trimmed(
        cluster_->Sh(fmt::format("/usr/bin/squeue -h -t all -j {} -o '%T %r'", sid)).out);
  };
  EXPECT_EQ(state(), "PENDING JobHeldAdmin");
  fs::remove(bin / "fail-squeue--h");
  ASSERT_TRUE(x->Drain(30s));
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(Squeue(sid, "%T %r"), "PENDING JobHeldAdmin");
}

TEST_F(SlurmExecutorTest, AnAdminsHoldOfARunningJobHoldsItOnceStopped) {
  // Regression (an exploratory test): `scontrol hold` of a running job's Slurm job (RUNNING,
  // JobHeldAdmin) was ignored, and once the run was stopped its next launch released it (the
  // requeue-hold says "job requeued in held state"). Now it is the admin's hold still: reported
  // (EngineHolds), a launch keeps it back, until `scontrol uhold` hands it back.
  auto x = Open("holdrun", 250ms);
  ASSERT_TRUE(x);
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol hold {}", sid)).rc, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "an exit: " << e.reason;
        return x->EngineState(JobId(1)).find("RUNNING") != std::string::npos &&
               Squeue(sid, "%r") == "JobHeldAdmin";
      },
      30s));
  // Polled over a few snapshots (every 250 ms): it sees the hold of the run.
  const auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until) {
    for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "an exit: " << e.reason;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_FALSE(x->EngineHolds()->contains(JobId(1)));  // running: it runs on
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGTERM).ok());
  ASSERT_TRUE(NextExit(*x));
  ASSERT_TRUE(x->Drain(30s));
  ASSERT_TRUE(WaitFor([&] { return x->EngineHolds()->contains(JobId(1)); }, 30s))
      << Squeue(sid, "%T %r");
  ASSERT_TRUE(x->Launch(Spec(1, {"sleep", "300"}, /*attempt=*/1)).ok());
  ASSERT_TRUE(x->Drain(30s));
  std::this_thread::sleep_for(2s);
  EXPECT_EQ(Squeue(sid, "%T"), "PENDING");
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol uhold {}", sid)).rc, 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        (void)x->Poll();
        return !x->EngineHolds()->contains(JobId(1));
      },
      30s))
      << Squeue(sid, "%T %r");
}

TEST_F(SlurmExecutorTest, AStopSentBeforeTheBatchScriptStartsStillStopsIt) {
  // Regression (CI): a stop sent right after a job was allocated, before its batch script
  // ran (here a 3 s prolog), was dropped by Slurm: the job ran its whole grace out. The stop
  // is now in the attempt file first (TIRESIAS_STOPPED), and the script exits at its start.
  ASSERT_TRUE(ClusterWithSlowScript("Prolog"));
  auto x = Open("prolog", 250ms);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "300"});
  Prepared(*x, spec);
  ASSERT_TRUE(x->Launch(spec).ok());
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "RUNNING"; }, 30s)) << Squeue(sid, "%T");
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGTERM).ok());
  ASSERT_TRUE(x->Drain(30s));
  const std::optional<ExitInfo> end = NextExit(*x);  // 30 s: well before 300
  ASSERT_TRUE(end) << Squeue(sid, "%T %r");
  EXPECT_FALSE(end->cancelled) << end->reason;
  // Back to pending, held, for the next attempt.
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : x->Poll()) ADD_FAILURE() << "an exit reported: " << e.reason;
        return Squeue(sid, "%T") == "PENDING";
      },
      30s))
      << Squeue(sid, "%T %r");
  EXPECT_NE(Squeue(sid, "%r").find("held"), std::string::npos) << Squeue(sid, "%r");
}

TEST_F(SlurmExecutorTest, AKillSentBeforeTheBatchScriptStartsEndsTheRunKilledLiveAndAfterARestart) {
  // A kill sent while Slurm runs the job's prolog (3 s) is dropped by Slurm; the batch script
  // finds TIRESIAS_KILLED at its start and kills itself (before, it exited 0, which a
  // restarted serve read as a stop that checkpointed). The kill's requeue-hold cannot reach
  // slurmctld meanwhile (else it may requeue the job before its script runs: another path).
  // The end reads as a kill live and after a restart, and the next attempt runs.
  ASSERT_TRUE(ClusterWithSlowScript("Prolog"));
  const fs::path bin = FaultyTools();
  auto x = Open("earlykill", 250ms);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "300"});
  Prepared(*x, spec);
  auto launched = x->Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "RUNNING"; }, 30s)) << Squeue(sid, "%T");
  if (ScriptStarted(spec)) GTEST_SKIP() << "the script started before the kill could be sent";
  Put(bin / "fail-scontrol-requeuehold",
      "scontrol: error: Unable to contact slurm controller (connect failure)\n");
  ASSERT_TRUE(x->Signal(launched->ref, SIGKILL).ok());
  const std::optional<ExitInfo> end = NextExit(*x);
  ASSERT_TRUE(end) << Squeue(sid, "%T %r");
  if (testing::ReadAll(fs::path(spec.job_dir) / "output.log").find("stopped before it started") ==
      std::string::npos) {
    GTEST_SKIP() << "Slurm ended the job " << Squeue(sid, "%T") << " before its script ran";
  }
  EXPECT_EQ(Squeue(sid, "%T"), "FAILED");  // killed by a signal: not CANCELLED, not COMPLETED
  EXPECT_EQ(end->signal, SIGKILL) << end->Describe();
  EXPECT_FALSE(end->cancelled) << end->reason;
  // After a restart (the requeue-hold still undone), the same end.
  x.reset();
  auto y = Open("earlykill", 250ms);
  ASSERT_TRUE(y);
  EXPECT_FALSE(y->Adopt(JobId(1), 0, launched->ref, spec.job_dir));
  const std::optional<ExitInfo> again = y->ReadExit(JobId(1), 0, spec.job_dir);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->signal, SIGKILL) << again->Describe();
  EXPECT_FALSE(again->cancelled) << again->reason;
  fs::remove(bin / "fail-scontrol-requeuehold");
  y->Prepare(spec);
  auto next = LaunchWhenReady(*y, Spec(1, {"sleep", "300"}, /*attempt=*/1));
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_TRUE(WaitFor(
      [&] {
        return ScriptStarted(Spec(1, {"sleep", "300"}, 1));
      },
      30s))
      << Squeue(y->SlurmId(JobId(1)), "%T %r");
}

TEST_F(SlurmExecutorTest, AJobOverALimitOnItsOwnSizeFailsWithTheReasonAndTakesNoPlace) {
  // Regression: slurmctld refuses a job over its QOS's MaxTRESPerJob (DenyOnLimit) by the same
  // error as a full MaxSubmitJobs; such a job waited for ever as if for a place (its GPUs held
  // by the core), and took a held job's place for nothing. The reason Slurm names first is
  // read: the launch fails with it, and sbatch is not tried again.
  const fs::path bin = FaultyTools();
  auto x = Open("overlimit", 250ms);
  ASSERT_TRUE(x);
  Prepared(*x, Spec(1, {"sleep", "300"}));  // a held job whose place could be taken
  ASSERT_NE(x->SlurmId(JobId(1)), 0);
  Put(bin / "fail-sbatch---parsable",
      "sbatch: error: QOSMaxGRESPerJob\n"
      "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job "
      "submit limit, user's size and/or time limits)\n");
  const LaunchSpec spec = Spec(2, {"sleep", "300"});
  Prepared(*x, spec);
  x->Starting({JobId(2)}, {});
  StatusOr<Launched> launched = Unavailable("not tried");
  ASSERT_TRUE(WaitFor(
      [&] {
        launched = x->Launch(spec);
        return launched.status().code() != StatusCode::kUnavailable;
      },
      30s))
      << launched.status().message();
  ASSERT_FALSE(launched.ok());
  EXPECT_NE(launched.status().message().find("QOSMaxGRESPerJob"), std::string::npos)
      << launched.status().message();
  EXPECT_NE(launched.status().message().find("accounting policy"), std::string::npos)
      << launched.status().message();
  ASSERT_TRUE(x->Drain(10s));
  const std::string calls = testing::ReadAll(bin / "calls.log");
  std::istringstream lines(calls);
  int tries = 0;
  for (std::string line; std::getline(lines, line);) {
    tries += line.starts_with("sbatch ") && line.find(":overlimit:2 ") != std::string::npos;
  }
  EXPECT_EQ(tries, 1) << calls;
  EXPECT_EQ(Squeue(x->SlurmId(JobId(1)), "%T %k"), "PENDING tiresias:overlimit:1");  // kept
}

}  // namespace
}  // namespace tiresias
