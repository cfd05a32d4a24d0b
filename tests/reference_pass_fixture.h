// The harness of the reference-pass tests (src/policy/reference_pass_test.cc and
// reference_pass_bites_test.cc): seeded synthetic workloads (Philly-like and bursty with
// ties, four cluster shapes, restore overhead 0 and 30 s; and the same with nodes losing and
// regaining GPUs, or with GPUs to avoid for a while), Drive() to play one through a Scheduler as
// the simulator does (incremental or with SchedulerOptions::reference_pass) and log every start,
// preemption, finish and eviction, and FirstDifference() between two logs. In a named namespace: it
// spans files.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/scheduler.h"
#include "trace/synthetic.h"

namespace tiresias::reference_pass_test {

// From `at` on, `gpus` GPUs of `node` are usable (the driver turns the count into a mask with
// Scheduler::UsableMaskFor, as the simulator does).
// With `reserve` >= 0: the node's usable GPUs stay, and up to `reserve` of its free ones (the
// lowest) are to be avoided from then on (0: none), as a daemon asks for a stopping process.
struct CapacityChange {
  Time at;
  int node;
  int gpus;
  int reserve = -1;
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
inline std::vector<JobSpec> Bursty(uint64_t seed, int n, int max_gpus) {
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
inline std::vector<JobSpec> PhillyLike(uint64_t seed, int n, const Topology& topo) {
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
inline const std::vector<Workload>& Synthetic() {
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

// Eight seeded changes of random nodes during the arrivals over the synthetic workloads whose
// seed ends in one of `seeds`, each undone 1-20 minutes later (changes of one node may
// overlap: the last wins), and every node as it began at the end: `avoid` false, outages (the
// node loses 0..all but one of its GPUs); true, GPUs to avoid (1..all of its free ones).
inline std::vector<Workload> Perturbed(const std::string& prefix, std::string_view seeds,
                                       uint64_t seed, bool avoid) {
  std::vector<Workload> out;
  for (const Workload& base : Synthetic()) {
    if (seeds.find(base.name.back()) == std::string_view::npos) continue;
    Workload c = base;
    c.name = prefix + base.name;
    std::mt19937_64 rng(++seed);
    const Time span = std::max<Time>(base.jobs.back().submit, Seconds(600));
    const int per = base.topo.gpus_per_node();
    std::uniform_int_distribution<Time> when(0, span);
    std::uniform_int_distribution<int> node(0, base.topo.num_nodes() - 1),
        amount(avoid ? 1 : 0, avoid ? per : per - 1), minutes(1, 20);
    // An outage leaves `gpus` usable; an ask to avoid keeps all and avoids up to `reserve`.
    const auto change = [&](Time at, int n, int k) {
      return avoid ? CapacityChange{at, n, per, k} : CapacityChange{at, n, k};
    };
    const int undo = avoid ? 0 : per;
    for (int k = 0; k < 8; ++k) {
      const Time at = when(rng);
      const int n = node(rng);
      c.capacity.push_back(change(at, n, amount(rng)));
      c.capacity.push_back(change(at + Seconds(60) * minutes(rng), n, undo));
    }
    std::stable_sort(c.capacity.begin(), c.capacity.end(),
                     [](const auto& x, const auto& y) { return x.at < y.at; });
    for (int n = 0; n < base.topo.num_nodes(); ++n) {
      c.capacity.push_back(change(c.capacity.back().at + 1, n, undo));
    }
    out.push_back(std::move(c));
  }
  return out;
}

// Outages over the workloads of seeds 1-4; by the end every node is whole again, so every job
// still finishes.
inline const std::vector<Workload>& WithCapacityChanges() {
  static const auto* w = new std::vector<Workload>(Perturbed("capacity_", "1234", 0, false));
  return *w;
}

// GPUs to avoid (a daemon's stopping processes) over the workloads of seeds 5-8.
inline const std::vector<Workload>& WithGpusToAvoid() {
  static const auto* w = new std::vector<Workload>(Perturbed("avoid_", "5678", 100, true));
  return *w;
}

// Plays the simulator (src/sim/simulator.cc) over a core: completions, then arrivals, then
// Schedule(t); a run completes at progress_start + ceil(remaining packed work / rate).
// Returns one line per start, preemption and finish, and counts the finishes.
inline std::vector<std::string> Drive(std::unique_ptr<OrderingPolicy> policy,
                                      std::unique_ptr<PlacementPolicy> placement,
                                      std::shared_ptr<const SpeedModel> speed, const Workload& w,
                                      bool reference, size_t* finished, bool checkpoints = false,
                                      uint64_t* bound_retries = nullptr) {
  // With bound_retries: a pass with any job past its bound (and a quarter of the running) is
  // a miss, so bound-key tracking goes off after a few passes, and it is tried again every five
  // (how often it was tried again is returned there).
  SchedulerOptions opts{.restore_overhead = w.restore,
                        .reference_pass = reference,
                        .checkpoint_aware = checkpoints,
                        .lose_work = checkpoints};
  if (bound_retries) {
    opts.bound_retry_passes = 5;
    opts.bound_miss_jumps = 1;
  }
  Scheduler s(w.topo, std::move(policy), std::move(placement), opts, std::move(speed));
  using Done = std::tuple<Time, int64_t, int, Time>;  // at, job, its start number, run start
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
      auto [at, id, start_no, run_start] = done.top();
      done.pop();
      const Job* j = s.Find(JobId(id));
      // Preempted since, or moved (Relocate: the same start, another run start).
      if (!j->running() || j->starts != start_no || j->run_start != run_start) continue;
      log.push_back(fmt::format("{} finish {} {}", t, id, j->alloc.str()));
      EXPECT_TRUE(s.Finish(JobId(id), t).ok());
      ++*finished;
    }
    for (; next_cap < w.capacity.size() && w.capacity[next_cap].at == t; ++next_cap) {
      const CapacityChange& c = w.capacity[next_cap];
      if (c.reserve >= 0) {
        uint64_t mask = 0;
        const uint64_t free = s.cluster().free_mask(c.node);
        for (int i = 0, left = c.reserve; i < w.topo.gpus_per_node() && left > 0; ++i) {
          if (free >> i & 1) {
            mask |= uint64_t{1} << i;
            --left;
          }
        }
        auto stopped = s.SetNodeAvailability(c.node, s.cluster().usable_mask(c.node), t, mask);
        EXPECT_TRUE(stopped.ok() && stopped->empty());
        log.push_back(fmt::format("{} reserve n{} {:x}", t, c.node, s.avoid_mask(c.node)));
        continue;
      }
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
    // A job placed on GPUs to avoid whose progress has not begun (its restore) is asked to
    // move off them, as a daemon asks (Scheduler::Relocate), in id order.
    std::vector<JobId> pinned;
    for (const Job& j : s.jobs()) {
      if (j.running() && t < j.progress_start) pinned.push_back(j.spec.id);
    }
    std::vector<Action> actions;
    for (JobId id : pinned) EXPECT_TRUE(s.Relocate(id, t, actions).ok());
    const size_t moved = actions.size();
    for (Action& a : s.Schedule(t)) actions.push_back(std::move(a));
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action& a = actions[i];
      log.push_back(fmt::format("{} {} {} {} {}", t, i < moved ? "relocate" : ToString(a.kind),
                                a.job.value(), a.alloc.str(), a.progress_start));
      if (a.kind != Action::Kind::kStart) continue;
      const Job* j = s.Find(a.job);
      Duration rem = std::max<Duration>(0, *j->spec.duration - j->work_done);
      if (j->rate != 1.0)
        rem = static_cast<Duration>(std::ceil(static_cast<double>(rem) / j->rate));
      done.emplace(j->progress_start + rem, a.job.value(), j->starts, j->run_start);
    }
  }
  if (bound_retries) *bound_retries = s.bound_retries();
  return log;
}

// "" when equal, else the first line that differs with a little context.
inline std::string FirstDifference(const std::vector<std::string>& inc,
                                   const std::vector<std::string>& ref) {
  size_t i = 0;
  while (i < inc.size() && i < ref.size() && inc[i] == ref[i]) ++i;
  if (i == inc.size() && i == ref.size()) return "";
  auto at = [&](const std::vector<std::string>& v) { return i < v.size() ? v[i] : "(end)"; };
  return fmt::format("event {} of {}/{}: incremental '{}', reference '{}' (previous: '{}')", i,
                     inc.size(), ref.size(), at(inc), at(ref), i > 0 ? inc[i - 1] : "");
}

}  // namespace tiresias::reference_pass_test
