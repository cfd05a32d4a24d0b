// Cluster topology: switches x nodes per switch x GPUs per node.
#include "core/topology.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace tiresias {

StatusOr<Topology> Topology::Create(int switches, int nodes_per_switch, int gpus_per_node) {
  if (switches < 1 || nodes_per_switch < 1 || gpus_per_node < 1) {
    return InvalidArgument(fmt::format("cluster {}x{}x{}: every dimension must be at least 1",
                                       switches, nodes_per_switch, gpus_per_node));
  }
  if (gpus_per_node > kMaxGpusPerNode) {
    return InvalidArgument(fmt::format("cluster: {} GPUs per node, at most {} supported",
                                       gpus_per_node, kMaxGpusPerNode));
  }
  const int64_t total = int64_t{switches} * nodes_per_switch * gpus_per_node;
  if (total > kMaxClusterGpus) {
    return InvalidArgument(fmt::format("cluster {}x{}x{}: {} GPUs, at most {} supported", switches,
                                       nodes_per_switch, gpus_per_node, total, kMaxClusterGpus));
  }
  return Topology(switches, nodes_per_switch, gpus_per_node);
}

StatusOr<Topology> Topology::Parse(std::string_view spec) {
  auto parts = Split(spec, 'x');
  if (parts.size() != 3) {
    return InvalidArgument(fmt::format(
        "cluster '{}': expected SWITCHESxNODESxGPUS such as 8x32x8, or a cluster spec CSV file",
        spec));
  }
  int dims[3];
  for (int i = 0; i < 3; ++i) {
    auto v = ParseInt(parts[i]);
    if (!v || *v < 1 || *v > kMaxClusterGpus) {
      return InvalidArgument(
          fmt::format("cluster '{}': '{}' is not a positive integer", spec, parts[i]));
    }
    dims[i] = static_cast<int>(*v);
  }
  return Create(dims[0], dims[1], dims[2]);
}

std::string Topology::str() const {
  return fmt::format("{}x{}x{}", switches_, nodes_per_switch_, gpus_per_node_);
}

}  // namespace tiresias
