// BuildCore: policies from the registries, files through the DataSource.
#include "engine/core_builder.h"

#include "placement/registry.h"
#include "policy/registry.h"

namespace tiresias {

StatusOr<std::unique_ptr<Scheduler>> BuildCore(const CoreConfig& cfg, const DataSource& data) {
  auto policy = MakeOrderingPolicy(cfg.policy, cfg.policy_opts, data);
  if (!policy.ok()) return policy.status();
  auto placement = MakePlacementPolicy(cfg.placement, cfg.placement_opts, data);
  if (!placement.ok()) return placement.status();
  return std::make_unique<Scheduler>(cfg.topo, std::move(*policy), std::move(*placement),
                                     cfg.options, cfg.speed);
}

}  // namespace tiresias
