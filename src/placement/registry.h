// Placement policies registered by name with typed options, like the ordering policies.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "placement/placement_policy.h"
#include "policy/options.h"

namespace tiresias {

struct PlacementInfo {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;
  std::function<StatusOr<std::unique_ptr<PlacementPolicy>>(const OptionValues&)> make;
};

const std::vector<PlacementInfo>& PlacementPolicies();
StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(
    const std::string& name, const std::vector<std::string>& opts);
std::string PlacementPolicyHelp();

PlacementInfo CountInfo();
PlacementInfo ConsolidateInfo();

// Helpers shared by placement policies: take `n` lowest-index free GPUs of a node.
uint64_t LowestFree(uint64_t free_mask, int n);

}  // namespace tiresias
