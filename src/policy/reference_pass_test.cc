// The incremental core against its from-scratch reference (SchedulerOptions::reference_pass).
//
// The core's pass takes shortcuts that rest on what a policy claims about its keys
// (key_changes_while_running, k0_changes_only_at_transitions) and on its own bookkeeping
// (walk_from_/revisit_: a pass starts where the order changed; the walk stops once the budget
// is below the smallest waiting gang; a pass nobody waits for is skipped; waiting keys are
// taken as constant). The reference pass re-keys every job, rebuilds both orders and walks
// every job from the start. This test proves that, for every registered policy (all nine,
// plus option variants and the count, consolidate and tiresias placements), the two give the
// same starts, preemptions and finishes (job, time, GPUs, progress start) on seeded random
// workloads (Philly-like and bursty with ties, four cluster shapes, restore overhead 0 and
// 30 s) and on ../shared's 60_job.csv, also with capacity changes (nodes going down and
// returning, GPUs taken away and given back: every eviction must be the same too). It also
// proves the comparison bites: a policy that
// lies about either capability flag makes the incremental run differ from the reference.
// Between the two, narrated regressions for the real divergences the comparison found.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <ostream>
#include <queue>
#include <random>
#include <set>
#include <tuple>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "sim/link_speed_model.h"
#include "test_files.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

// From `at` on, `gpus` GPUs of `node` are usable (the driver turns the count into a mask with
// Scheduler::UsableMaskFor, as the simulator does).
struct CapacityChange {
  Time at;
  int node;
  int gpus;
};

struct Workload {
  std::string name;
  Topology topo;
  Duration restore;
  std::vector<JobSpec> jobs;                  // sorted by (submit, id)
  std::vector<CapacityChange> capacity = {};  // sorted by time
};

// Bursts of jobs at the same instant, more multi-GPU gangs than Philly, durations from a
// short list so that equal keys (ties) are common.
std::vector<JobSpec> Bursty(uint64_t seed, int n, int max_gpus) {
  std::mt19937_64 rng(seed);
  std::vector<int> sizes;
  for (int g : {1, 1, 1, 2, 2, 4, 8, 16}) {
    if (g <= max_gpus) sizes.push_back(g);
  }
  const std::vector<int> secs = {20, 60, 60, 120, 300, 300, 900, 2400};
  std::uniform_int_distribution<size_t> size_of(0, sizes.size() - 1), secs_of(0, secs.size() - 1),
      model_of(0, CnnModels().size() - 1);
  std::uniform_int_distribution<int> gap(1, 240), coin(0, 2);
  std::vector<JobSpec> jobs;
  Time t = 0;
  for (int i = 0; i < n; ++i) {
    if (i > 0 && coin(rng) != 0) t += Seconds(gap(rng));  // a third arrive with the previous
    jobs.push_back({.id = JobId(i),
                    .gpus = sizes[size_of(rng)],
                    .submit = t,
                    .model = CnnModels()[model_of(rng)],
                    .duration = Seconds(secs[secs_of(rng)])});
  }
  return jobs;
}

// Philly's size mix up to one switch's GPUs (so that consolidate can place every job; the mix
// has 12- and 24-GPU jobs), durations a fifth of Philly's.
std::vector<JobSpec> PhillyLike(uint64_t seed, int n, const Topology& topo) {
  const int gpus = topo.total_gpus();
  return SyntheticPhillyLike({.jobs = n,
                              .seed = seed,
                              .load = 1.6,
                              .cluster_gpus = gpus,
                              .max_gpus = topo.gpus_per_switch(),
                              .duration_scale = 0.2});  // 1-GPU median 1117 s -> 223 s
}

// Four cluster shapes x {Philly-like, bursty} x eight seeds; restore overhead 30 s on odd
// seeds for Philly-like and even ones for bursty, 0 otherwise.
const std::vector<Workload>& Synthetic() {
  static const auto* w = [] {
    auto* out = new std::vector<Workload>;
    const std::vector<std::tuple<int, int, int, int>> shapes = {
        {1, 1, 4, 50}, {1, 2, 8, 90}, {2, 4, 4, 110}, {2, 2, 8, 110}};  // S, N, G, jobs
    for (const auto& [sw, nodes, per, n] : shapes) {
      const Topology topo = *Topology::Create(sw, nodes, per);
      const int gpus = topo.total_gpus();
      for (uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
        const uint64_t k = static_cast<uint64_t>(gpus) * 10 + seed;
        const Duration restore = seed % 2 ? Seconds(30) : 0;
        out->push_back({fmt::format("philly_{}_seed{}", topo.str(), k), topo, restore,
                        PhillyLike(k, n, topo)});
        out->push_back({fmt::format("bursty_{}_seed{}", topo.str(), k), topo, Seconds(30) - restore,
                        Bursty(k, n, std::min(gpus, 16))});
      }
    }
    return out;
  }();
  return *w;
}

// Seeded outages over the synthetic workloads of seeds 1-4: eight times a random node loses
// some or all of its GPUs during the arrivals and gets them back 1-20 minutes later (outages
// may overlap); by the end every node is whole again, so every job still finishes.
const std::vector<Workload>& WithCapacityChanges() {
  static const auto* w = [] {
    auto* out = new std::vector<Workload>;
    uint64_t seed = 0;
    for (const Workload& base : Synthetic()) {
      if (base.name.ends_with("1") || base.name.ends_with("2") || base.name.ends_with("3") ||
          base.name.ends_with("4")) {
        Workload c = base;
        c.name = "capacity_" + base.name;
        std::mt19937_64 rng(++seed);
        const Time span = std::max<Time>(base.jobs.back().submit, Seconds(600));
        const int per = base.topo.gpus_per_node();
        std::uniform_int_distribution<Time> when(0, span);
        std::uniform_int_distribution<int> node(0, base.topo.num_nodes() - 1), left(0, per - 1),
            minutes(1, 20);
        for (int k = 0; k < 8; ++k) {
          const Time at = when(rng);
          const int n = node(rng);
          c.capacity.push_back({at, n, left(rng)});
          c.capacity.push_back({at + Seconds(60) * minutes(rng), n, per});
        }
        std::stable_sort(c.capacity.begin(), c.capacity.end(),
                         [](const auto& a, const auto& b) { return a.at < b.at; });
        // Overlapping outages of one node: the last change wins, so end each node whole.
        for (int n = 0; n < base.topo.num_nodes(); ++n) {
          c.capacity.push_back({c.capacity.back().at + 1, n, per});
        }
        out->push_back(std::move(c));
      }
    }
    return out;
  }();
  return *w;
}

// Plays the simulator (src/sim/simulator.cc) over a core: completions, then arrivals, then
// Schedule(t); a run completes at progress_start + ceil(remaining packed work / rate).
// Returns one line per start, preemption and finish, and counts the finishes.
std::vector<std::string> Drive(std::unique_ptr<OrderingPolicy> policy,
                               std::unique_ptr<PlacementPolicy> placement,
                               std::shared_ptr<const SpeedModel> speed, const Workload& w,
                               bool reference, size_t* finished, bool checkpoints = false) {
  Scheduler s(w.topo, std::move(policy), std::move(placement),
              {.restore_overhead = w.restore,
               .reference_pass = reference,
               .checkpoint_aware = checkpoints,
               .lose_work = checkpoints},
              std::move(speed));
  using Done = std::tuple<Time, int64_t, int>;  // at, job, its start number
  std::priority_queue<Done, std::vector<Done>, std::greater<>> done;
  std::vector<std::string> log;
  *finished = 0;
  size_t next = 0, next_cap = 0;
  for (int steps = 0; steps < 100000; ++steps) {
    Time t = next < w.jobs.size() ? w.jobs[next].submit : kNever;
    if (next_cap < w.capacity.size()) t = std::min(t, w.capacity[next_cap].at);
    if (!done.empty()) t = std::min(t, std::get<0>(done.top()));
    t = std::min(t, s.NextWakeup());
    if (t == kNever) break;
    while (!done.empty() && std::get<0>(done.top()) == t) {
      auto [at, id, start_no] = done.top();
      done.pop();
      const Job* j = s.Find(JobId(id));
      if (!j->running() || j->starts != start_no) continue;  // preempted since
      log.push_back(fmt::format("{} finish {} {}", t, id, j->alloc.str()));
      EXPECT_TRUE(s.Finish(JobId(id), t).ok());
      ++*finished;
    }
    for (; next_cap < w.capacity.size() && w.capacity[next_cap].at == t; ++next_cap) {
      const CapacityChange& c = w.capacity[next_cap];
      const uint64_t mask = s.UsableMaskFor(c.node, c.gpus);
      auto stopped = s.SetNodeAvailability(c.node, mask, t);
      EXPECT_TRUE(stopped.ok()) << stopped.status().message();
      log.push_back(fmt::format("{} capacity n{} {:x}", t, c.node, mask));
      for (JobId id : *stopped) log.push_back(fmt::format("{} evict {}", t, id.value()));
    }
    for (; next < w.jobs.size() && w.jobs[next].submit == t; ++next)
      (void)s.Submit(w.jobs[next], t);
    // With checkpoints, as the simulator's model: job i checkpoints every 20 + 10 x (i mod 7)
    // s of progress; the core learns the last one before it decides.
    for (const Job& j : s.jobs()) {
      if (!checkpoints || !j.running()) continue;
      const Duration iv = Seconds(20 + 10 * (j.spec.id.value() % 7));
      if (t < j.progress_start + iv) continue;
      EXPECT_TRUE(
          s.Checkpointed(j.spec.id, j.progress_start + (t - j.progress_start) / iv * iv, t).ok());
    }
    for (const Action& a : s.Schedule(t)) {
      log.push_back(fmt::format("{} {} {} {} {}", t, ToString(a.kind), a.job.value(), a.alloc.str(),
                                a.progress_start));
      if (a.kind != Action::Kind::kStart) continue;
      const Job* j = s.Find(a.job);
      Duration rem = std::max<Duration>(0, *j->spec.duration - j->work_done);
      if (j->rate != 1.0)
        rem = static_cast<Duration>(std::ceil(static_cast<double>(rem) / j->rate));
      done.emplace(j->progress_start + rem, a.job.value(), j->starts);
    }
  }
  return log;
}

// "" when equal, else the first line that differs with a little context.
std::string FirstDifference(const std::vector<std::string>& inc,
                            const std::vector<std::string>& ref) {
  size_t i = 0;
  while (i < inc.size() && i < ref.size() && inc[i] == ref[i]) ++i;
  if (i == inc.size() && i == ref.size()) return "";
  auto at = [&](const std::vector<std::string>& v) { return i < v.size() ? v[i] : "(end)"; };
  return fmt::format("event {} of {}/{}: incremental '{}', reference '{}' (previous: '{}')", i,
                     inc.size(), ref.size(), at(inc), at(ref), i > 0 ? inc[i - 1] : "");
}

struct Case {
  std::string policy;
  std::vector<std::string> opts;
  std::string placement = "count";
  std::vector<std::string> placement_opts = {};
  bool speed = false;  // the link speed model (rates < 1 for spread gangs)
  // Checkpoint-aware victims and lost work (SchedulerOptions::checkpoint_aware, lose_work).
  bool checkpoints = false;
};

std::vector<Case> AllCases() {
  std::vector<Case> out;
  for (const auto& info : OrderingPolicies()) out.push_back({info.name, {}});
  out.push_back(
      {"dlas", {"queues=3", "thresholds=60,600", "promote_knob=2", "queue_order=running-first"}});
  out.push_back({"dlas", {"queues=4", "thresholds=30,120,900", "promote_knob=1"}});
  out.push_back({"dlas", {"thresholds=100", "promote_knob=0.5"}, "consolidate"});
  out.push_back({"dlas", {"thresholds=60", "queue_order=running-first"}, "tiresias", {}, true});
  out.push_back(
      {"dlas", {"thresholds=60"}, "tiresias", {"packlimit=learned", "explore_every=3"}, true});
  out.push_back({"gittins", {"queues=3", "thresholds=60,600", "promote_knob=2"}});
  out.push_back(
      {"gittins", {"thresholds=100", "online=true", "history_batch=5", "promote_knob=4"}});
  out.push_back({"gittins", {"queues=1", "quantum=300"}, "consolidate"});
  out.push_back({"gittins", {"thresholds=30", "promote_knob=1"}, "tiresias", {}, true});
  out.push_back({"gittins", {"thresholds=10"}});
  out.push_back({"gittins", {"thresholds=10", "quantum=60"}});
  out.push_back({"gittins", {"queues=3", "thresholds=5,100"}, "consolidate"});
  out.push_back({"gittins", {"thresholds=20", "promote_knob=8"}});
  // Thresholds that follow the history (threshold_quantiles): merges re-bucket every job and
  // re-arm every timer.
  out.push_back({"dlas", {"threshold_quantiles=0.5,0.9", "online=true", "history_batch=5"}});
  out.push_back({"dlas",
                 {"threshold_quantiles=0.3", "online=true", "history_batch=3",
                  "queue_order=running-first", "promote_knob=2"},
                 "tiresias",
                 {},
                 true});
  out.push_back({"dlas", {"queues=3", "threshold_quantiles=0.2,0.6"}, "consolidate"});
  out.push_back({"gittins", {"threshold_quantiles=0.5,0.9", "online=true", "history_batch=5"}});
  out.push_back({"srtf", {"ties=stable"}});
  out.push_back({"srsf", {"ties=stable"}, "consolidate"});
  out.push_back({"las", {}, "tiresias", {}, true});
  out.push_back({"las2d", {}, "consolidate"});
  out.push_back({"fifo", {}, "consolidate"});
  out.push_back({"sjf", {}, "tiresias", {}, true});
  // Checkpoint-aware victims (they walk every running job) and lost work. Not promote_knob=2:
  // promotions then preempt jobs faster than they checkpoint here, and some never finish (so
  // do gittins' index changes within a queue with these 20-80 s intervals).
  out.push_back({"dlas", {"thresholds=60"}, "count", {}, false, true});
  out.push_back({"dlas",
                 {"queues=3", "thresholds=60,600", "queue_order=running-first"},
                 "consolidate",
                 {},
                 false,
                 true});
  out.push_back({"dlas", {"thresholds=60", "promote_knob=8"}, "tiresias", {}, true, true});
  out.push_back({"gittins", {"queues=1", "quantum=300"}, "count", {}, false, true});
  out.push_back({"las2d", {}, "count", {}, false, true});
  return out;
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << fmt::format("{} {} + {} {}{}{}", c.policy, fmt::join(c.opts, ","), c.placement,
                     fmt::join(c.placement_opts, ","), c.speed ? " (speed model)" : "",
                     c.checkpoints ? " (checkpoint-aware)" : "");
}

std::string CaseName(const testing::TestParamInfo<Case>& info) {
  std::string n = fmt::format("{}_{}_{}", info.index, info.param.policy, info.param.placement);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

bool NeedsAbsentFile(const Case& c, std::string* why) {
  auto path_of = [](const auto& registry, const std::string& name, const std::string& opt) {
    for (const auto& info : registry) {
      if (info.name != name) continue;
      for (const auto& o : info.options) {
        if (o.name == opt) return o.default_value;
      }
    }
    return std::string();
  };
  std::vector<std::string> need;
  if (c.policy == "gittins") need.push_back(path_of(OrderingPolicies(), "gittins", "history"));
  for (const auto& o : c.opts) {
    if (o.rfind("threshold_quantiles=", 0) == 0) {
      need.push_back(path_of(OrderingPolicies(), c.policy, "history"));
    }
  }
  if (c.placement == "tiresias") {
    need.push_back(path_of(PlacementPolicies(), "tiresias", "profiles"));
  }
  if (c.speed) need.push_back(DefaultProfilesPath());
  for (const auto& p : need) {
    if (!std::filesystem::exists(p)) {
      *why = p + " is absent (../shared not checked out)";
      return true;
    }
  }
  return false;
}

class ReferencePass : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    std::string why;
    if (NeedsAbsentFile(GetParam(), &why)) GTEST_SKIP() << why;
    if (GetParam().speed) {
      auto m = LoadLinkSpeedModel(DefaultProfilesPath(), DefaultComputeTimesPath(),
                                  LinkBandwidths{}, CommMode::kParameterServer);
      ASSERT_TRUE(m.ok()) << m.status().message();
      speed_ = *m;
    }
  }

  std::vector<std::string> Run(const Workload& w, bool reference, size_t* finished) {
    const Case& c = GetParam();
    auto p = MakeOrderingPolicy(c.policy, c.opts, TestFiles());
    EXPECT_TRUE(p.ok()) << p.status().message();
    auto pl = MakePlacementPolicy(c.placement, c.placement_opts, TestFiles());
    EXPECT_TRUE(pl.ok()) << pl.status().message();
    if (!p.ok() || !pl.ok()) return {};
    return Drive(std::move(*p), std::move(*pl), speed_, w, reference, finished, c.checkpoints);
  }

  // Returns the incremental run's log.
  std::vector<std::string> Compare(const Workload& w) {
    SCOPED_TRACE(w.name);
    size_t inc_done = 0, ref_done = 0;
    auto inc = Run(w, false, &inc_done);
    auto ref = Run(w, true, &ref_done);
    // Not vacuous: the runs did work (every job fits these clusters, so all finish).
    EXPECT_EQ(inc_done, w.jobs.size());
    EXPECT_EQ(FirstDifference(inc, ref), "");
    return inc;
  }

  std::shared_ptr<const SpeedModel> speed_;
};

TEST_P(ReferencePass, SyntheticWorkloadsDecideAsFromScratch) {
  for (const Workload& w : Synthetic()) Compare(w);
}

TEST_P(ReferencePass, CapacityChangesDecideAsFromScratch) {
  size_t evictions = 0;
  for (const Workload& w : WithCapacityChanges()) {
    for (const auto& line : Compare(w)) evictions += line.find(" evict ") != std::string::npos;
  }
  // Not vacuous: the outages hit running jobs (32 workloads x 8 outages).
  EXPECT_GT(evictions, 20u);
}

TEST_P(ReferencePass, SixtyJobTraceDecidesAsFromScratch) {
  const std::string path = std::string(TIRESIAS_SHARED_DIR) + "/traces/tiresias/60_job.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent (../shared)";
  auto trace = ReadTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  // n2g4, the public simulator's contended cluster; and 2x2x8 with a restore cost.
  Compare({"60_job_1x2x4", *Topology::Create(1, 2, 4), 0, trace->jobs});
  Compare({"60_job_2x2x8", *Topology::Create(2, 2, 8), Seconds(30), trace->jobs});
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, ReferencePass, testing::ValuesIn(AllCases()), CaseName);

TEST(ReferencePassCoverage, EveryRegisteredPolicyAndThePlacementsAreCovered) {
  std::set<std::string> policies, placements;
  for (const auto& c : AllCases()) {
    policies.insert(c.policy);
    placements.insert(c.placement);
  }
  for (const auto& info : OrderingPolicies()) EXPECT_TRUE(policies.contains(info.name));
  EXPECT_EQ(OrderingPolicies().size(), 9u);
  EXPECT_EQ(placements, (std::set<std::string>{"count", "consolidate", "tiresias"}));
}

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

// The comparison bites: a policy that lies about a capability flag. Lying wraps a real
// policy and overrides one flag; everything else is the real policy's.
class Lying : public OrderingPolicy {
 public:
  Lying(std::unique_ptr<OrderingPolicy> p, std::optional<bool> key_changes_while_running,
        std::optional<bool> k0_changes_only_at_transitions)
      : p_(std::move(p)),
        key_changes_(key_changes_while_running),
        k0_only_(k0_changes_only_at_transitions) {}
  std::string_view name() const override { return p_->name(); }
  bool preemptive() const override { return p_->preemptive(); }
  bool stops_at_first_misfit() const override { return p_->stops_at_first_misfit(); }
  bool key_changes_while_running() const override {
    return key_changes_.value_or(p_->key_changes_while_running());
  }
  bool k0_changes_only_at_transitions() const override {
    return k0_only_.value_or(p_->k0_changes_only_at_transitions());
  }
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
  std::optional<bool> key_changes_, k0_only_;
};

struct Lie {
  std::string policy;
  std::optional<bool> key_changes_while_running, k0_changes_only_at_transitions;
  std::unique_ptr<OrderingPolicy> Make(bool honest) const {
    auto p = MakeOrderingPolicy(policy, {}, TestFiles());
    EXPECT_TRUE(p.ok()) << p.status().message();
    if (honest) return std::move(*p);
    return std::make_unique<Lying>(std::move(*p), key_changes_while_running,
                                   k0_changes_only_at_transitions);
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

TEST(ReferencePassBites, LasClaimingItsK0ChangesOnlyAtTransitions) {
  // las's k0 is the executed time, which drifts while a job runs. Claiming
  // k0_changes_only_at_transitions() lets the core skip re-keying running jobs whose (stale)
  // k0 is below the first waiting job's k0, and they keep their GPUs.
  // 4 GPUs. 0 s: A (4 GPUs) starts. 500 s: B and C (2 GPUs each) arrive and preempt A
  // (500 s executed); their keys are 0 s. 1100 s: C finishes. A (500 s) is now ahead of B
  // (600 s), so B is preempted and A resumes. The liar re-keys only running jobs with a k0 of
  // at least A's 500 s: B's stale 0 s is below it, so B keeps its GPUs and A waits.
  const Lie lie{"las", std::nullopt, /*k0_changes_only_at_transitions=*/true};
  const Workload w{"las_1x1x4",
                   *Topology::Create(1, 1, 4),
                   0,
                   {Spec(0, 4, 0, Seconds(5000)), Spec(1, 2, Seconds(500), Seconds(3000)),
                    Spec(2, 2, Seconds(500), Seconds(600))}};
  EXPECT_EQ(lie.Diverges(w, /*honest=*/true), "");
  EXPECT_EQ(lie.Diverges(w, /*honest=*/false),
            "event 5 of 8/10: incremental '3500000 finish 1 n0:0-1', reference '1100000 preempt 1 "
            "n0:0-1 0' (previous: '1100000 finish 2 n0:2-3')");
  EXPECT_GE(lie.Caught(), 1) << "no synthetic workload caught the lie";
}

}  // namespace
}  // namespace tiresias
