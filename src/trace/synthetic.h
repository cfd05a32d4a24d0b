// A seeded synthetic workload shaped like a real trace: the GPU-size mix, the duration
// distribution of each size class (1 GPU, 2-4, 5-8, more than 8) and the virtual-cluster mix
// are figures fitted to a trace (by default ../shared/traces/philly.csv: counts and quantile
// tables, not rows), arrivals are Poisson, stretched so that the span from the first to the
// last offers the target load to a cluster exactly, and each job gets a CNN model. Durations are
// drawn by inverting the class's quantile table (linear between the tabulated quantiles).
//
// Portable: the same seed gives the same jobs with any C++ standard library and compiler. The
// generator is xoshiro256** seeded by splitmix64, integers are drawn by rejection, logarithms
// are our own (frexp and a series), and no std::*_distribution is used (their algorithms are
// left to each library). Floating-point contraction is off for this file (CMakeLists.txt), so
// every value is a sequence of correctly rounded IEEE operations.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "core/job.h"

namespace tiresias {

// xoshiro256** (Blackman and Vigna), seeded by splitmix64: specified bit for bit.
class PortableRng {
 public:
  explicit PortableRng(uint64_t seed);
  uint64_t Next();
  double Uniform();                 // [0, 1), 53 bits
  uint64_t Below(uint64_t n);       // [0, n), unbiased (rejection); n > 0
  double Exponential(double mean);  // -mean x ln(1 - U)

 private:
  uint64_t s_[4];
};
// The natural logarithm of x > 0 from basic IEEE operations only (portable to the last bit).
double PortableLog(double x);

// What a synthetic workload is fitted to.
struct WorkloadFigures {
  std::string source;
  std::vector<std::pair<int, int64_t>> sizes;  // GPUs, jobs
  // Per size class (1, 2-4, 5-8, >8 GPUs): duration in seconds at QuantileLevels().
  std::array<std::vector<double>, 4> durations;
  std::vector<std::pair<std::string, int64_t>> vcs;  // virtual cluster, jobs
};
// The probabilities the duration tables are given at: 0, 0.01, ..., 0.99, 0.995, 0.999, 1.
const std::vector<double>& QuantileLevels();
// Figures of a job list: its size mix, each class's duration quantiles (linear interpolation
// between order statistics, rounded to whole seconds), its VC mix.
WorkloadFigures FitFigures(const std::vector<JobSpec>& jobs, std::string source);
// Fitted to ../shared/traces/philly.csv by FitFigures (synthetic_test.cc checks they still
// are when the file is present).
const WorkloadFigures& PhillyFigures();

// The largest job `sim --synthetic`, `sweep --synthetic` and `trace synth` draw by default
// (or the cluster's size when smaller): Philly's 64- and 128-GPU jobs are left out, the mix
// renormalised, so that one workload runs on small clusters too.
inline constexpr int kSyntheticMaxGpus = 32;
// That default on a cluster of `cluster_gpus`.
inline int DefaultSyntheticMaxGpus(int cluster_gpus) {
  return std::min(kSyntheticMaxGpus, cluster_gpus);
}

struct SyntheticConfig {
  int64_t jobs = 2000;
  uint64_t seed = 1;
  double load = 1.2;  // offered GPU demand / cluster GPUs, over the arrival span
  int cluster_gpus = 128;
  int max_gpus = 1 << 30;                    // sizes above this are left out (the mix renormalised)
  double duration_scale = 1.0;               // multiplies every duration (small tests)
  const WorkloadFigures* figures = nullptr;  // null: PhillyFigures()
  bool models = true;                        // give each job a CNN model
};

// The jobs, sorted by (submit, id), ids 0..n-1, submit times in whole seconds.
std::vector<JobSpec> SyntheticPhillyLike(const SyntheticConfig& cfg);
// The same jobs written as a Tiresias-format CSV (job_id,num_gpu,submit_time,duration,
// model_name,vc), streamed (a million jobs take ~25 bytes each in memory while generating).
// Returns the offered load actually drawn (GPU-seconds / (GPUs x arrival span)), NaN when
// every job is submitted at 0 s (one job: no span, no load).
StatusOr<double> WriteSyntheticCsv(const SyntheticConfig& cfg, const std::string& path);

// The nine CNNs of ../shared/profiles/tensor_sizes.csv (VGG, AlexNet, ResNet, Inception).
const std::vector<std::string>& CnnModels();
// Gives every job without a model one drawn uniformly from `models`, seeded (std::mt19937_64
// and std::uniform_int_distribution: reproducible with this standard library; sim
// --assign-models). Jobs that already name a model keep it. Returns how many were assigned.
size_t AssignModels(std::vector<JobSpec>& jobs, uint64_t seed,
                    const std::vector<std::string>& models);

}  // namespace tiresias
