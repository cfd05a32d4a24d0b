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

struct ModelProfile {
  std::string name;
  std::vector<double> tensors_mb;
  double total_mb = 0;
  double skew = 0;        // largest tensor / total, in [0, 1]
  double compute_ms = 0;  // one iteration on one GPU; 0 = unknown
};

class ModelCatalog {
 public:
  // Fails on an empty name or a non-positive size.
  Status Add(const std::string& name, std::vector<double> tensors_mb);
  Status SetComputeMs(const std::string& name, double ms);
  const ModelProfile* Find(const std::string& name) const;
  size_t size() const { return models_.size(); }
  // Known model names, sorted.
  std::vector<std::string> names() const;

 private:
  std::unordered_map<std::string, ModelProfile> models_;  // Find is on the placement hot path
};

}  // namespace tiresias
