// An allocation: which GPUs of which nodes a job holds, and GpuId, the one name of a GPU
// from placement to the executor (node, index on the node). A small value type.
#pragma once

#include <bit>
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

namespace tiresias {

// The most GPUs a node may have: a node's GPUs are the bits of one 64-bit mask.
inline constexpr int kMaxGpusPerNode = 64;

// One GPU: its node and its index on that node (0 <= index < kMaxGpusPerNode). The index is
// the topology's, not a device name: executors map it to CUDA_VISIBLE_DEVICES or a Slurm
// GPU on that node.
struct GpuId {
  int node = 0;
  int index = 0;
  auto operator<=>(const GpuId&) const = default;
};

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
  // Every GPU, by node then index.
  std::vector<GpuId> Gpus() const;
  // The allocation holding exactly `gpus` (any order, no duplicates).
  static Allocation Of(const std::vector<GpuId>& gpus);
  std::string str() const;  // e.g. "n0:0-3,n5:2"
};

}  // namespace tiresias
