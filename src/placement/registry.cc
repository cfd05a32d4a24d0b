// Placement policies registered by name.
#include "placement/registry.h"

#include <fmt/format.h>

#include "policy/named_registry.h"

namespace tiresias {

const std::vector<PlacementInfo>& PlacementPolicies() {
  static const std::vector<PlacementInfo> kAll = {CountInfo(),   ConsolidateInfo(),
                                                  SpreadInfo(),  RandomInfo(),
                                                  BestFitInfo(), TiresiasPlacementInfo()};
  return kAll;
}

StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(
    const std::string& name, const std::vector<std::string>& opts) {
  return MakeRegistered(PlacementPolicies(), "placement", "placements", name, opts);
}

std::string PlacementPolicyHelp() {
  return RegistryHelp(PlacementPolicies());
}

std::string TakesAnyFreeGpus::WhyNoSlot(const JobSpec& job, const ClusterState& s) const {
  return fmt::format("needs {} GPUs, {} free", job.gpus, s.total_free());
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
