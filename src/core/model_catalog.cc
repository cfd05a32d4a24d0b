// Model profiles: tensor sizes and skew.
#include "core/model_catalog.h"

#include <fmt/format.h>

#include <algorithm>

namespace tiresias {

Status ModelCatalog::Add(const std::string& name, std::vector<double> tensors_mb) {
  if (name.empty()) return InvalidArgument("model profile: empty model name");
  if (tensors_mb.empty()) return InvalidArgument(fmt::format("model {}: no tensor sizes", name));
  ModelProfile p{name, std::move(tensors_mb), 0, 0, 0};
  double largest = 0;
  for (double t : p.tensors_mb) {
    if (!(t > 0 && t <= kMaxTensorMb)) {
      return InvalidArgument(
          fmt::format("model {}: tensor size {} MB is not in (0, {}]", name, t, kMaxTensorMb));
    }
    p.total_mb += t;
    largest = std::max(largest, t);
  }
  p.skew = largest / p.total_mb;
  models_[name] = std::move(p);
  return Status::Ok();
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& [name, p] : models_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

const ModelProfile* ModelCatalog::Find(const std::string& name) const {
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : &it->second;
}

Status ModelCatalog::SetComputeMs(const std::string& name, double ms) {
  auto it = models_.find(name);
  if (it == models_.end()) return NotFound(fmt::format("model {}: no profile", name));
  if (!(ms > 0 && ms <= kMaxComputeMs)) {
    return InvalidArgument(fmt::format(
        "model {}: compute time {} ms per iteration is not in (0, {}]", name, ms, kMaxComputeMs));
  }
  it->second.compute_ms = ms;
  return Status::Ok();
}

}  // namespace tiresias
