// Model profiles for placement: per-model gradient tensor sizes and the skew derived from
// them (the share of the gradient volume in the largest tensor). Skewed models (VGG, AlexNet)
// are placement-sensitive; models of many small tensors (ResNet, Inception) are not.
// Built from a CSV `model,tensor_sizes_mb` (space-separated sizes), such as
// ../shared/profiles/tensor_sizes.csv; users may add models. Per-iteration compute times
// (one GPU) come from a Tiresias-format trace with `iterations` (LoadComputeTimes), e.g. the
// public simulator's 60_job.csv. Immutable after loading.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct ModelProfile {
  std::string name;
  std::vector<double> tensors_mb;
  double total_mb = 0;
  double skew = 0;        // largest tensor / total, in [0, 1]
  double compute_ms = 0;  // one iteration on one GPU; 0 = unknown
};

class ModelCatalog {
 public:
  static StatusOr<ModelCatalog> Load(const std::string& path);
  // Fails on an empty name or a non-positive size.
  Status Add(const std::string& name, std::vector<double> tensors_mb);
  // Sets each known model's compute_ms to the fastest 1-GPU duration / iterations found in
  // a Tiresias-format trace (columns num_gpu, iterations, model_name, duration).
  Status LoadComputeTimes(const std::string& trace_path);
  Status SetComputeMs(const std::string& name, double ms);
  const ModelProfile* Find(const std::string& name) const;
  size_t size() const { return models_.size(); }
  // Known model names, sorted.
  std::vector<std::string> names() const;

 private:
  std::unordered_map<std::string, ModelProfile> models_;  // Find is on the placement hot path
};

}  // namespace tiresias
