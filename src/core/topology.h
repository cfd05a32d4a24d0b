// Cluster topology: switches x nodes per switch x GPUs per node, all nodes alike.
// An immutable value built once per run; thread-safe to share after construction.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/time.h"
#include "core/allocation.h"  // kMaxGpusPerNode

namespace tiresias {

// The largest cluster a topology may describe, in GPUs (Philly had about 2,500). The core
// keeps state per node and per GPU and counts GPUs in int; beyond this a typo such as
// 100000x100000x64 would exhaust memory, so Create refuses it with this bound.
inline constexpr int kMaxClusterGpus = 1'000'000;
// The most GPU-time any input may give (a history sample, a queue threshold, a quantum): the
// largest cluster for ten years, in GPU-seconds. In GPU-ms (3.15e17) it still fits int64.
inline constexpr double kMaxGpuSeconds = static_cast<double>(kMaxInputSeconds) * kMaxClusterGpus;

class Topology {
 public:
  // Fails when any dimension is < 1, gpus_per_node > kMaxGpusPerNode or the cluster has more
  // than kMaxClusterGpus GPUs.
  static StatusOr<Topology> Create(int switches, int nodes_per_switch, int gpus_per_node);
  // Parses "SxNxG", e.g. "8x32x8" = 8 switches x 32 nodes x 8 GPUs.
  static StatusOr<Topology> Parse(std::string_view spec);

  int switches() const { return switches_; }
  int nodes_per_switch() const { return nodes_per_switch_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int num_nodes() const { return switches_ * nodes_per_switch_; }
  int total_gpus() const { return num_nodes() * gpus_per_node_; }
  int switch_of(int node) const { return node / nodes_per_switch_; }
  int gpus_per_switch() const { return nodes_per_switch_ * gpus_per_node_; }
  std::string str() const;  // "SxNxG"

 private:
  Topology(int s, int n, int g) : switches_(s), nodes_per_switch_(n), gpus_per_node_(g) {}
  int switches_;
  int nodes_per_switch_;
  int gpus_per_node_;
};

}  // namespace tiresias
