// Narrated regressions for the real divergences that comparing the incremental core with its
// from-scratch reference (SchedulerOptions::reference_pass; reference_pass_test.cc) found: a
// re-keyed running job that fell behind a waiting job must be reconsidered, and online
// gittins must reorder waiting jobs when its history learns. Each runs both ways (incremental
// and reference) on a tiny cluster and expects the same, hand-worked actions.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "policy_scenario_fixture.h"
#include "test_files.h"

namespace tiresias::reference_pass_test {
namespace {

using policy_scenario_test::Str;

// Regression: the k0 shortcut of RefreshRunningKeys (k0_changes_only_at_transitions) re-keys
// only the running jobs from the first waiting job's k0 on, and used to note only where the
// re-keyed jobs landed. A running job whose key drifted from ahead of a waiting job to behind
// it left that waiting job before the walk's start, so it was never reconsidered: the running
// job kept GPUs the waiting job was now ahead for. Seen when comparing the incremental core
// with the reference pass: gittins (default, and with 2-3 queues) on bursty seeded workloads,
// and gittins online=true on 60_job 1x2x4 (job 58 not preempted at 1894 s). Shown here with
// the smallest honest policy that sets both flags.
class SizeThenLeastAttained : public OrderingPolicy {
 public:
  // k0: the gang size (never changes: honest about k0); k1: executed time (drifts while
  // running: honest about that too).
  std::string_view name() const override { return "size-then-las"; }
  bool preemptive() const override { return true; }
  bool key_changes_while_running() const override { return true; }
  bool k0_changes_only_at_transitions() const override { return true; }
  SortKey Key(const Job& j, Time now) const override {
    return {.k0 = j.gpus(),
            .k1 = static_cast<double>(j.ExecutedAt(now)),
            .submit = j.spec.submit,
            .id = j.spec.id};
  }
  std::string Describe(const Job&, Time) const override { return ""; }
};

TEST(ReferencePassRegression, RekeyedRunningJobThatFellBehindAWaitingJobIsReconsidered) {
  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference" : "incremental");
    auto pl = MakePlacementPolicy("count", {}, TestFiles());
    ASSERT_TRUE(pl.ok());
    Scheduler s(*Topology::Create(1, 1, 4), std::make_unique<SizeThenLeastAttained>(),
                std::move(*pl), {.reference_pass = reference});
    auto submit = [&](int64_t id, int gpus, Time at) {
      ASSERT_TRUE(s.Submit({.id = JobId(id), .gpus = gpus, .submit = at}, at).ok());
    };
    // 0 s: H (1 GPU, class 1 first) and W (2 GPUs) start; one GPU stays idle.
    submit(0, 2, 0);
    submit(1, 1, 0);
    EXPECT_EQ(Str(s.Schedule(0)), "start 1, start 0");
    // 100 s: R (2 GPUs, 0 s executed) is ahead of W (100 s executed) in size class 2: W is
    // preempted and waits with 100 s; R runs, keyed at 0 s.
    submit(2, 2, Seconds(100));
    EXPECT_EQ(Str(s.Schedule(Seconds(100))), "preempt 0, start 2");
    // 250 s: X (4 GPUs) arrives behind everyone. R has now run 150 s, more than W's 100 s:
    // W is ahead of R again and takes its GPUs (H in class 1 keeps its GPU). The re-key moved
    // R from ahead of W (0 s) to behind it (150 s); the walk must start at R's old key, not
    // its new one, or W is skipped and nothing happens.
    submit(3, 4, Seconds(250));
    EXPECT_EQ(Str(s.Schedule(Seconds(250))), "preempt 2, start 0");
  }
}

// Regression: gittins with online=true merges each completed job's GPU-time into its
// history (every history_batch completions), which changes the Gittins index of EVERY job,
// waiting ones included. The core kept waiting jobs' keys from when they began to wait, so
// after a merge it offered GPUs in the old order. Found by comparing the incremental core with
// the reference pass (gittins online=true history_batch=5, 60_job on 1x2x4: at 800 s the stale
// order kept job 21 running where job 16 was ahead). OnFinish now says when it learned, and
// the core re-keys every job.
TEST(ReferencePassRegression, OnlineGittinsReordersWaitingJobsWhenItLearns) {
  // One queue, quantum D = 100 GPU-s, history {10, 1000} GPU-s, learning at each completion.
  // G(a) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]; scale aside:
  //   before: G(0) = 1/(10 + 100) = 1/110, G(a) = 0 for 10 <= a < 900.
  //   after 120 is added: G(0) = 1/(10 + 100 + 100) = 1/210 (only 10 ends within D),
  //   G(50) = 1/((120 - 50) + 100) = 1/170 > 1/210.
  MemoryHistory history({Seconds(10), Seconds(1000)});
  for (bool reference : {false, true}) {
    SCOPED_TRACE(reference ? "reference" : "incremental");
    auto p = MakeOrderingPolicy(
        "gittins", {"queues=1", "quantum=100", "online=true", "history_batch=1", "history=mem"},
        history);
    ASSERT_TRUE(p.ok()) << p.status().message();
    auto pl = MakePlacementPolicy("count", {}, TestFiles());
    ASSERT_TRUE(pl.ok());
    Scheduler s(*Topology::Create(1, 1, 1), std::move(*p), std::move(*pl),
                {.reference_pass = reference});
    auto submit = [&](int64_t id, Time at) {
      ASSERT_TRUE(s.Submit({.id = JobId(id), .gpus = 1, .submit = at}, at).ok());
    };
    // 0 s: B starts alone.
    submit(0, 0);
    EXPECT_EQ(Str(s.Schedule(0)), "start 0");
    // 50 s: C and A arrive (G(0) = 1/110 > B's G(50) = 0): B is preempted with 50 GPU-s;
    // C and A tie, C goes first by id.
    submit(1, Seconds(50));
    submit(2, Seconds(50));
    EXPECT_EQ(Str(s.Schedule(Seconds(50))), "preempt 0, start 1");
    // 170 s: C completes with 120 GPU-s and the history learns it. Before the merge A
    // (1/110) was ahead of B (0); after it B (1/170) is ahead of A (1/210): B gets the GPU.
    ASSERT_TRUE(s.Finish(JobId(1), Seconds(170)).ok());
    EXPECT_EQ(Str(s.Schedule(Seconds(170))), "start 0");
  }
}

}  // namespace
}  // namespace tiresias::reference_pass_test
