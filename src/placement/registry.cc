// Placement policies registered by name.
#include "placement/registry.h"

#include <fmt/format.h>

namespace tiresias {

const PlacementRegistry& PlacementPolicies() {
  static const PlacementRegistry kAll("placement", "placements",
                                      {CountInfo(), ConsolidateInfo(), SpreadInfo(), RandomInfo(),
                                       BestFitInfo(), TiresiasPlacementInfo()});
  return kAll;
}

StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(const std::string& name,
                                                               const std::vector<std::string>& opts,
                                                               const DataSource& data) {
  return PlacementPolicies().Make(name, opts, data);
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
