// The placement-policy interface: the common "never fits" rule.
#include "core/placement_policy.h"

#include <fmt/format.h>

namespace tiresias {

std::optional<std::string> PlacementPolicy::NeverFitsReason(const JobSpec& job,
                                                            const Topology& topo) const {
  if (job.gpus < 1) return fmt::format("asks for {} GPUs; at least 1 is needed", job.gpus);
  if (job.gpus > topo.total_gpus()) {
    return fmt::format("asks for {} GPUs but the cluster has {} ({})", job.gpus, topo.total_gpus(),
                       topo.str());
  }
  return std::nullopt;
}

}  // namespace tiresias
