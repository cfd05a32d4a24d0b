// Capacity changes in the core (Scheduler::SetNodeAvailability): a node that goes down stops
// the jobs on it and the core stops placing there until it returns; GPUs held outside the
// scheduler are never handed out; a job that fits the whole cluster waits for capacity instead
// of being rejected; Explain says when GPUs are unavailable; the mask helper keeps running
// jobs; a job placed on GPUs to avoid moves off them when it can (Relocate). Narrated, on tiny
// clusters at explicit millisecond times.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

std::unique_ptr<Scheduler> Make(const std::string& policy, const std::string& placement,
                                const Topology& topo) {
  auto p = MakeOrderingPolicy(policy, {}, TestFiles());
  EXPECT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy(placement, {}, TestFiles());
  EXPECT_TRUE(pl.ok()) << pl.status().message();
  return std::make_unique<Scheduler>(topo, std::move(*p), std::move(*pl));
}

std::string Str(const std::vector<Action>& acts) {
  std::string s;
  for (const auto& a : acts) {
    s += fmt::format("{}{} {} {}", s.empty() ? "" : ", ", ToString(a.kind), a.job.value(),
                     a.alloc.str());
  }
  return s;
}

void Submit(Scheduler& s, int64_t id, int gpus, Time t) {
  Status st = s.Submit({.id = JobId(id), .gpus = gpus, .submit = t}, t);
  ASSERT_TRUE(st.ok()) << st.message();
}

TEST(Capacity, NodeDownStopsItsJobsAndNothingIsPlacedThereUntilItReturns) {
  // 2 nodes x 4 GPUs, fifo + consolidate. Job 1 (4 GPUs) on n0, job 2 (2 GPUs) on n1.
  auto s = Make("fifo", "consolidate", *Topology::Create(1, 2, 4));
  Submit(*s, 1, 4, 0);
  Submit(*s, 2, 2, 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1 n0:0-3, start 2 n1:0-1");
  // 10 s: node 0 goes down. Job 1 is stopped with its 10 s of service (40 GPU-s) and waits;
  // job 2 keeps running. Only n1's 2 free GPUs are left, so job 1 (4 GPUs) cannot restart.
  auto stopped = s->SetNodeAvailability(0, 0, 10000);
  ASSERT_TRUE(stopped.ok()) << stopped.status().message();
  EXPECT_EQ(*stopped, std::vector<JobId>{JobId(1)});
  const Job* j1 = s->Find(JobId(1));
  EXPECT_EQ(j1->state, JobState::kPending);
  EXPECT_EQ(j1->AttainedAt(10000), 40000);
  EXPECT_EQ(j1->evictions, 1);
  EXPECT_EQ(j1->preemptions, 0) << "an eviction is not a preemption";
  EXPECT_EQ(s->cluster().total_usable(), 4);
  EXPECT_EQ(s->cluster().total_free(), 2);
  EXPECT_EQ(Str(s->Schedule(10000)), "");
  // A 1-GPU job goes to n1, never to the down node (whose GPUs are not free).
  Submit(*s, 3, 1, 11000);
  EXPECT_EQ(Str(s->Schedule(11000)), "");  // fifo: job 1 is ahead and blocks
  // 20 s: node 0 is back: job 1 restarts there, then job 3 fits n1.
  stopped = s->SetNodeAvailability(0, 0b1111, 20000);
  ASSERT_TRUE(stopped.ok());
  EXPECT_TRUE(stopped->empty());
  EXPECT_EQ(Str(s->Schedule(20000)), "start 1 n0:0-3, start 3 n1:2");
  EXPECT_EQ(s->cluster().total_usable(), 8);
}

TEST(Capacity, GpusHeldOutsideAreNeverHandedOutAndTheBudgetShrinks) {
  // 1 node x 4 GPUs, dlas (preemptive) + count. GPUs 2 and 3 are held by a job outside the
  // scheduler: the preemptive pass's budget is the 2 usable GPUs, not 4.
  auto s = Make("dlas", "count", *Topology::Create(1, 1, 4));
  ASSERT_TRUE(s->SetNodeAvailability(0, 0b0011, 0).ok());
  Submit(*s, 1, 1, 0);
  Submit(*s, 2, 1, 0);
  Submit(*s, 3, 1, 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1 n0:0, start 2 n0:1");
  // Job 3 waits: nothing free, and no victim may be taken beyond the usable budget.
  EXPECT_EQ(Str(s->Schedule(1000)), "");
  Explanation e = s->Explain(JobId(3), 1000);
  EXPECT_EQ(e.gpus_unavailable, 2);
  ASSERT_FALSE(e.reasons.empty());
  EXPECT_NE(e.reasons[1].find("2 of the cluster's 4 GPUs are unavailable"), std::string::npos)
      << e.reasons[1];
  // The outside job ends: GPU 2 and 3 are usable again and job 3 takes GPU 2.
  ASSERT_TRUE(s->SetNodeAvailability(0, 0b1111, 2000).ok());
  EXPECT_EQ(Str(s->Schedule(2000)), "start 3 n0:2");
}

TEST(Capacity, AJobThatFitsTheClusterWaitsForCapacityInsteadOfBeingRejected) {
  // 2 nodes x 2 GPUs; node 1 is down when a 4-GPU job is submitted. It is accepted (it fits
  // the whole cluster) and waits; Explain says why; it starts when node 1 returns.
  auto s = Make("dlas", "count", *Topology::Create(1, 2, 2));
  ASSERT_TRUE(s->SetNodeAvailability(1, 0, 0).ok());
  Submit(*s, 1, 4, 0);
  EXPECT_EQ(s->Find(JobId(1))->state, JobState::kPending);
  EXPECT_EQ(Str(s->Schedule(0)), "");
  Explanation e = s->Explain(JobId(1), 500);
  EXPECT_NE(e.reasons[1].find("it needs 4 and only 2 are usable now, so it waits for capacity"),
            std::string::npos)
      << e.reasons[1];
  // A job larger than the whole cluster is still rejected.
  EXPECT_EQ(s->Submit({.id = JobId(2), .gpus = 5}, 0).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(s->SetNodeAvailability(1, 0b11, 1000).ok());
  EXPECT_EQ(Str(s->Schedule(1000)), "start 1 n0:0-1,n1:0-1");
}

TEST(Capacity, PartialLossStopsOnlyTheJobsOnTheLostGpus) {
  // 1 node x 4 GPUs: jobs 1 (GPUs 0-1), 2 (GPU 2), 3 (GPU 3). Losing GPU 2 stops job 2 only.
  auto s = Make("fifo", "count", *Topology::Create(1, 1, 4));
  Submit(*s, 1, 2, 0);
  Submit(*s, 2, 1, 0);
  Submit(*s, 3, 1, 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1 n0:0-1, start 2 n0:2, start 3 n0:3");
  auto stopped = s->SetNodeAvailability(0, 0b1011, 5000);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(*stopped, std::vector<JobId>{JobId(2)});
  EXPECT_TRUE(s->Find(JobId(1))->running());
  EXPECT_TRUE(s->Find(JobId(3))->running());
  // Bad node numbers are refused.
  EXPECT_EQ(s->SetNodeAvailability(1, 0, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->SetNodeAvailability(-1, 0, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST(Capacity, UsableMaskForKeepsRunningJobsFirst) {
  // 1 node x 8 GPUs; a 2-GPU job on GPUs 0-1 and a 1-GPU job on GPU 2; GPUs 3-7 free.
  auto s = Make("fifo", "count", *Topology::Create(1, 1, 8));
  Submit(*s, 1, 2, 0);
  Submit(*s, 2, 1, 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1 n0:0-1, start 2 n0:2");
  // Keeping 5 GPUs: the 3 held ones, then the lowest free ones (3, 4): 0b11111.
  EXPECT_EQ(s->UsableMaskFor(0, 5), uint64_t{0b11111});
  // Keeping 2: only held GPUs, lowest first: job 1's (job 2 would have to stop).
  EXPECT_EQ(s->UsableMaskFor(0, 2), uint64_t{0b11});
  EXPECT_EQ(s->UsableMaskFor(0, 0), uint64_t{0});
  EXPECT_EQ(s->UsableMaskFor(0, 99), uint64_t{0xff});
  // After GPUs 3-7 are taken away, giving 2 back picks the lowest unusable ones (3, 4).
  ASSERT_TRUE(s->SetNodeAvailability(0, 0b111, 10).ok());
  EXPECT_EQ(s->UsableMaskFor(0, 5), uint64_t{0b11111});
}

TEST(Capacity, RelocateMovesAJobNotYetProgressingOffGpusToAvoid) {
  // 1 node x 4 GPUs, fifo + consolidate. Job 1 (2 GPUs) runs on 0,1 and job 2 (2 GPUs) on 2,3
  // from 0. At 1 s job 1 is cancelled; the driver asks to avoid 0,1 (its process still runs
  // there). Job 3 (2 GPUs) arrives: no other place, so it is placed on 0,1, and its driver
  // pins its progress to 5 s (it waits for that process). Relocate at 2 s: 2,3 are taken, no
  // packed slot elsewhere: nothing changes. Job 2 ends at 3 s; Relocate at 3 s moves job 3 to
  // 2,3 (a start, said so), 0,1 are free again, and its progress starts now (3 s). Asked
  // again, it is on no GPU to avoid: nothing. A job whose progress began is never moved.
  auto s = Make("fifo", "consolidate", *Topology::Create(1, 1, 4));
  Submit(*s, 1, 2, 0);
  Submit(*s, 2, 2, 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1 n0:0-1, start 2 n0:2-3");
  ASSERT_TRUE(s->Cancel(JobId(1), 1000).ok());
  ASSERT_TRUE(s->SetNodeAvailability(0, 0b1111, 1000, /*avoid_mask=*/0b0011).ok());
  Submit(*s, 3, 2, 1000);
  EXPECT_EQ(Str(s->Schedule(1000)), "start 3 n0:0-1");
  ASSERT_TRUE(s->SetProgressStart(JobId(3), 5000, 1000).ok());
  std::vector<Action> out;
  EXPECT_FALSE(*s->Relocate(JobId(3), 2000, out));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(s->Finish(JobId(2), 3000).ok());
  EXPECT_TRUE(*s->Relocate(JobId(3), 3000, out));
  EXPECT_EQ(Str(out), "start 3 n0:2-3");
  EXPECT_EQ(out[0].reason(),
            "moved to free GPUs: those it was placed on are held by another job's stopping "
            "process");
  EXPECT_EQ(s->cluster().free_mask(0), 0b0011u);
  EXPECT_EQ(s->Find(JobId(3))->progress_start, 3000);
  out.clear();
  EXPECT_FALSE(*s->Relocate(JobId(3), 3000, out));
  // Job 4 (2 GPUs) takes 0,1 (no other place) and starts progressing at 4 s: not moved,
  // even with other GPUs free (job 3 ended).
  Submit(*s, 4, 2, 3000);
  EXPECT_EQ(Str(s->Schedule(3000)), "start 4 n0:0-1");
  ASSERT_TRUE(s->SetProgressStart(JobId(4), 4000, 3000).ok());
  ASSERT_TRUE(s->Finish(JobId(3), 4000).ok());
  EXPECT_FALSE(*s->Relocate(JobId(4), 4000, out));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(s->Relocate(JobId(9), 4000, out).ok()) << "an unknown job";
}

TEST(Capacity, RelocateKeepsTheGpusItHoldsThatAreNotToAvoid) {
  // 1 node x 4 GPUs, fifo + consolidate. Jobs 1, 2, 3 (1 GPU each) run on 0, 1, 2 from 0; job
  // 1 is cancelled at 1 s and GPU 0 is to be avoided. Job 4 (2 GPUs) arrives: only 0 and 3
  // are free, so it is placed on 0,3 and waits (progress pinned to 5 s). Job 3 ends at 2 s:
  // GPU 2 is free, and with 3, which it holds, it makes a slot: moved to 2,3 (an exploratory
  // test: a move counted only the GPUs free elsewhere, 1 of 2, and it waited the grace).
  auto s = Make("fifo", "consolidate", *Topology::Create(1, 1, 4));
  for (int64_t id : {1, 2, 3}) Submit(*s, id, 1, 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1 n0:0, start 2 n0:1, start 3 n0:2");
  ASSERT_TRUE(s->Cancel(JobId(1), 1000).ok());
  ASSERT_TRUE(s->SetNodeAvailability(0, 0b1111, 1000, /*avoid_mask=*/0b0001).ok());
  Submit(*s, 4, 2, 1000);
  EXPECT_EQ(Str(s->Schedule(1000)), "start 4 n0:0+3");
  ASSERT_TRUE(s->SetProgressStart(JobId(4), 5000, 1000).ok());
  ASSERT_TRUE(s->Finish(JobId(3), 2000).ok());
  std::vector<Action> out;
  EXPECT_TRUE(*s->Relocate(JobId(4), 2000, out));
  EXPECT_EQ(Str(out), "start 4 n0:2-3");
  EXPECT_EQ(s->cluster().free_mask(0), 0b0001u);
  EXPECT_EQ(s->Find(JobId(4))->starts, 1) << "the same start";
}

TEST(Capacity, RelocateLeavesTheFreedGpusToAWaitingJobAheadOfIt) {
  // 1 node x 4 GPUs, sjf (fewest GPUs first) + consolidate. B and C (2 GPUs each) run on 0,1
  // and 2,3 from 0. C is cancelled at 1 s and 2,3 are to be avoided; Y (2 GPUs) arrives then
  // and is placed there (no other place; progress pinned to 5 s). W (1 GPU) arrives at 2 s:
  // nothing is free, it waits, ahead of Y. B ends at 3 s: 0,1 are free, and W could use them;
  // a move would take them (W would then wait on 2,3 for C's process, a review). Relocate
  // leaves them; the pass starts W on 0.
  auto s = Make("sjf", "consolidate", *Topology::Create(1, 1, 4));
  Submit(*s, 1, 2, 0);
  Submit(*s, 2, 2, 0);
  EXPECT_EQ(Str(s->Schedule(0)), "start 1 n0:0-1, start 2 n0:2-3");
  ASSERT_TRUE(s->Cancel(JobId(2), 1000).ok());
  ASSERT_TRUE(s->SetNodeAvailability(0, 0b1111, 1000, /*avoid_mask=*/0b1100).ok());
  Submit(*s, 3, 2, 1000);
  EXPECT_EQ(Str(s->Schedule(1000)), "start 3 n0:2-3");
  ASSERT_TRUE(s->SetProgressStart(JobId(3), 5000, 1000).ok());
  Submit(*s, 4, 1, 2000);
  EXPECT_EQ(Str(s->Schedule(2000)), "");
  ASSERT_TRUE(s->Finish(JobId(1), 3000).ok());
  std::vector<Action> out;
  EXPECT_FALSE(*s->Relocate(JobId(3), 3000, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(Str(s->Schedule(3000)), "start 4 n0:0");
}

}  // namespace
}  // namespace tiresias
