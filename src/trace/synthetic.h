// A seeded synthetic workload shaped like the Philly trace: Poisson arrivals, GPU counts
// drawn from Philly's size mix (93% single-GPU), heavy-tailed (log-normal) durations, and a
// CNN model name per job. The same seed gives the same jobs on this build.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/job.h"

namespace tiresias {

struct SyntheticConfig {
  int jobs = 2000;
  uint64_t seed = 1;
  double load = 1.2;  // offered GPU demand / cluster GPUs
  int cluster_gpus = 128;
  double median_seconds = 900;
  double sigma = 1.6;  // log-normal shape of durations
  int max_gpus = 32;   // sizes above this are left out
};

std::vector<JobSpec> SyntheticPhillyLike(const SyntheticConfig& cfg);

// The nine CNNs of ../shared/profiles/tensor_sizes.csv (VGG, AlexNet, ResNet, Inception).
const std::vector<std::string>& CnnModels();
// Gives every job without a model one drawn uniformly from `models`, seeded; jobs that
// already name a model keep it. Returns how many were assigned.
size_t AssignModels(std::vector<JobSpec>& jobs, uint64_t seed,
                    const std::vector<std::string>& models);

}  // namespace tiresias
