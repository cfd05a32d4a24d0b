// Which GPUs are free right now, per node, with running totals per switch and cluster.
// Owned by the Scheduler; placement policies read it through a const reference.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "core/allocation.h"
#include "core/topology.h"

namespace tiresias {

class ClusterState {
 public:
  explicit ClusterState(const Topology& topo);

  const Topology& topology() const { return topo_; }
  uint64_t free_mask(int node) const { return free_[node]; }
  int free_on_node(int node) const { return free_count_[node]; }
  int free_on_switch(int sw) const { return switch_free_[sw]; }
  int total_free() const { return total_free_; }
  // Nodes with at least `k` free GPUs (0 <= k <= GPUs per node); O(GPUs per node).
  int nodes_with_free(int k) const {
    int n = 0;
    for (int f = k; f < static_cast<int>(nodes_by_free_.size()); ++f) n += nodes_by_free_[f];
    return n;
  }

  // Marks the GPUs of `a` busy / free. Callers guarantee they were free / busy.
  void Take(const Allocation& a);
  void Give(const Allocation& a);
  bool AllFree(const Allocation& a) const;

 private:
  void Adjust(int node, uint64_t mask, bool to_free);
  Topology topo_;
  uint64_t full_mask_;
  std::vector<uint64_t> free_;
  std::vector<int> free_count_;
  std::vector<int> switch_free_;
  int total_free_;
  std::vector<int> nodes_by_free_;  // free GPU count -> number of nodes with exactly that
};

}  // namespace tiresias
