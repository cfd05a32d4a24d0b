// What the simulator benchmarks share: the Philly trace's path and jobs (read once), and a
// replay loop that reports the last run's figures as counters.
#pragma once

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "sim/metrics.h"
#include "sim/simulator.h"
#include "trace/trace_reader.h"

namespace tiresias::bench {

inline const std::string kPhilly = std::string(TIRESIAS_SHARED_DIR) + "/traces/philly.csv";

// The whole Philly trace, read once; null when ../shared is absent.
inline const std::vector<JobSpec>* PhillyJobs() {
  static std::vector<JobSpec>* jobs = [] {
    auto t = ReadTrace(kPhilly);
    return t.ok() ? new std::vector<JobSpec>(std::move(t->jobs)) : nullptr;
  }();
  return jobs;
}

// Replays `jobs` under `cfg` for each iteration and reports the last run's figures.
inline void Replay(benchmark::State& state, const SimConfig& cfg,
                   const std::vector<JobSpec>& jobs) {
  Metrics m;
  for (auto _ : state) {
    auto r = RunSimulation(cfg, jobs);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    m = ComputeMetrics(*r);
  }
  state.counters["jobs"] = static_cast<double>(m.finished);
  state.counters["mean_jct_s"] = m.jct.mean;
  state.counters["passes"] = static_cast<double>(m.passes);
  state.counters["preemptions"] = static_cast<double>(m.preemptions);
}

}  // namespace tiresias::bench
