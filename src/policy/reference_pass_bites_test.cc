// The comparison of reference_pass_test.cc bites: a policy that lies about a capability flag
// (key_changes_while_running, k0_changes_only_at_transitions, running_keys_never_increase)
// makes the incremental run
// differ from the reference, both on a narrated, hand-worked workload (first difference
// pinned) and on at least one of the synthetic workloads (tests/reference_pass_fixture.h).
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "reference_pass_fixture.h"
#include "test_files.h"

namespace tiresias::reference_pass_test {
namespace {

// The comparison bites: a policy that lies about a capability flag. Lying wraps a real
// policy and overrides one flag; everything else is the real policy's.
class Lying : public OrderingPolicy {
 public:
  Lying(std::unique_ptr<OrderingPolicy> p, std::optional<bool> key_changes_while_running,
        std::optional<bool> k0_changes_only_at_transitions,
        std::optional<bool> running_keys_never_increase)
      : p_(std::move(p)),
        key_changes_(key_changes_while_running),
        k0_only_(k0_changes_only_at_transitions),
        never_increase_(running_keys_never_increase) {}
  std::string_view name() const override { return p_->name(); }
  bool preemptive() const override { return p_->preemptive(); }
  bool stops_at_first_misfit() const override { return p_->stops_at_first_misfit(); }
  bool key_changes_while_running() const override {
    return key_changes_.value_or(p_->key_changes_while_running());
  }
  bool k0_changes_only_at_transitions() const override {
    return k0_only_.value_or(p_->k0_changes_only_at_transitions());
  }
  bool running_keys_never_increase() const override {
    return never_increase_.value_or(p_->running_keys_never_increase());
  }
  Time KeyBoundUntil(const Job& j, Time now) const override {
    return ignore_jumps_ ? kNever : p_->KeyBoundUntil(j, now);
  }
  void IgnoreJumps() { ignore_jumps_ = true; }
  bool stable_ties() const override { return p_->stable_ties(); }
  bool needs_durations() const override { return p_->needs_durations(); }
  SortKey Key(const Job& j, Time now) const override { return p_->Key(j, now); }
  void OnSubmit(Job& j) const override { p_->OnSubmit(j); }
  std::optional<Time> NextTransition(const Job& j, Time now) const override {
    return p_->NextTransition(j, now);
  }
  bool ApplyTransition(Job& j, Time now) const override { return p_->ApplyTransition(j, now); }
  bool OnFinish(const Job& j) override { return p_->OnFinish(j); }
  std::string Describe(const Job& j, Time now) const override { return p_->Describe(j, now); }

 private:
  std::unique_ptr<OrderingPolicy> p_;
  std::optional<bool> key_changes_, k0_only_, never_increase_;
  bool ignore_jumps_ = false;
};

struct Lie {
  std::string policy;
  std::optional<bool> key_changes_while_running, k0_changes_only_at_transitions;
  std::optional<bool> running_keys_never_increase = std::nullopt;
  bool ignore_jumps = false;  // KeyBoundUntil says kNever
  std::unique_ptr<OrderingPolicy> Make(bool honest) const {
    auto p = MakeOrderingPolicy(policy, {}, TestFiles());
    EXPECT_TRUE(p.ok()) << p.status().message();
    if (honest) return std::move(*p);
    auto lying =
        std::make_unique<Lying>(std::move(*p), key_changes_while_running,
                                k0_changes_only_at_transitions, running_keys_never_increase);
    if (ignore_jumps) lying->IgnoreJumps();
    return lying;
  }
  // The first difference between the incremental run (honest or lying) and the reference.
  std::string Diverges(const Workload& w, bool honest) const {
    size_t done = 0;
    auto count = [] { return std::move(*MakePlacementPolicy("count", {}, TestFiles())); };
    auto inc = Drive(Make(honest), count(), nullptr, w, false, &done);
    auto ref = Drive(Make(honest), count(), nullptr, w, true, &done);
    return FirstDifference(inc, ref);
  }
  // How many of the synthetic workloads tell the lie from the truth.
  int Caught() const {
    int n = 0;
    for (const Workload& w : Synthetic()) n += !Diverges(w, /*honest=*/false).empty();
    return n;
  }
};

JobSpec Spec(int64_t id, int gpus, Time submit, Duration duration) {
  return {.id = JobId(id), .gpus = gpus, .submit = submit, .duration = duration};
}

TEST(ReferencePassBites, LasClaimingItsRunningKeysAreFixed) {
  // One GPU. A (1000 s) runs from 0; B (100 s) arrives at 50 s. LAS: A has 50 s of service,
  // B none, so B preempts A. A las that claims key_changes_while_running() == false keeps
  // A's key from its start (0 s executed), so A and B tie at 0 and A, submitted first,
  // keeps the GPU until it finishes at 1000 s.
  const Lie lie{"las", /*key_changes_while_running=*/false, std::nullopt};
  const Workload w{"las_1x1x1",
                   *Topology::Create(1, 1, 1),
                   0,
                   {Spec(0, 1, 0, Seconds(1000)), Spec(1, 1, Seconds(50), Seconds(100))}};
  EXPECT_EQ(lie.Diverges(w, /*honest=*/true), "");
  EXPECT_EQ(lie.Diverges(w, /*honest=*/false),
            "event 1 of 4/6: incremental '1000000 finish 0 n0:0', reference '50000 preempt 0 "
            "n0:0 0' (previous: '0 start 0 n0:0 0')");
  EXPECT_GE(lie.Caught(), 1) << "no synthetic workload caught the lie";
}

TEST(ReferencePassBites, SrtfClaimingItsRunningKeysAreFixed) {
  // One GPU. A (100 s) runs from 0; B (60 s) arrives at 50 s. SRTF: A has 50 s left, less
  // than B's 60 s, so A keeps the GPU. An srtf that claims key_changes_while_running() ==
  // false keeps A's key from its start (100 s left) and preempts A for B.
  const Lie lie{"srtf", /*key_changes_while_running=*/false, std::nullopt};
  const Workload w{"srtf_1x1x1",
                   *Topology::Create(1, 1, 1),
                   0,
                   {Spec(0, 1, 0, Seconds(100)), Spec(1, 1, Seconds(50), Seconds(60))}};
  EXPECT_EQ(lie.Diverges(w, /*honest=*/true), "");
  EXPECT_EQ(lie.Diverges(w, /*honest=*/false),
            "event 1 of 6/4: incremental '50000 preempt 0 n0:0 0', reference '100000 finish 0 "
            "n0:0' (previous: '0 start 0 n0:0 0')");
  EXPECT_GE(lie.Caught(), 1) << "no synthetic workload caught the lie";
}

// 4 GPUs: A (4 GPUs, 5000 s) from 0 s; B (2 GPUs, 3000 s) and C (2 GPUs, 600 s) from 500 s.
Workload FourGpusThreeJobs() {
  return {"las_1x1x4",
          *Topology::Create(1, 1, 4),
          0,
          {Spec(0, 4, 0, Seconds(5000)), Spec(1, 2, Seconds(500), Seconds(3000)),
           Spec(2, 2, Seconds(500), Seconds(600))}};
}

TEST(ReferencePassBites, LasClaimingItsK0ChangesOnlyAtTransitions) {
  // las's k0 is the executed time, which drifts while a job runs. Claiming
  // k0_changes_only_at_transitions() lets the core skip re-keying running jobs whose (stale)
  // k0 is below the first waiting job's k0, and they keep their GPUs.
  // 4 GPUs. 0 s: A (4 GPUs) starts. 500 s: B and C (2 GPUs each) arrive and preempt A
  // (500 s executed); their keys are 0 s. 1100 s: C finishes. A (500 s) is now ahead of B
  // (600 s), so B is preempted and A resumes. The liar re-keys only running jobs with a k0 of
  // at least A's 500 s: B's stale 0 s is below it, so B keeps its GPUs and A waits.
  const Lie lie{"las", std::nullopt, /*k0_changes_only_at_transitions=*/true};
  const Workload w = FourGpusThreeJobs();
  EXPECT_EQ(lie.Diverges(w, /*honest=*/true), "");
  EXPECT_EQ(lie.Diverges(w, /*honest=*/false),
            "event 5 of 8/10: incremental '3500000 finish 1 n0:0-1', reference '1100000 preempt 1 "
            "n0:0-1 0' (previous: '1100000 finish 2 n0:2-3')");
  EXPECT_GE(lie.Caught(), 1) << "no synthetic workload caught the lie";
}

TEST(ReferencePassBites, LasClaimingItsRunningKeysNeverIncrease) {
  // las's key (executed time) grows while a job runs. Claiming running_keys_never_increase()
  // lets the core skip re-keying running jobs whose last key is below the first waiting
  // job's. The workload of the k0 lie above: at 500 s, A's last key (0 s executed, from its
  // start) is below those of B and C (0 s too, submitted later), so the liar keeps A running
  // (500 s executed now) and it finishes at 5000 s; the reference preempts it at 500 s.
  const Lie lie{"las", std::nullopt, std::nullopt, /*running_keys_never_increase=*/true};
  const Workload w = FourGpusThreeJobs();
  EXPECT_EQ(lie.Diverges(w, /*honest=*/true), "");
  EXPECT_EQ(lie.Diverges(w, /*honest=*/false),
            "event 1 of 6/10: incremental '5000000 finish 0 n0:0-3', reference '500000 preempt 0 "
            "n0:0-3 0' (previous: '0 start 0 n0:0-3 0')");
  EXPECT_GE(lie.Caught(), 1) << "no synthetic workload caught the lie";
}

TEST(ReferencePassBites, GittinsIgnoringWhereItsIndexDrops) {
  // gittins' index only grows between two samples of its history (so its key only shrinks);
  // where the service passes a sample it may drop. A gittins whose KeyBoundUntil says
  // "never" keeps stale keys for running jobs past such a sample.
  if (!MakeOrderingPolicy("gittins", {}, TestFiles()).ok()) {
    GTEST_SKIP() << "gittins' default history (../shared/traces/tiresias) is absent";
  }
  Lie lie{"gittins", std::nullopt, std::nullopt, std::nullopt};
  lie.ignore_jumps = true;
  EXPECT_GE(lie.Caught(), 1) << "no synthetic workload caught the lie";
}

}  // namespace
}  // namespace tiresias::reference_pass_test
