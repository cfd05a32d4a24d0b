// A seeded synthetic, Philly-like workload.
#include "trace/synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>

namespace tiresias {

const std::vector<std::string>& CnnModels() {
  static const std::vector<std::string> kModels = {"vgg19",    "vgg16",      "vgg11",
                                                   "alexnet",  "resnet152",  "resnet101",
                                                   "resnet50", "inception4", "inception3"};
  return kModels;
}

size_t AssignModels(std::vector<JobSpec>& jobs, uint64_t seed,
                    const std::vector<std::string>& models) {
  if (models.empty()) return 0;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, models.size() - 1);
  size_t n = 0;
  for (auto& j : jobs) {
    if (!j.model.empty()) continue;
    j.model = models[pick(rng)];
    ++n;
  }
  return n;
}

std::vector<JobSpec> SyntheticPhillyLike(const SyntheticConfig& cfg) {
  // Philly's size mix (share of jobs): 1:93.2%, 2:2.2%, 4:2.3%, 8:2.0%, 16:0.24%, 32:0.08%.
  struct Size {
    int gpus;
    double weight;
  };
  static constexpr std::array<Size, 6> kSizes = {
      {{1, 93.2}, {2, 2.2}, {4, 2.3}, {8, 2.0}, {16, 0.24}, {32, 0.08}}};
  static constexpr std::array<const char*, 9> kModels = {"vgg19",    "vgg16",      "vgg11",
                                                         "alexnet",  "resnet152",  "resnet101",
                                                         "resnet50", "inception4", "inception3"};
  std::mt19937_64 rng(cfg.seed);
  std::vector<double> weights;
  std::vector<int> sizes;
  for (const auto& s : kSizes) {
    if (s.gpus <= cfg.max_gpus) {
      sizes.push_back(s.gpus);
      weights.push_back(s.weight);
    }
  }
  std::discrete_distribution<size_t> size_dist(weights.begin(), weights.end());
  std::lognormal_distribution<double> dur_dist(std::log(cfg.median_seconds), cfg.sigma);
  std::uniform_int_distribution<size_t> model_dist(0, kModels.size() - 1);

  std::vector<JobSpec> jobs(cfg.jobs);
  double gpu_seconds = 0;
  for (int i = 0; i < cfg.jobs; ++i) {
    JobSpec& j = jobs[i];
    j.id = JobId(i);
    j.gpus = sizes[size_dist(rng)];
    double secs = std::clamp(dur_dist(rng), 10.0, 14.0 * 86400);
    j.duration = static_cast<Duration>(std::llround(secs)) * kMsPerSecond;
    j.model = kModels[model_dist(rng)];
    j.name = fmt::format("job{}", i);
    gpu_seconds += secs * j.gpus;
  }
  // Arrival rate such that offered demand = load x cluster capacity over the arrival span.
  double span = gpu_seconds / (cfg.load * std::max(1, cfg.cluster_gpus));
  std::exponential_distribution<double> gap(cfg.jobs / std::max(span, 1.0));
  double t = 0;
  for (auto& j : jobs) {
    j.submit = static_cast<Time>(std::llround(t)) * kMsPerSecond;
    t += gap(rng);
  }
  return jobs;
}

}  // namespace tiresias
