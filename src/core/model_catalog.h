// Model profiles for placement: per-model gradient tensor sizes and the skew derived from
// them (the share of the gradient volume in the largest tensor). Skewed models (VGG, AlexNet)
// are placement-sensitive; models of many small tensors (ResNet, Inception) are not.
// The catalogue is plain data: drivers read it from files (trace/model_profile_reader.h)
// and hand it to the placement policy and the speed model, which never read files.
// Immutable once handed over.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace tiresias {

// What a profile may give (found by fuzz/model_profile_fuzzer: two sizes of 1e308 MB summed
// to infinity and the speed model's rates became NaN): a tensor of at most a terabyte, an
// iteration of at most an hour on one GPU. Beyond them a value is a typo.
inline constexpr double kMaxTensorMb = 1e6;
inline constexpr double kMaxComputeMs = 3.6e6;

struct ModelProfile {
  std::string name;
  std::vector<double> tensors_mb;
  double total_mb = 0;
  double skew = 0;        // largest tensor / total, in [0, 1]
  double compute_ms = 0;  // one iteration on one GPU; 0 = unknown
};

class ModelCatalog {
 public:
  // Fails on an empty name or a size outside (0, kMaxTensorMb].
  Status Add(const std::string& name, std::vector<double> tensors_mb);
  // Fails for an unknown model or a time outside (0, kMaxComputeMs].
  Status SetComputeMs(const std::string& name, double ms);
  const ModelProfile* Find(const std::string& name) const;
  size_t size() const { return models_.size(); }
  // Known model names, sorted.
  std::vector<std::string> names() const;

 private:
  std::unordered_map<std::string, ModelProfile> models_;  // Find is on the placement hot path
};

}  // namespace tiresias
