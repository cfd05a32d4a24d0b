// Scheduler::Explain's reason for a waiting job when the pass passed over it (a pass does not
// visit waiting jobs whose gang cannot fit the GPUs left), under strict FIFO, and when a
// placement failure is stale. Narrated on a 1x1x8 cluster at explicit times.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

// The policies' default options, with a GPU-time history from memory (gittins reads one; the
// default file is in ../shared, which CI may not have).
std::unique_ptr<Scheduler> Make(const std::string& policy) {
  static const MemoryHistory history(
      {Seconds(60), Seconds(600), Seconds(3600), Seconds(7200), Seconds(36000), Seconds(360000)});
  auto p = MakeOrderingPolicy(policy, {}, history);
  EXPECT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy("count", {}, history);
  EXPECT_TRUE(pl.ok()) << pl.status().message();
  return std::make_unique<Scheduler>(*Topology::Create(1, 1, 8), std::move(*p), std::move(*pl));
}

void Submit(Scheduler& s, int64_t id, int gpus, Time t) {
  Status st = s.Submit({.id = JobId(id), .gpus = gpus, .submit = t}, t);
  ASSERT_TRUE(st.ok()) << st.message();
}

bool Says(const Explanation& e, const std::string& text) {
  for (const auto& r : e.reasons) {
    if (r.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Explain, AJobPassedOverNeedsMoreThanWasLeft) {
  // 8 GPUs, dlas. Job 1 takes 6; job 2 (4 GPUs) does not fit the 2 left and is passed over;
  // job 3 (2 GPUs) behind it starts.
  auto s = Make("dlas");
  Submit(*s, 1, 6, 0);
  Submit(*s, 2, 4, 0);
  Submit(*s, 3, 2, 0);
  s->Schedule(0);
  EXPECT_TRUE(s->Find(JobId(3))->running());
  const Explanation e = s->Explain(JobId(2), 0);
  EXPECT_EQ(e.rank, 1);
  EXPECT_TRUE(
      Says(e, "it needs 4 GPUs; after the jobs ahead of it in the last pass fewer were left"))
      << e.reasons.back();
  // What is ahead, as a list's reason word asks it (AnyAhead): of 1 nothing; of 2 and 3 the
  // running job 1.
  EXPECT_FALSE(s->AnyAhead(JobId(1), 0));
  EXPECT_TRUE(s->AnyAhead(JobId(2), 0));
  EXPECT_TRUE(s->AnyAhead(JobId(3), 0));
  EXPECT_FALSE(s->AnyAhead(JobId(99), 0));  // unknown
}

TEST(Explain, StrictFifoSaysNoJobMayPass) {
  // fifo: job 1 takes 6 GPUs, job 2 (4) does not fit, job 3 (2) may not pass it.
  auto s = Make("fifo");
  Submit(*s, 1, 6, 0);
  Submit(*s, 2, 4, 0);
  Submit(*s, 3, 2, 0);
  s->Schedule(0);
  EXPECT_FALSE(s->Find(JobId(3))->running());
  EXPECT_TRUE(Says(s->Explain(JobId(3), 0), "strict FIFO: a job ahead of it does not fit yet"));
  EXPECT_TRUE(Says(s->Explain(JobId(2), 0), "it needs 4 GPUs"));
}

TEST(Explain, RunningJobsAreCountedByTheirKeysNow) {
  // A pass may leave running jobs' stored keys stale where their order decides nothing, and
  // keys drift between passes: Explain and AnyAhead key running jobs afresh. las2d (attained
  // GPU-time), 8 GPUs: A (1 GPU) from 0 s, B (2 GPUs) from 100 s, the last pass at 100 s
  // (A 100 GPU-s, B 0). At 300 s A has 300 GPU-s and B 400: A is ahead of B now.
  auto s = Make("las2d");
  Submit(*s, 1, 1, 0);
  s->Schedule(0);
  Submit(*s, 2, 2, Seconds(100));
  s->Schedule(Seconds(100));
  ASSERT_TRUE(s->Find(JobId(1))->running());
  ASSERT_TRUE(s->Find(JobId(2))->running());
  EXPECT_EQ(s->Explain(JobId(1), Seconds(100)).running_ahead, 1);  // B (0) before A (100)
  EXPECT_TRUE(s->AnyAhead(JobId(1), Seconds(100)));
  EXPECT_EQ(s->Explain(JobId(1), Seconds(300)).running_ahead, 0);
  EXPECT_EQ(s->Explain(JobId(2), Seconds(300)).running_ahead, 1);
  EXPECT_FALSE(s->AnyAhead(JobId(1), Seconds(300)));
  EXPECT_TRUE(s->AnyAhead(JobId(2), Seconds(300)));
}

TEST(Explain, AnyAheadSaysWhatExplainCounts) {
  // The O(1) answer against Explain's count for every job, through random runs with
  // arrivals, finishes and demotions under orders of every kind.
  for (const std::string policy : {"fifo", "dlas", "las", "srtf", "gittins"}) {
    auto r = Make(policy);
    std::mt19937 rng(11);
    int64_t next_id = 1;
    for (Time t = 0; t < 400'000; t += 1000 + static_cast<Time>(rng() % 4000)) {
      for (unsigned k = rng() % 3; k > 0; --k) {
        const int64_t id = next_id++;
        const Status st = r->Submit({.id = JobId(id),
                                     .gpus = 1 << (rng() % 4),
                                     .submit = t,
                                     .duration = 1000 + static_cast<int64_t>(rng() % 60'000)},
                                    t);
        ASSERT_TRUE(st.ok()) << st.message();
      }
      for (const Job& j : r->jobs()) {
        if (j.running() && rng() % 6 == 0) {
          ASSERT_TRUE(r->Finish(j.spec.id, t).ok());
        }
      }
      r->Schedule(t);
      for (const Job& j : r->jobs()) {
        const Explanation e = r->Explain(j.spec.id, t);
        ASSERT_EQ(r->AnyAhead(j.spec.id, t), e.waiting_ahead + e.running_ahead > 0)
            << policy << " job " << j.spec.id.value() << " at " << t;
      }
    }
  }
}

}  // namespace
}  // namespace tiresias
