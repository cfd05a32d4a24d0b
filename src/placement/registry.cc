// Placement policies registered by name.
#include "placement/registry.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace tiresias {

const std::vector<PlacementInfo>& PlacementPolicies() {
  static const std::vector<PlacementInfo> kAll = {CountInfo(),  ConsolidateInfo(),
                                                  SpreadInfo(), RandomInfo(),
                                                  BestFitInfo(), TiresiasPlacementInfo()};
  return kAll;
}

StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(
    const std::string& name, const std::vector<std::string>& opts) {
  std::vector<std::string> names;
  for (const auto& info : PlacementPolicies()) {
    if (info.name == name) {
      auto values = ParseOptions("placement " + name, info.options, opts);
      if (!values.ok()) return values.status();
      return info.make(*values);
    }
    names.push_back(info.name);
  }
  return InvalidArgument(
      fmt::format("unknown placement '{}'; valid placements: {}", name, Join(names, ", ")));
}

std::string PlacementPolicyHelp() {
  std::string out;
  for (const auto& info : PlacementPolicies()) {
    out += fmt::format("  {:<14} {}\n", info.name, info.summary);
    out += DescribeOptions(info.options);
  }
  return out;
}

uint64_t LowestFree(uint64_t free_mask, int n) {
  uint64_t out = 0;
  while (n-- > 0 && free_mask) {
    uint64_t bit = free_mask & (~free_mask + 1);
    out |= bit;
    free_mask &= ~bit;
  }
  return out;
}

}  // namespace tiresias
