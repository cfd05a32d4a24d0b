// Model profiles for placement: per-model gradient tensor sizes and the skew derived from
// them (the share of the gradient volume in the largest tensor). Skewed models (VGG, AlexNet)
// are placement-sensitive; models of many small tensors (ResNet, Inception) are not.
// Built from a CSV `model,tensor_sizes_mb` (space-separated sizes), such as
// ../shared/profiles/tensor_sizes.csv; users may add models. Immutable after loading.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct ModelProfile {
  std::string name;
  std::vector<double> tensors_mb;
  double total_mb = 0;
  double skew = 0;  // largest tensor / total, in [0, 1]
};

class ModelCatalog {
 public:
  static StatusOr<ModelCatalog> Load(const std::string& path);
  // Fails on an empty name or a non-positive size.
  Status Add(const std::string& name, std::vector<double> tensors_mb);
  const ModelProfile* Find(const std::string& name) const;
  size_t size() const { return models_.size(); }
  const std::map<std::string, ModelProfile>& models() const { return models_; }

 private:
  std::map<std::string, ModelProfile> models_;
};

}  // namespace tiresias
