// Placement policies registered by name with typed options, like the ordering policies.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/registry.h"
#include "common/status.h"
#include "core/data_source.h"
#include "core/placement_policy.h"

namespace tiresias {

using PlacementInfo = RegistryEntry<PlacementPolicy, const DataSource&>;
using PlacementRegistry = Registry<PlacementPolicy, const DataSource&>;

const PlacementRegistry& PlacementPolicies();
// Builds a placement; files its options name (the model profiles) come from `data`.
StatusOr<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(const std::string& name,
                                                               const std::vector<std::string>& opts,
                                                               const DataSource& data);

PlacementInfo CountInfo();
PlacementInfo ConsolidateInfo();
PlacementInfo SpreadInfo();
PlacementInfo RandomInfo();
PlacementInfo BestFitInfo();
PlacementInfo TiresiasPlacementInfo();

// Helpers shared by placement policies.
// A policy that places whenever enough GPUs are free anywhere (count, spread, random,
// best-fit): the only reason for no slot is too few free GPUs.
class TakesAnyFreeGpus : public PlacementPolicy {
 public:
  bool places_whenever_enough_free() const override { return true; }
  std::string WhyNoSlot(const JobSpec& job, const ClusterState& s) const override;
};
// The `n` lowest-index GPUs of a free mask.
uint64_t LowestFree(uint64_t free_mask, int n);
// Free GPUs taken node by node in the given node order (the caller checked there are enough).
Allocation TakeInOrder(int gpus, const ClusterState& s, const std::vector<int>& nodes);
// One node if possible (the one left with the fewest free GPUs), else the fullest-free nodes
// first; nullopt when fewer than `gpus` are free.
std::optional<Allocation> BestFitAny(int gpus, const ClusterState& s);

}  // namespace tiresias
