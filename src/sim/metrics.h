// Metrics of a run, as algorithms.md defines them: JCT = end - submit, queueing delay =
// first start - submit, makespan = last end - first submit, GPU utilisation = GPU-time held /
// (GPUs x makespan), preemptions, promotions, GPU-time lost to restore overhead. Mean, median,
// p95, p99 (linear interpolation between order statistics), overall and by job size.
// Placement: slowdown (achieved vs packed speed) per finished job, GPUs idle because of
// fragmentation (time-averaged over the makespan), nodes and switches spanned by
// multi-GPU jobs, and how many jobs the speed model did not know (run at packed speed).
#pragma once

#include <array>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace tiresias {

struct Stats {
  size_t n = 0;
  double mean = 0, median = 0, p95 = 0, p99 = 0, max = 0;
};
Stats Summarize(std::vector<double> values);

struct SizeBucket {
  const char* name;
  int lo, hi;  // GPUs, inclusive
};
inline constexpr std::array<SizeBucket, 4> kSizeBuckets = {
    {{"1 GPU", 1, 1}, {"2-4 GPUs", 2, 4}, {"5-8 GPUs", 5, 8}, {">8 GPUs", 9, 1 << 30}}};

struct Metrics {
  std::string label;
  size_t jobs = 0, finished = 0, rejected = 0, unfinished = 0;
  Stats jct, queueing;  // seconds, finished jobs
  std::array<Stats, 4> jct_by_size, queueing_by_size;
  double makespan = 0;     // seconds
  double utilisation = 0;  // 0..1
  int64_t preemptions = 0, promotions = 0;
  int64_t evictions = 0;  // runs stopped by capacity changes (sim --capacity)
  double overhead_gpu_seconds = 0;
  uint64_t passes = 0;
  Stats slowdown;                            // finished jobs; 1 = packed speed
  double frag_idle_gpus = 0;                 // mean GPUs idle because of fragmentation
  double mean_nodes = 0, mean_switches = 0;  // finished multi-GPU jobs, last run
  size_t unknown_models = 0;                 // jobs the speed model did not know
  std::string placement_note;
};

Metrics ComputeMetrics(const SimResult& r);
nlohmann::json ToJson(const Metrics& m);
nlohmann::json ToJson(const Stats& s);

}  // namespace tiresias
