// Checkpoints, narrated on tiny clusters: the core learns a running job's last checkpoint
// (Scheduler::Checkpointed), knows the work it would lose if stopped (Job::LossAt), prefers
// as victims of one priority class the jobs that lose least (SchedulerOptions::
// checkpoint_aware), and, in the simulator's model (lose_work), rolls a preempted job back to
// its last checkpoint and counts the GPU-time lost. The simulator feeds checkpoints from an
// interval per job. Units: ms; service and loss in GPU-ms.
#include <gtest/gtest.h>

#include <memory>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "sim/simulator.h"
#include "test_files.h"

namespace tiresias {
namespace {

// dlas with two queues split at 60 GPU-s, no promotion, on one node of `gpus` GPUs.
// lose_work: the simulator's model; off, the live daemon's (a job's loss is known only once it
// reports checkpoints).
std::unique_ptr<Scheduler> Make(int gpus, bool aware, bool lose_work = true) {
  auto p = MakeOrderingPolicy("dlas", {"queues=2", "thresholds=60", "promote_knob=0"}, TestFiles());
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
  return std::make_unique<Scheduler>(
      *Topology::Create(1, 1, gpus), std::move(*p), std::move(*pl),
      SchedulerOptions{.checkpoint_aware = aware, .lose_work = lose_work});
}

// Jobs 1 and 2 (1 GPU each, submitted at 0) run on 2 GPUs and are demoted to Q2 at 60 s.
// Job 1 checkpoints at 150 s, job 2 at 100 s. At 200 s job 3 (1 GPU) arrives in Q1 and needs
// one of their GPUs. Both are in Q2: the same class. In policy order (submit, id) job 1 is
// kept and job 2, the last, is the victim: it loses 200 - 100 = 100 s x 1 GPU = 100,000
// GPU-ms. Checkpoint-aware, job 1 loses only 200 - 150 = 50 s, so it is stopped instead:
// 50,000 GPU-ms lost, half. Its service (200 s of GPU-time used) is kept; its packed work
// rolls back to its checkpoint, 150,000 ms.
void Scenario(bool aware, JobId want_victim, Service want_lost, Duration want_work) {
  auto s = Make(2, aware);
  ASSERT_TRUE(
      s->Submit({.id = JobId(1), .gpus = 1, .submit = 0, .duration = Seconds(1000)}, 0).ok());
  ASSERT_TRUE(
      s->Submit({.id = JobId(2), .gpus = 1, .submit = 0, .duration = Seconds(1000)}, 0).ok());
  EXPECT_EQ(Brief(s->Schedule(0)), "start 1, start 2");
  ASSERT_TRUE(s->Checkpointed(JobId(2), Seconds(100), Seconds(100)).ok());
  ASSERT_TRUE(s->Checkpointed(JobId(1), Seconds(150), Seconds(150)).ok());
  EXPECT_EQ(s->Find(JobId(1))->LossAt(Seconds(200)), 50'000);
  EXPECT_EQ(s->Find(JobId(2))->LossAt(Seconds(200)), 100'000);
  ASSERT_TRUE(
      s->Submit({.id = JobId(3), .gpus = 1, .submit = Seconds(200), .duration = Seconds(10)},
                Seconds(200))
          .ok());
  EXPECT_EQ(Brief(s->Schedule(Seconds(200))),
            "preempt " + std::to_string(want_victim.value()) + ", start 3");
  const Job* v = s->Find(want_victim);
  EXPECT_EQ(v->state, JobState::kPending);
  EXPECT_EQ(v->lost, want_lost);
  EXPECT_EQ(v->work_done, want_work);
  EXPECT_EQ(v->AttainedAt(Seconds(200)), 200'000);  // service kept
  const Job* other = s->Find(want_victim == JobId(1) ? JobId(2) : JobId(1));
  EXPECT_TRUE(other->running());
  EXPECT_EQ(other->lost, 0);
}

TEST(CheckpointVictims, PolicyOrderStopsTheLastJobOfTheClass) {
  Scenario(/*aware=*/false, JobId(2), 100'000, Seconds(100));
}

TEST(CheckpointVictims, CheckpointAwareStopsTheJobThatLosesLeast) {
  Scenario(/*aware=*/true, JobId(1), 50'000, Seconds(150));
}

TEST(CheckpointVictims, LiveAJobThatNeverReportedACheckpointIsNeitherSwappedNorReordered) {
  // Live (no lose_work): jobs 1, 2, 3 (1 GPU each, submitted at 0) run on 3 GPUs and are all
  // in Q2 from 60 s; policy order 1, 2, 3. Job 1 checkpoints at 190 s (loss at 200 s: 10 s),
  // job 3 at 100 s (100 s); job 2 never reports one (unknown: it keeps the signal-and-grace
  // protocol). At 200 s jobs 4 and 5 (1 GPU each, Q1) need two GPUs: in policy order the
  // victims are 2 and 3. Job 3 (known, 100 s) swaps with job 1 (known, 10 s): victims 2, 1.
  // Job 2 is not swapped out for anything and keeps its place: victims 2, 1, in that order.
  // With job 2 reporting too (at 195 s: 5 s) the swap is the same (job 1's 10 s is not less
  // than job 2's 5 s; it is less than job 3's 100 s), and the victims are ordered by loss,
  // most first: 1, 2. Job 3 runs on either way.
  for (bool two_reports : {false, true}) {
    SCOPED_TRACE(two_reports);
    auto s = Make(3, /*aware=*/true, /*lose_work=*/false);
    for (int id : {1, 2, 3}) {
      ASSERT_TRUE(
          s->Submit({.id = JobId(id), .gpus = 1, .submit = 0, .duration = Seconds(1000)}, 0).ok());
    }
    EXPECT_EQ(Brief(s->Schedule(0)), "start 1, start 2, start 3");
    ASSERT_TRUE(s->Checkpointed(JobId(3), Seconds(100), Seconds(100)).ok());
    ASSERT_TRUE(s->Checkpointed(JobId(1), Seconds(190), Seconds(190)).ok());
    if (two_reports) {
      ASSERT_TRUE(s->Checkpointed(JobId(2), Seconds(195), Seconds(195)).ok());
    }
    for (int id : {4, 5}) {
      ASSERT_TRUE(
          s->Submit({.id = JobId(id), .gpus = 1, .submit = Seconds(200), .duration = Seconds(10)},
                    Seconds(200))
              .ok());
    }
    EXPECT_EQ(Brief(s->Schedule(Seconds(200))), two_reports
                                                    ? "preempt 1, preempt 2, start 4, start 5"
                                                    : "preempt 2, preempt 1, start 4, start 5");
    EXPECT_TRUE(s->Find(JobId(3))->running());
    EXPECT_EQ(s->Find(JobId(1))->lost, 0);  // live: the core counts no loss (serve does)
  }
}

TEST(CheckpointVictims, LiveOneUnknownVictimIsNotReplacedByAKnownKeptJob) {
  // Live: jobs 1 and 2 (1 GPU, Q2 from 60 s) on 2 GPUs; job 1 checkpointed at 199 s (1 s
  // to lose), job 2 never reported. Job 3 (Q1) at 200 s takes one GPU: in policy order the
  // victim is job 2. Its loss is unknown (it may checkpoint on the signal), so it is not
  // swapped for job 1 although job 1 would lose only 1 s: victim 2, as without the option.
  auto s = Make(2, /*aware=*/true, /*lose_work=*/false);
  for (int id : {1, 2}) {
    ASSERT_TRUE(
        s->Submit({.id = JobId(id), .gpus = 1, .submit = 0, .duration = Seconds(1000)}, 0).ok());
  }
  s->Schedule(0);
  ASSERT_TRUE(s->Checkpointed(JobId(1), Seconds(199), Seconds(199)).ok());
  ASSERT_TRUE(
      s->Submit({.id = JobId(3), .gpus = 1, .submit = Seconds(200), .duration = Seconds(10)},
                Seconds(200))
          .ok());
  EXPECT_EQ(Brief(s->Schedule(Seconds(200))), "preempt 2, start 3");
}

TEST(CheckpointVictims, AJobOfAHigherClassIsNeverSwappedIn) {
  // Job 1 (1 GPU) runs from 0 and is in Q2 by 60 s; job 2 (1 GPU) starts at 100 s in Q1 and
  // is still there at 120 s (20 GPU-s < 60). Neither has checkpointed; job 2 would lose 20 s,
  // job 1 120 s. Job 3 (1 GPU, Q1) comes at 120 s: the victim must be job 1 (Q2) even though
  // job 2 loses less, because job 2 is of a higher class (Q1).
  auto s = Make(2, /*aware=*/true);
  ASSERT_TRUE(
      s->Submit({.id = JobId(1), .gpus = 1, .submit = 0, .duration = Seconds(1000)}, 0).ok());
  EXPECT_EQ(Brief(s->Schedule(0)), "start 1");
  ASSERT_TRUE(
      s->Submit({.id = JobId(2), .gpus = 1, .submit = Seconds(100), .duration = Seconds(1000)},
                Seconds(100))
          .ok());
  EXPECT_EQ(Brief(s->Schedule(Seconds(100))), "start 2");
  ASSERT_TRUE(
      s->Submit({.id = JobId(3), .gpus = 1, .submit = Seconds(120), .duration = Seconds(10)},
                Seconds(120))
          .ok());
  EXPECT_EQ(Brief(s->Schedule(Seconds(120))), "preempt 1, start 3");
  EXPECT_EQ(s->Find(JobId(1))->lost, 120'000);  // no checkpoint: the whole run is lost
}

TEST(CheckpointVictims, ACheckpointIsOnlyForARunningJobAndNotFromAnEarlierRun) {
  auto s = Make(1, true);
  ASSERT_TRUE(
      s->Submit({.id = JobId(1), .gpus = 1, .submit = 0, .duration = Seconds(100)}, 0).ok());
  EXPECT_EQ(s->Checkpointed(JobId(1), 0, 0).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s->Checkpointed(JobId(9), 0, 0).code(), StatusCode::kNotFound);
  s->Schedule(0);
  ASSERT_TRUE(s->Checkpointed(JobId(1), Seconds(30), Seconds(40)).ok());
  EXPECT_EQ(s->Find(JobId(1))->ckpt_at, Seconds(30));
  ASSERT_TRUE(s->Checkpointed(JobId(1), Seconds(20), Seconds(40)).ok());  // older: ignored
  EXPECT_EQ(s->Find(JobId(1))->ckpt_at, Seconds(30));
  EXPECT_EQ(s->Find(JobId(1))->LossAt(Seconds(40)), 10'000);
}

// What a stopped run loses (Job::stop_loss), kept for a driver whose process of that run may
// still be stopping. Job 1 (1 GPU) runs from 0 and checkpoints at 30 s; requeued at 50 s, its
// run loses 50 - 30 = 20 s = 20,000 GPU-ms. Started again at once, its progress pinned to 60 s
// (the old process's deadline), and requeued at 55 s before it made any: the old run's 20,000
// stays (that process may still be stopping). Started again with progress from 56 s and
// requeued at 70 s: 70 - max(30, 56) = 14 s = 14,000.
TEST(CheckpointVictims, AStoppedRunsLossIsKeptUntilARunThatMadeProgressStops) {
  auto s = Make(1, true, /*lose_work=*/false);
  ASSERT_TRUE(
      s->Submit({.id = JobId(1), .gpus = 1, .submit = 0, .duration = Seconds(1000)}, 0).ok());
  s->Schedule(0);
  ASSERT_TRUE(s->Checkpointed(JobId(1), Seconds(30), Seconds(30)).ok());
  ASSERT_TRUE(s->Requeue(JobId(1), Seconds(50)).ok());
  EXPECT_EQ(s->Find(JobId(1))->stop_loss, 20'000);
  EXPECT_EQ(Brief(s->Schedule(Seconds(50))), "start 1");
  ASSERT_TRUE(s->SetProgressStart(JobId(1), Seconds(60), Seconds(50)).ok());
  ASSERT_TRUE(s->Requeue(JobId(1), Seconds(55)).ok());
  EXPECT_EQ(s->Find(JobId(1))->stop_loss, 20'000);
  EXPECT_EQ(Brief(s->Schedule(Seconds(55))), "start 1");
  ASSERT_TRUE(s->SetProgressStart(JobId(1), Seconds(56), Seconds(55)).ok());
  ASSERT_TRUE(s->Requeue(JobId(1), Seconds(70)).ok());
  EXPECT_EQ(s->Find(JobId(1))->stop_loss, 14'000);
}

TEST(CheckpointSimulation, APreemptedJobRedoesTheWorkSinceItsLastCheckpoint) {
  // One GPU, dlas (2 queues at 60 GPU-s, running-first), no restore cost, checkpoints every
  // 200 s of progress. Job 1 (1000 s) runs from 0, checkpoints at 200 and 400 s, and is in Q2.
  // Job 2 (100 s) comes at 500 s in Q1 and preempts it: job 1 loses 500 - 400 = 100 s =
  // 100,000 GPU-ms and rolls back to 400 s of work. Job 2 runs 500-600 s (demoted at 560 s,
  // running-first keeps it). Job 1 resumes at 600 s with 600 s left and ends at 1200 s, 100 s
  // later than without the checkpoint model.
  std::vector<JobSpec> jobs = {
      {.id = JobId(1), .gpus = 1, .submit = 0, .duration = Seconds(1000)},
      {.id = JobId(2), .gpus = 1, .submit = Seconds(500), .duration = Seconds(100)}};
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 1, 1);
  cfg.policy = "dlas";
  cfg.policy_opts = {"queues=2", "thresholds=60", "promote_knob=0", "queue_order=running-first"};
  cfg.placement = "count";
  cfg.preempt_overhead = 0;
  cfg.ckpt_min = cfg.ckpt_max = Seconds(200);
  auto r = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->jobs[0].lost, 100'000);
  EXPECT_EQ(r->jobs[0].end, Seconds(1200));
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_EQ(r->jobs[1].end, Seconds(600));
  EXPECT_EQ(r->jobs[1].lost, 0);
  cfg.ckpt_min = cfg.ckpt_max = 0;  // no model: nothing lost, job 1 ends at 1100 s
  r = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs[0].lost, 0);
  EXPECT_EQ(r->jobs[0].end, Seconds(1100));
}

TEST(CheckpointSimulation, IntervalsAreDrawnPerJobDeterministically) {
  SimConfig cfg;
  cfg.ckpt_min = Seconds(600);
  cfg.ckpt_max = Seconds(3600);
  cfg.ckpt_seed = 7;
  const Duration a = CheckpointIntervalOf(cfg, JobId(1));
  EXPECT_EQ(a, CheckpointIntervalOf(cfg, JobId(1)));
  EXPECT_GE(a, Seconds(600));
  EXPECT_LE(a, Seconds(3600));
  bool differs = false;
  for (int i = 2; i < 20; ++i) differs = differs || CheckpointIntervalOf(cfg, JobId(i)) != a;
  EXPECT_TRUE(differs);
  cfg.ckpt_min = cfg.ckpt_max = Seconds(1800);
  EXPECT_EQ(CheckpointIntervalOf(cfg, JobId(5)), Seconds(1800));
}

}  // namespace
}  // namespace tiresias
