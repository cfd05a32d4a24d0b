// The incremental core against its from-scratch reference (SchedulerOptions::reference_pass):
// narrated regressions for divergences between the two, each scenario checked through both.
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

std::string Str(const std::vector<Action>& acts) {
  std::string s;
  for (const auto& a : acts) {
    s += fmt::format("{}{} {}", s.empty() ? "" : ", ", ToString(a.kind), a.job.value());
  }
  return s;
}

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

}  // namespace
}  // namespace tiresias
