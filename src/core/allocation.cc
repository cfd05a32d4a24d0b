// An allocation: which GPUs of which nodes a job holds.
#include "core/allocation.h"

#include <fmt/format.h>

#include <algorithm>

namespace tiresias {

int Allocation::gpu_count() const {
  int n = 0;
  for (const auto& s : slices) n += s.count();
  return n;
}

std::vector<GpuId> Allocation::Gpus() const {
  std::vector<GpuId> out;
  out.reserve(static_cast<size_t>(gpu_count()));
  for (const auto& s : slices) {
    for (uint64_t m = s.gpus; m; m &= m - 1) {
      out.push_back(GpuId{s.node, std::countr_zero(m)});
    }
  }
  return out;
}

Allocation Allocation::Of(const std::vector<GpuId>& gpus) {
  std::vector<GpuId> sorted = gpus;
  std::sort(sorted.begin(), sorted.end());
  Allocation a;
  for (const GpuId& g : sorted) {
    if (a.slices.empty() || a.slices.back().node != g.node) a.slices.push_back({g.node, 0});
    a.slices.back().gpus |= uint64_t{1} << g.index;
  }
  return a;
}

std::string Allocation::str() const {
  std::string out;
  for (const auto& s : slices) {
    if (!out.empty()) out += ',';
    out += fmt::format("n{}:", s.node);
    // Render the mask as ranges of consecutive GPU indices.
    bool first = true;
    for (int i = 0; i < kMaxGpusPerNode; ++i) {
      if (!(s.gpus >> i & 1)) continue;
      int j = i;
      while (j + 1 < kMaxGpusPerNode && (s.gpus >> (j + 1) & 1)) ++j;
      out += fmt::format("{}{}", first ? "" : "+", i);
      if (j > i) out += fmt::format("-{}", j);
      first = false;
      i = j;
    }
  }
  return out;
}

}  // namespace tiresias
