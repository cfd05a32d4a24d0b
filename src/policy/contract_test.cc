// The contract every registered ordering policy owes the core, checked on a seeded synthetic
// Philly-like workload driven through a Scheduler step by step (and through RunSimulation):
// GPUs are never over-allocated or double-booked, every accepted job finishes, non-preemptive
// policies never preempt, the same input gives byte-identical results, and WaitingInOrder is
// a permutation of the waiting jobs in key order. Parameterised over OrderingPolicies() with
// default options, plus a few option variants.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <queue>
#include <set>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "sim/simulator.h"
#include "test_files.h"
#include "trace/synthetic.h"

namespace tiresias {
namespace {

struct Case {
  std::string policy;
  std::vector<std::string> opts;
  std::string placement = "count";
};

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (const auto& info : OrderingPolicies()) out.push_back({info.name, {}});
  out.push_back(
      {"dlas", {"queues=3", "thresholds=60,600", "promote_knob=2", "queue_order=running-first"}});
  out.push_back({"dlas", {"thresholds=30", "promote_knob=1"}, "consolidate"});
  out.push_back({"srtf", {"ties=stable"}});
  out.push_back({"srsf", {"ties=stable"}});
  out.push_back(
      {"gittins", {"thresholds=100", "online=true", "history_batch=5", "promote_knob=4"}});
  out.push_back({"fifo", {}, "consolidate"});
  // tiresias: fallback placements, victims released one by one, backfill behind unplaced jobs.
  out.push_back({"dlas", {"thresholds=30"}, "tiresias"});
  out.push_back({"las", {}, "tiresias"});
  // Thresholds that follow the history and move as jobs complete.
  out.push_back({"dlas", {"threshold_quantiles=0.4,0.8", "online=true", "history_batch=4"}});
  return out;
}

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  std::string n = fmt::format("{}_{}", info.index, info.param.policy);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

std::vector<JobSpec> Workload() {
  SyntheticConfig cfg{.jobs = 150,
                      .seed = 7,
                      .load = 1.5,
                      .cluster_gpus = 16,
                      .max_gpus = 16,
                      .duration_scale = 0.25};  // 1-GPU median 1117 s -> 279 s
  auto jobs = SyntheticPhillyLike(cfg);
  jobs.push_back({.id = JobId(1000),
                  .gpus = 32,
                  .submit = jobs.back().submit,
                  .duration = Seconds(10)});  // never fits 16 GPUs: rejected, not waiting
  return jobs;
}

const Topology kTopo = *Topology::Create(1, 2, 8);

class PolicyContract : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    bool reads_history = GetParam().policy == "gittins";
    for (const auto& o : GetParam().opts) reads_history |= o.rfind("threshold_quantiles=", 0) == 0;
    if (reads_history) {
      auto info = std::find_if(OrderingPolicies().begin(), OrderingPolicies().end(),
                               [&](const PolicyInfo& i) { return i.name == GetParam().policy; });
      auto opt = std::find_if(info->options.begin(), info->options.end(),
                              [](const OptionSpec& o) { return o.name == "history"; });
      if (!std::filesystem::exists(opt->default_value)) {
        GTEST_SKIP() << "gittins history " << opt->default_value
                     << " is absent (../shared not checked out)";
      }
    }
    if (MissingProfiles()) {
      GTEST_SKIP() << "placement tiresias needs ../shared/profiles/tensor_sizes.csv (absent)";
    }
  }

  // Placement `tiresias` reads the model profiles in ../shared.
  bool MissingProfiles() const {
    return GetParam().placement == "tiresias" &&
           !std::filesystem::exists(std::string(TIRESIAS_SHARED_DIR) +
                                    "/profiles/tensor_sizes.csv");
  }

  std::unique_ptr<Scheduler> MakeCore() const {
    auto p = MakeOrderingPolicy(GetParam().policy, GetParam().opts, TestFiles());
    EXPECT_TRUE(p.ok()) << p.status().message();
    auto pl = MakePlacementPolicy(GetParam().placement, {}, TestFiles());
    EXPECT_TRUE(pl.ok()) << pl.status().message();
    return std::make_unique<Scheduler>(kTopo, std::move(*p), std::move(*pl),
                                       SchedulerOptions{.restore_overhead = Seconds(30)});
  }

  // Checks every invariant after a pass at `now`: no GPU held twice, no busy GPU shown free,
  // free count = GPUs - GPUs held, never more held than exist; a stopped job's held time is
  // its progress plus its restore overhead (JobResult::held() relies on it).
  void CheckState(const Scheduler& s, Time now) {
    const int total = kTopo.total_gpus();
    int used = 0;
    std::vector<uint64_t> busy(kTopo.num_nodes(), 0);
    std::set<int64_t> waiting;
    std::string bad;  // first GPU-level inconsistency found in this state
    for (const Job& j : s.jobs()) {
      if (!j.running() && j.held != j.executed + j.overhead && bad.empty()) {
        bad = fmt::format("job {} held {} ms, executed {} + overhead {}", j.spec.id.value(), j.held,
                          j.executed, j.overhead);
      }
      if (j.running()) {
        if (j.alloc.gpu_count() != j.gpus() && bad.empty()) {
          bad = fmt::format("job {} holds {} GPUs, asked {}", j.spec.id.value(),
                            j.alloc.gpu_count(), j.gpus());
        }
        used += j.gpus();
        for (const auto& sl : j.alloc.slices) {
          if ((busy[sl.node] & sl.gpus) != 0 && bad.empty()) {
            bad = fmt::format("GPU double-booked (job {})", j.spec.id.value());
          }
          busy[sl.node] |= sl.gpus;
        }
      } else if (j.state == JobState::kPending) {
        waiting.insert(j.spec.id.value());
      }
    }
    for (int n = 0; n < kTopo.num_nodes(); ++n) {
      if ((s.cluster().free_mask(n) & busy[n]) != 0 && bad.empty()) {
        bad = fmt::format("busy GPU marked free on node {}", n);
      }
    }
    if (s.cluster().total_free() != total - used && bad.empty()) {
      bad = fmt::format("total_free() = {} with {} of {} GPUs running", s.cluster().total_free(),
                        used, total);
    }
    ASSERT_TRUE(bad.empty()) << bad << " at " << now << " ms";
    ASSERT_GE(s.cluster().total_free(), 0);
    ASSERT_LE(used, total);
    auto order = s.WaitingInOrder();
    ASSERT_EQ(order.size(), s.num_waiting());
    std::set<int64_t> listed;
    for (JobId id : order) listed.insert(id.value());
    ASSERT_EQ(listed.size(), order.size()) << "a job listed twice";
    ASSERT_EQ(listed, waiting) << "WaitingInOrder is not the waiting jobs, at " << now;
    for (size_t i = 1; i < order.size(); ++i) {
      ASSERT_LT(s.Find(order[i - 1])->key, s.Find(order[i])->key) << "out of key order";
    }
  }

  // Plays the simulator by hand: arrivals, completions, timers; returns a log of actions.
  std::string Drive(const std::vector<JobSpec>& jobs) {
    auto core = MakeCore();
    Scheduler& s = *core;
    const bool preemptive = s.policy().preemptive();
    using Done = std::pair<Time, std::pair<int64_t, int>>;  // at, (job, start number)
    std::priority_queue<Done, std::vector<Done>, std::greater<>> done;
    std::string log;
    size_t next = 0, rejected = 0;
    for (int steps = 0; steps < 200000; ++steps) {
      Time t = next < jobs.size() ? jobs[next].submit : kNever;
      if (!done.empty()) t = std::min(t, done.top().first);
      t = std::min(t, s.NextWakeup());
      if (t == kNever) break;
      while (!done.empty() && done.top().first == t) {
        auto [id, start_no] = done.top().second;
        done.pop();
        const Job* j = s.Find(JobId(id));
        if (j->running() && j->starts == start_no) {
          EXPECT_TRUE(s.Finish(JobId(id), t).ok());
        }
      }
      for (; next < jobs.size() && jobs[next].submit == t; ++next) {
        if (!s.Submit(jobs[next], t).ok()) ++rejected;
      }
      for (const Action& a : s.Schedule(t)) {
        log += fmt::format("{} {} {} {} {}\n", t, ToString(a.kind), a.job.value(), a.alloc.str(),
                           a.progress_start);
        if (a.kind == Action::Kind::kPreempt) {
          EXPECT_TRUE(preemptive) << s.policy().name() << " preempted job " << a.job.value();
          continue;
        }
        const Job* j = s.Find(a.job);
        done.push(
            {j->progress_start + *j->RemainingAt(j->progress_start), {a.job.value(), j->starts}});
      }
      CheckState(s, t);
      if (HasFatalFailure()) return log;
    }
    EXPECT_EQ(rejected, 1u);  // the 32-GPU job
    for (const Job& j : s.jobs()) {
      if (j.spec.id == JobId(1000)) {
        EXPECT_EQ(j.state, JobState::kRejected);
      } else {
        EXPECT_EQ(j.state, JobState::kFinished) << "job " << j.spec.id.value();
        EXPECT_EQ(j.executed, *j.spec.duration) << "job " << j.spec.id.value();
      }
    }
    EXPECT_EQ(s.num_waiting() + s.num_running(), 0u);
    return log;
  }
};

TEST_P(PolicyContract, InvariantsHoldAndEveryAcceptedJobFinishes) {
  std::string log = Drive(Workload());
  EXPECT_FALSE(log.empty());
}

TEST_P(PolicyContract, SameInputByteIdenticalActions) {
  auto jobs = Workload();
  std::string a = Drive(jobs);
  std::string b = Drive(jobs);
  EXPECT_EQ(a, b);
}

std::string Dump(const SimResult& r) {
  std::string out =
      fmt::format("{} {} {} {} {}\n", r.label, r.topology, r.total_gpus, r.passes, r.events);
  for (const auto& j : r.jobs) {
    out += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {}\n", j.id.value(), j.gpus,
                       r.name(j.model), ToString(j.state), j.submit, j.first_start, j.end,
                       j.preemptions, j.promotions, j.final_queue, j.held(), j.overhead, j.executed,
                       r.name(j.reject_reason));
  }
  return out;
}

TEST_P(PolicyContract, SimulatorIsDeterministicAndFinishesAcceptedJobs) {
  SimConfig cfg;
  cfg.topo = kTopo;
  cfg.policy = GetParam().policy;
  cfg.policy_opts = GetParam().opts;
  cfg.placement = GetParam().placement;
  auto jobs = Workload();
  auto r1 = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r1.ok()) << r1.status().message();
  auto r2 = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  EXPECT_EQ(Dump(*r1), Dump(*r2));
  bool preemptive = (*MakeOrderingPolicy(cfg.policy, cfg.policy_opts, TestFiles()))->preemptive();
  for (const auto& j : r1->jobs) {
    if (j.id == JobId(1000)) {
      EXPECT_EQ(j.state, JobState::kRejected);
      EXPECT_NE(r1->name(j.reject_reason).find("never fits"), std::string::npos)
          << r1->name(j.reject_reason);
      continue;
    }
    EXPECT_EQ(j.state, JobState::kFinished) << "job " << j.id.value();
    EXPECT_GE(j.first_start, j.submit);
    if (!preemptive) {
      EXPECT_EQ(j.preemptions, 0);
    }
    if (j.preemptions == 0) {
      EXPECT_EQ(j.overhead, 0) << "job " << j.id.value();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PolicyContract, testing::ValuesIn(AllCases()), CaseName);

TEST(PolicyContractCoverage, EveryRegisteredPolicyIsCovered) {
  std::set<std::string> covered;
  for (const auto& c : AllCases()) covered.insert(c.policy);
  for (const auto& info : OrderingPolicies()) EXPECT_TRUE(covered.contains(info.name)) << info.name;
  EXPECT_EQ(OrderingPolicies().size(), 9u);
}

}  // namespace
}  // namespace tiresias
