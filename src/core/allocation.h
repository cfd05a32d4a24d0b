// An allocation: which GPUs of which nodes a job holds. A small value type.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

namespace tiresias {

struct NodeSlice {
  int node = 0;
  uint64_t gpus = 0;  // bit i = GPU i of the node
  int count() const { return std::popcount(gpus); }
};

struct Allocation {
  std::vector<NodeSlice> slices;  // ordered by node, no empty slice
  int gpu_count() const;
  int node_count() const { return static_cast<int>(slices.size()); }
  bool empty() const { return slices.empty(); }
  std::string str() const;  // e.g. "n0:0-3,n5:2"
};

}  // namespace tiresias
