// Scheduler::Explain's reason for a waiting job when the pass passed over it (a pass does not
// visit waiting jobs whose gang cannot fit the GPUs left), under strict FIFO, and when a
// placement failure is stale. Narrated on a 1x1x8 cluster at explicit times.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

std::unique_ptr<Scheduler> Make(const std::string& policy) {
  auto p = MakeOrderingPolicy(policy, {}, TestFiles());
  EXPECT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
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

}  // namespace
}  // namespace tiresias
