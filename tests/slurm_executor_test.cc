// The Slurm executor (exec/slurm_executor.h) alone on a real one-node Slurm cluster
// (tests/slurm_cluster.h), for the faults an end-to-end run rarely meets: a kill decided on a
// stale snapshot; a Slurm id given out again; serve cut off between an attempt's launch and its
// requeue (an earlier end is never credited to the new attempt); a requeue-hold slurmctld does
// not answer for a while (the job's own kill is never "cancelled outside"); a release Slurm
// refuses (the attempt fails with the reason, the job is not left "running"); an sbatch whose
// answer was lost (no second held job, nothing left when the job is cancelled meanwhile); a
// release whose answer was lost (not a failed launch); a squeue slower than the deadline.
// Faults are injected by wrappers of the Slurm tools put first on PATH (FaultyTools).
// Two runs on one node never share a MASTER_PORT. A run Slurm started by itself, not where
// the attempt recorded was placed, is never credited to that attempt. (After a run Slurm
// requeued by itself: tests/slurm_executor_replace_test.cc.) The fixture:
// tests/slurm_executor_fixture.h. A scancel of a job held before its next attempt is
// the job's cancel, not undone by the launch; so is one during a stop's grace period, but not
// serve's own kill cut off by a restart. A killed run ends once its Slurm job is no longer
// COMPLETING.
#include "exec/slurm_executor.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "common/strings.h"
#include "exec/slurm_batch.h"
#include "serve_process.h"
#include "slurm_executor_fixture.h"
#include "test_util.h"

namespace tiresias {
namespace {

using testing::SlurmCluster;
using testing::WaitFor;

TEST_F(SlurmExecutorTest, AKillFromAStaleSnapshotNeverCancelsTheRequeuedJob) {
  // Regression: a kill queued again for an attempt whose Slurm job the first kill already put
  // back to pending (held), decided on a snapshot older than that, used to `scancel
  // --signal=KILL` it: Slurm cancels a pending job that is sent KILL (then the kill's
  // requeue-hold brought it back, but a poll in between saw it cancelled outside tiresias).
  // The job must stay pending and held, requeued once, ready for its next attempt.
  auto x = Open("stale");
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "60"});
  Prepared(*x, spec);
  auto launched = x->Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "RUNNING" && ScriptStarted(spec); }, 30s))
      << Squeue(sid, "%T");
  Refresh(*x);
  ASSERT_TRUE(
      WaitFor([&] { return x->EngineState(JobId(1)).find("RUNNING") != std::string::npos; }, 10s))
      << x->EngineState(JobId(1));
  ASSERT_TRUE(x->Signal(launched->ref, SIGKILL).ok());
  ASSERT_TRUE(x->Drain(30s));
  // Slurm has it pending again; the executor's snapshot (taken right after the kill) does not
  // show that yet. The same kill again (as after a retry):
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "PENDING"; }, 30s)) << Squeue(sid, "%T");
  const std::string seen = x->EngineState(JobId(1));
  if (seen.find("PENDING") != std::string::npos) {
    GTEST_SKIP() << "the executor's snapshot already shows the requeue: " << seen;
  }
  ASSERT_TRUE(x->Signal(launched->ref, SIGKILL).ok());
  ASSERT_TRUE(x->Drain(30s));
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(Squeue(sid, "%T"), "PENDING");
  EXPECT_NE(Squeue(sid, "%r").find("held"), std::string::npos) << Squeue(sid, "%r");
  // Requeued once, by the kill: not cancelled by the second and requeued again.
  const std::string job = cluster_->Sh(fmt::format("scontrol -o show job {}", sid)).out;
  EXPECT_NE(job.find(" Restarts=1 "), std::string::npos) << job;
}

TEST_F(SlurmExecutorTest, ASlurmIdThatNoLongerCarriesTheJobsTagIsNeverActedOn) {
  // Slurm gives ids out again after its state is reset, so a job id serve remembers may name
  // someone else's job: serve treats its job as gone (submitted again when it launches) and
  // leaves the other alone. Simulated by an sbatch that answers with the id of someone
  // else's held job (a slurmctld started clean gives out ids from where it stopped here). Not
  // by a changed comment, as before: its owner may change that, and the job is still ours
  // (tests/slurm_executor_owner_test.cc); the other job runs another batch script.
  const fs::path bin = FaultyTools();
  const std::string other = testing::Trimmed(
      cluster_->Sh("sbatch --parsable --hold --comment=someone-else --wrap 'sleep 60'").out);
  const int64_t first = ParseInt(other).value_or(0);
  ASSERT_GT(first, 0) << other;
  Put(bin / "sbatch",
      fmt::format("#!/bin/sh\n/usr/bin/sbatch \"$@\" >/dev/null && echo {}\n", first));
  auto x = Open("reuse");
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sleep", "60"});
  Prepared(*x, spec);
  ASSERT_EQ(x->SlurmId(JobId(1)), first);
  Put(bin / "sbatch", "#!/bin/sh\nexec /usr/bin/sbatch \"$@\"\n");
  Refresh(*x);  // the loop's Poll then decides
  ASSERT_TRUE(WaitFor(
      [&] {
        (void)x->Poll();
        return x->SlurmId(JobId(1)) == 0;
      },
      10s));
  // The launch submits a held job of its own; the other is still pending and held.
  auto launched = x->Launch(spec);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.status().code(), StatusCode::kUnavailable) << launched.status().message();
  ASSERT_TRUE(x->Drain(30s));
  EXPECT_GT(x->SlurmId(JobId(1)), first);
  EXPECT_EQ(Squeue(first, "%T"), "PENDING");
  // JobHeldUser: as submitted.
  EXPECT_NE(Squeue(first, "%r").find("Held"), std::string::npos) << Squeue(first, "%r");
}

TEST_F(SlurmExecutorTest, TwoRunsOnTheSameFirstNodeNeverShareAMasterPort) {
  // Regression: MASTER_PORT was 20000 + (job x 7 + attempt) mod 20000, so job 1's attempt 7
  // and job 2's attempt 0 got the same port on the same node: one of them could not bind its
  // rendezvous. A port another of our runs holds on that node is skipped; after a restart
  // the adopted run's port (from its attempt file) is known.
  auto x = Open("ports");
  ASSERT_TRUE(x);
  const LaunchSpec a = Spec(1, {"sleep", "60"}, 7), b = Spec(2, {"sleep", "60"});
  for (const LaunchSpec& s : {a, b}) x->Prepare(s);
  ASSERT_TRUE(x->Drain(30s));
  auto la = x->Launch(a), lb = x->Launch(b);
  ASSERT_TRUE(la.ok()) << la.status().message();
  ASSERT_TRUE(lb.ok()) << lb.status().message();
  EXPECT_EQ(la->master_port, 20000 + 1 * 7 + 7);
  EXPECT_NE(lb->master_port, la->master_port);
  EXPECT_EQ(ReadAttemptFile(b.job_dir)["MASTER_PORT"], std::to_string(lb->master_port));
  // serve restarts and adopts job 1's run; job 2 is launched again: not on job 1's port.
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "RUNNING"; }, 30s)) << Squeue(sid, "%T");
  x.reset();
  auto y = Open("ports");
  ASSERT_TRUE(y);
  ASSERT_TRUE(y->Adopt(JobId(1), 7, la->ref, a.job_dir));
  auto again = y->Launch(b);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_NE(again->master_port, la->master_port);
}

TEST_F(SlurmExecutorTest, AnEarlierAttemptsEndIsNeverCreditedToALaunchCutOffByARestart) {
  // Regression (found by a review): attempt 0 ended (COMPLETED, exit 0, as a preempted job
  // that checkpointed does); attempt 1 was launched (its slurm-attempt.env written) but serve
  // died before the launch requeued and released the Slurm job. The restarted serve read
  // attempt 0's end as attempt 1's: the job "finished", its checkpoints deleted, its work lost.
  // Now the attempt file names the restart count its run will have; an end with another count
  // is not its own. Then the attempt runs, and its own end is read after another restart.
  auto x = Open("credit", 250ms, 3s);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"true"});
  Prepared(*x, spec);
  ASSERT_TRUE(x->Launch(spec).ok());
  const int64_t sid = x->SlurmId(JobId(1));
  const std::optional<ExitInfo> first = NextExit(*x);
  ASSERT_TRUE(first) << Squeue(sid, "%T");
  EXPECT_EQ(first->exit_code, 0);
  EXPECT_EQ(Squeue(sid, "%T"), "COMPLETED");
  // slurmctld stops, attempt 1 is launched (the file written, the commands never run), and
  // serve goes away.
  cluster_->StopController();
  const LaunchSpec again = Spec(1, {"true"}, 1);
  ASSERT_TRUE(x->Launch(again).ok());
  EXPECT_EQ(ReadAttemptFile(again.job_dir)["TIRESIAS_ATTEMPT"], "1");
  x.reset();
  cluster_->StartController();
  ASSERT_TRUE(WaitFor(
      [&] { return cluster_->Sh("scontrol ping").out.find(" is UP") != std::string::npos; }, 30s));
  auto y = Open("credit", 250ms);
  ASSERT_TRUE(y);
  EXPECT_FALSE(y->ReadExit(JobId(1), 1, again.job_dir)) << "attempt 0's end read as attempt 1's";
  EXPECT_FALSE(y->FindLaunched(JobId(1), 1, again.job_dir));
  // Relaunched (recovery's relaunch of a vanished attempt): it runs, and its end is its own.
  ASSERT_TRUE(y->Launch(again).ok());
  ASSERT_TRUE(y->Drain(30s));
  // Its run ended (Slurm's word: requeued once, then completed); serve restarts again.
  const auto show = [&] { return cluster_->Sh(fmt::format("scontrol -o show job {}", sid)).out; };
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string j = show();
        return j.find(" Restarts=1 ") != std::string::npos &&
               j.find("JobState=COMPLETED") != std::string::npos;
      },
      30s))
      << show();
  y.reset();
  auto z = Open("credit");
  ASSERT_TRUE(z);
  auto end = z->ReadExit(JobId(1), 1, again.job_dir);
  ASSERT_TRUE(end) << show();
  EXPECT_EQ(end->attempt, 1);
  EXPECT_EQ(end->exit_code, 0);
}

TEST_F(SlurmExecutorTest, AKillWhoseRequeueSlurmDoesNotAnswerIsNeverACancelOutside) {
  // Regression (found by a review): the kill at the end of a grace period ends the Slurm job
  // (scancel --signal=KILL) and puts it back to pending, held (requeuehold). While that
  // requeue-hold was being retried (slurmctld busy), a snapshot showed the job ended
  // (CANCELLED): it was reported as cancelled outside tiresias, and the job cancelled.
  const fs::path bin = FaultyTools();
  auto x = Open("slowhold", 250ms);
  ASSERT_TRUE(x);
  ASSERT_TRUE(KilledWithoutItsRequeue(*x, bin));
  const int64_t sid = x->SlurmId(JobId(1));
  std::vector<ExitInfo> exits;
  auto poll_for = [&](std::chrono::milliseconds d) {
    for (auto until = std::chrono::steady_clock::now() + d;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(50ms)) {
      for (const ExitInfo& e : x->Poll()) exits.push_back(e);
    }
  };
  // The requeue waits; Slurm says the job was cancelled (as it does after KILL), and a poll
  // has seen it so (a loaded slurmd takes seconds to leave COMPLETING: wait for the word).
  for (auto until = std::chrono::steady_clock::now() + 30s;
       Squeue(sid, "%T") != "CANCELLED" && std::chrono::steady_clock::now() < until;) {
    poll_for(500ms);
  }
  ASSERT_EQ(Squeue(sid, "%T"), "CANCELLED");
  poll_for(2s);
  fs::remove(bin / "fail-scontrol-requeuehold");
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "PENDING"; }, 30s)) << Squeue(sid, "%T");
  poll_for(2s);
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_NE(exits[0].signal, 0);  // as Slurm recorded it (SIGTERM: slurmstepd's first)
  EXPECT_FALSE(exits[0].cancelled) << exits[0].reason;
  for (const ExitInfo& e : exits) EXPECT_FALSE(e.cancelled) << e.reason;
}

TEST_F(SlurmExecutorTest, AKilledRunEndsOnlyOnceItsSlurmJobIsNoLongerCompleting) {
  // Regression (an exploratory test): a run killed at the end of its grace (it ignores SIGTERM)
  // was reported ended while Slurm still had its job COMPLETING; its GPUs went to the next
  // job, and the old Slurm job, replaced, was counted as one outside tiresias holding them:
  // the node's capacity fell and other jobs were evicted, one after another.
  auto x = Open("completing", 250ms);
  ASSERT_TRUE(x);
  const LaunchSpec spec = Spec(1, {"sh", "-c", "trap '' TERM; sleep 60"});
  Prepared(*x, spec);
  auto launched = x->Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().message();
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "RUNNING" && ScriptStarted(spec); }, 30s))
      << Squeue(sid, "%T");
  ASSERT_TRUE(x->Signal(launched->ref, SIGTERM).ok());
  std::this_thread::sleep_for(1s);
  ASSERT_TRUE(x->Signal(launched->ref, SIGKILL).ok());
  std::vector<std::string> states_at_exit;  // Slurm's word for the job when its end came
  int outside = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : x->Poll()) {
          (void)e;
          states_at_exit.push_back(Squeue(sid, "%T"));
        }
        if (auto nodes = x->PollNodes()) {
          for (const NodeReport& n : *nodes) outside += n.gpus_outside;
        }
        return !states_at_exit.empty();
      },
      60s))
      << Squeue(sid, "%T");
  EXPECT_NE(states_at_exit.front(), "COMPLETING");
  EXPECT_EQ(outside, 0) << "its own Slurm job counted as one outside tiresias";
}

TEST_F(SlurmExecutorTest, AKillCutOffByARestartBeforeItsRequeueIsNeverACancelOutside) {
  // Found by a review: serve stopped between the kill's KILL (the run ends CANCELLED) and its
  // requeue-hold. The next serve read the CANCELLED run as someone's scancel: the job was
  // cancelled. The kill is now in the attempt file (TIRESIAS_KILLED), read after a restart.
  const fs::path bin = FaultyTools();
  auto x = Open("cutkill", 250ms);
  ASSERT_TRUE(x);
  const std::optional<ProcessRef> ref = KilledWithoutItsRequeue(*x, bin);
  ASSERT_TRUE(ref);
  const LaunchSpec spec = Spec(1, {"sleep", "60"});
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "CANCELLED"; }, 30s)) << Squeue(sid, "%T");
  x.reset();  // serve stops before the requeue-hold
  fs::remove(bin / "fail-scontrol-requeuehold");
  auto y = Open("cutkill", 250ms);
  ASSERT_TRUE(y);
  EXPECT_FALSE(y->Adopt(JobId(1), 0, *ref, spec.job_dir));
  const std::optional<ExitInfo> end = y->ReadExit(JobId(1), 0, spec.job_dir);
  ASSERT_TRUE(end);
  EXPECT_FALSE(end->cancelled) << end->reason;
  EXPECT_NE(end->signal, 0);
  // The kill's requeue-hold is done now: the job is not read as cancelled (between attempts
  // or at its next launch), and its next attempt runs.
  y->Prepare(spec);
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : y->Poll()) ADD_FAILURE() << "an exit reported: " << e.reason;
        return Squeue(sid, "%T") == "PENDING";
      },
      30s))
      << Squeue(sid, "%T %r");
  auto next = LaunchWhenReady(*y, Spec(1, {"sleep", "60"}, /*attempt=*/1));
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "RUNNING"; }, 30s)) << Squeue(sid, "%T");
}

TEST_F(SlurmExecutorTest, AReleaseSlurmRefusesFailsTheAttemptWithTheReason) {
  // Regression (found by a review): the result of `scontrol release` was not looked at; a job
  // Slurm kept held was counted as running by the core for ever, its GPUs idle.
  const fs::path bin = FaultyTools();
  auto x = Open("norelease", 250ms);
  ASSERT_TRUE(x);
  const std::optional<ExitInfo> end = TrueWithFault(*x, bin / "fail-scontrol-release");
  ASSERT_TRUE(end);
  EXPECT_EQ(end->attempt, 0);
  EXPECT_FALSE(end->known());
  EXPECT_NE(end->reason.find("scontrol release"), std::string::npos) << end->reason;
  EXPECT_NE(end->reason.find("permission denied"), std::string::npos) << end->reason;
  // Slurm's job is still there, held, for the next attempt.
  EXPECT_EQ(Squeue(x->SlurmId(JobId(1)), "%T"), "PENDING");
}

TEST_F(SlurmExecutorTest, AnSbatchWhoseAnswerWasLostLeavesNoSecondHeldJob) {
  // Regression: an sbatch that made the job but whose answer was lost (a timeout) was run
  // again: two held jobs with the same tag, one of them held in Slurm for ever. Now the next
  // snapshot is looked at first and the job it made is taken.
  const fs::path bin = FaultyTools();
  auto x = Open("lostsbatch", 250ms);
  ASSERT_TRUE(x);
  Put(bin / "lose-sbatch", "sbatch: error: Socket timed out on send/recv operation\n");
  Prepared(*x, Spec(1, {"true"}));
  ASSERT_FALSE(fs::exists(bin / "lose-sbatch"));  // the fault happened
  ASSERT_TRUE(WaitFor([&] { return x->SlurmId(JobId(1)) != 0; }, 30s));
  const std::string ours =
      cluster_->Sh("squeue -h -t all -o '%i %k' | grep -c ' tiresias:lostsbatch:1$'").out;
  EXPECT_EQ(testing::Trimmed(ours), "1");
  EXPECT_EQ(Squeue(x->SlurmId(JobId(1)), "%k"), "tiresias:lostsbatch:1");
}

TEST_F(SlurmExecutorTest, ASqueueSlowerThanTheDeadlineIsGivenMoreTime) {
  // Regression: squeue --json of a cluster with very many jobs can take longer than the
  // command deadline; it was killed and tried again with the same deadline for ever, and
  // serve never saw a job of its own start. Now each timeout gives squeue more time.
  const fs::path bin = FaultyTools();
  auto x = Open("slowsqueue", 250ms, 2s);
  ASSERT_TRUE(x);
  Put(bin / "slow-squeue", "3\n");
  const LaunchSpec spec = Spec(1, {"sleep", "30"});
  Prepared(*x, spec);
  ASSERT_TRUE(x->Launch(spec).ok());
  EXPECT_TRUE(
      WaitFor([&] { return x->EngineState(JobId(1)).find("RUNNING") != std::string::npos; }, 40s))
      << x->EngineState(JobId(1));
  EXPECT_FALSE(x->ContactLost());
}

TEST_F(SlurmExecutorTest, AReleaseWhoseAnswerWasLostIsNotAFailedLaunch) {
  // The release of a review's fix must not fail an attempt Slurm did release: `scontrol
  // release` did its work but its answer was an error (as when a job among several is
  // refused and the others are released again one by one). The job is not held any more, so
  // it runs, and its end is its own.
  const fs::path bin = FaultyTools();
  auto x = Open("lostrelease", 250ms);
  ASSERT_TRUE(x);
  const std::optional<ExitInfo> end = TrueWithFault(*x, bin / "lose-scontrol-release");
  ASSERT_TRUE(end);
  EXPECT_FALSE(fs::exists(bin / "lose-scontrol-release"));  // the fault happened
  EXPECT_EQ(end->exit_code, 0) << end->reason;
  EXPECT_EQ(end->reason.find("launch failed"), std::string::npos) << end->reason;
}

TEST_F(SlurmExecutorTest, AJobRetiredWhileItsSbatchAnswerWasLostLeavesNothingInSlurm) {
  // The job is cancelled (retired) before the snapshot that shows the Slurm job its lost
  // sbatch made: that Slurm job, which tiresias never learned the id of, is cancelled too.
  const fs::path bin = FaultyTools();
  auto x = Open("lostretire", 250ms);
  ASSERT_TRUE(x);
  Put(bin / "lose-sbatch", "sbatch: error: Socket timed out on send/recv operation\n");
  x->Prepare(Spec(1, {"true"}));
  ASSERT_TRUE(WaitFor([&] { return !fs::exists(bin / "lose-sbatch"); }, 30s));
  x->Retire(JobId(1));
  const std::string pending = "squeue -h -t PD -o '%i %k' | grep -c ' tiresias:lostretire:1$'";
  EXPECT_TRUE(WaitFor(
      [&] {
        (void)x->Poll();
        return testing::Trimmed(cluster_->Sh(pending).out) == "0";
      },
      30s))
      << cluster_->Sh("squeue -h -t all -o '%i %T %k'").out;
  EXPECT_EQ(x->SlurmId(JobId(1)), 0);
}

TEST_F(SlurmExecutorTest, AStopWaitsForNeitherASlowSqueueNorASlowCommandOfTheWorker) {
  // Regression: serve's shutdown waited for a squeue in flight to answer or reach its
  // deadline (up to minutes on a big cluster: the deadline grows with squeue's pace), and for
  // the worker's batch in flight (against a hung slurmctld, tens of seconds). Every command
  // in flight is abandoned when the executor stops; what was decided still reaches Slurm
  // first (Drain, at most 2 s). Here squeue, then scontrol, take 30 s; the deadline is 20 s.
  const fs::path bin = FaultyTools();
  const auto calls = [&](const std::string& what) {
    const std::string log = testing::ReadAll(bin / "calls.log");
    size_t n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  const auto timed_stop = [](std::unique_ptr<SlurmExecutor>& x) {
    const auto t0 = std::chrono::steady_clock::now();
    x.reset();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t0);
  };
  auto x = Open("slowstop", 250ms, 20s);
  ASSERT_TRUE(x);
  Put(bin / "slow-squeue", "30\n");
  const size_t before = calls("squeue --json");
  ASSERT_TRUE(WaitFor([&] { return calls("squeue --json") > before; }, 10s));  // in flight
  EXPECT_LT(timed_stop(x), 5s);
  fs::remove(bin / "slow-squeue");
  // The worker: a launch's pin (scontrol update) in flight.
  auto y = Open("slowstop", 1h, 20s);
  ASSERT_TRUE(y);
  const LaunchSpec spec = Spec(1, {"sleep", "30"});
  Prepared(*y, spec);
  Put(bin / "slow-scontrol", "30\n");
  ASSERT_TRUE(y->Launch(spec).ok());
  ASSERT_TRUE(WaitFor([&] { return calls("scontrol update") > 0; }, 10s));
  EXPECT_LT(timed_stop(y), 5s);
}

TEST_F(SlurmExecutorTest, ARunSlurmStartedByItselfIsNeverCreditedToAnAttemptWhosePinNeverRan) {
  // Regression (found by a review): attempt 0 runs on one node; Slurm requeues the job by
  // itself (`scontrol requeue`, as after a node failure: pending, not held, restart count 1)
  // while serve is down, and serve had written attempt 1's file (placed on the other node)
  // before it died, its pin never run. The restarted serve took Slurm's pending (or restarted)
  // job for attempt 1: it runs where attempt 0 was pinned, on GPUs the core gave to others.
  // Now it is neither adopted nor found, and it is stopped; attempt 1, launched again, runs
  // where it was placed.
  cluster_.reset();
  cluster_ = std::make_unique<SlurmCluster>(2, 1);
  ASSERT_TRUE(cluster_->up()) << cluster_->error();
  auto x = Open("unplaced", 250ms, 3s);
  ASSERT_TRUE(x);
  const LaunchSpec first = Spec(1, {"sleep", "300"});
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  const std::string node_a = Squeue(sid, "%N");
  std::string node_b;
  const std::string nodes = cluster_->Sh("sinfo -h -N -o %N").out;
  for (const auto& n : Split(nodes, '\n')) {
    if (!n.empty() && n != node_a) node_b = std::string(n);
  }
  ASSERT_FALSE(node_b.empty());
  x.reset();  // serve goes away
  ASSERT_EQ(cluster_->Sh(fmt::format("scontrol requeue {}", sid)).rc, 0);
  // Attempt 1's file, as Launch writes it for node 1 (restart count 1: Slurm's requeue had
  // counted).
  const LaunchSpec again{.job = JobId(1),
                         .attempt = 1,
                         .argv = {"sleep", "300"},
                         .gpus = {GpuId{1, 0}},
                         .job_dir = first.job_dir};
  Put(AttemptFile(again.job_dir),
      fmt::format("TIRESIAS_ATTEMPT=1\nTIRESIAS_SLURM_RESTARTS=1\nMASTER_ADDR={0}\n"
                  "MASTER_PORT=20008\nWORLD_SIZE=1\nTIRESIAS_GPUS=1\nTIRESIAS_NODES={0}\n"
                  "TIRESIAS_PLACEMENT=1:1\n",
                  node_b));
  // Slurm's requeue done: pending, not held (or started again by Slurm).
  const auto show = [&] { return cluster_->Sh(fmt::format("scontrol -o show job {}", sid)).out; };
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string j = show();
        return j.find(" Restarts=1 ") != std::string::npos &&
               (j.find("JobState=PENDING") != std::string::npos ||
                j.find("JobState=RUNNING") != std::string::npos);
      },
      30s))
      << show();
  auto y = Open("unplaced", 250ms, 3s);
  ASSERT_TRUE(y);
  Refresh(*y);
  const std::string state = Squeue(sid, "%T %Q");
  ASSERT_TRUE(state.starts_with("PENDING") || state.starts_with("RUNNING")) << state;
  EXPECT_NE(state, "PENDING 0") << "held: not the case this test is for";
  const ProcessRef ref{.pid = static_cast<int>(sid), .start_ticks = 1};
  EXPECT_FALSE(y->FindLaunched(JobId(1), 1, again.job_dir)) << state;
  EXPECT_FALSE(y->Adopt(JobId(1), 1, ref, again.job_dir)) << state;
  // Recovery relaunches the attempt that vanished: it runs on node b, the other is stopped.
  ASSERT_TRUE(y->Drain(30s));
  ASSERT_TRUE(WaitFor(
      [&] {
        (void)y->Poll();
        return y->Launch(again).ok();
      },
      30s));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T %N") == "RUNNING " + node_b; }, 60s))
      << Squeue(sid, "%T %N %r");
}

TEST_F(SlurmExecutorTest, AScancelOfAHeldJobBeforeItsLaunchIsACancelNotUndone) {
  // Regression (a review): the launch step requeue-holds a Slurm job whose last run ended in
  // a final state, to run the next attempt in it. A job someone scancelled while it was held
  // between attempts is CANCELLED too: the requeue-hold brought it back, and it ran. Now a
  // cancel a snapshot shows after our last hold ends the attempt as cancelled (the job's
  // cancel). Job 1 between attempts (stopped, requeue-held), job 2 before its first.
  auto x = Open("undone", 250ms);
  ASSERT_TRUE(x);
  const int64_t sid = RunningSleep(*x);
  ASSERT_NE(sid, 0);
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGTERM).ok());
  ASSERT_TRUE(NextExit(*x));
  ASSERT_TRUE(x->Drain(30s));
  ASSERT_TRUE(WaitFor([&] { return Squeue(sid, "%T") == "PENDING"; }, 30s)) << Squeue(sid, "%T");
  const LaunchSpec second = Spec(2, {"sleep", "300"});
  Prepared(*x, second);
  const int64_t sid2 = x->SlurmId(JobId(2));
  for (int64_t id : {sid, sid2}) ASSERT_EQ(cluster_->Sh(fmt::format("scancel {}", id)).rc, 0);
  // A snapshot that shows both cancelled, not yet polled.
  ASSERT_TRUE(WaitFor(
      [&] {
        return x->EngineState(JobId(1)).find("CANCELLED") != std::string::npos &&
               x->EngineState(JobId(2)).find("CANCELLED") != std::string::npos;
      },
      30s))
      << x->EngineState(JobId(1)) << "; " << x->EngineState(JobId(2));
  ASSERT_TRUE(x->Launch(Spec(1, {"sleep", "300"}, /*attempt=*/1)).ok());
  ASSERT_TRUE(x->Launch(second).ok());
  ASSERT_TRUE(x->Drain(30s));
  std::map<int64_t, ExitInfo> ends;
  ASSERT_TRUE(WaitFor(
      [&] {
        for (const ExitInfo& e : x->Poll()) ends[e.job.value()] = e;
        return ends.size() == 2;
      },
      30s));
  EXPECT_EQ(ends[1].attempt, 1);
  EXPECT_EQ(ends[2].attempt, 0);
  for (auto& [job, e] : ends) {
    EXPECT_TRUE(e.cancelled) << job << ": " << e.reason;
    EXPECT_NE(e.reason.find(fmt::format("Slurm job {} CANCELLED", job == 1 ? sid : sid2)),
              std::string::npos)
        << e.reason;
    EXPECT_EQ(e.reason.find("outside tiresias"), std::string::npos) << e.reason;  // said once
  }
  std::this_thread::sleep_for(2s);  // nothing brings them back
  EXPECT_EQ(Squeue(sid, "%T"), "CANCELLED");
  EXPECT_EQ(Squeue(sid2, "%T"), "CANCELLED");
}

TEST_F(SlurmExecutorTest, AScancelDuringAStopsGraceIsACancelNotAStop) {
  // Regression (found with the test above): a run told to stop (SIGTERM) that someone
  // scancelled in its grace period ended CANCELLED, was read as the stop's end, and was
  // requeue-held for its next attempt: the cancel was undone. Our stops only signal (the run
  // ends COMPLETED or FAILED); only our kill ends it CANCELLED. Job 1 ignores SIGTERM.
  auto x = Open("grace", 250ms);
  ASSERT_TRUE(x);
  const fs::path ready = dir_ / "ready";
  const LaunchSpec spec =
      Spec(1, {"sh", "-c", "trap '' TERM; touch " + ready.string() + "; sleep 300"});
  Prepared(*x, spec);
  ASSERT_TRUE(x->Launch(spec).ok());
  const int64_t sid = x->SlurmId(JobId(1));
  ASSERT_TRUE(WaitFor(
      [&] {
        return fs::exists(ready) && x->EngineState(JobId(1)).find("RUNNING") != std::string::npos;
      },
      30s))
      << Squeue(sid, "%T %r");
  ASSERT_TRUE(x->Signal({.pid = static_cast<int>(sid), .start_ticks = 0}, SIGTERM).ok());
  ASSERT_TRUE(x->Drain(30s));
  std::this_thread::sleep_for(1s);
  ASSERT_EQ(Squeue(sid, "%T"), "RUNNING");  // it ignored the stop
  ASSERT_EQ(cluster_->Sh(fmt::format("scancel {}", sid)).rc, 0);
  const std::optional<ExitInfo> end = NextExit(*x);
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->cancelled) << end->reason;
  ASSERT_TRUE(x->Drain(30s));
  std::this_thread::sleep_for(2s);  // nothing brings it back
  (void)x->Poll();
  ASSERT_TRUE(x->Drain(30s));
  EXPECT_EQ(Squeue(sid, "%T"), "CANCELLED");
}

}  // namespace
}  // namespace tiresias
