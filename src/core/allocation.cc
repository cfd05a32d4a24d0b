// An allocation: which GPUs of which nodes a job holds.
#include "core/allocation.h"

#include <fmt/format.h>

namespace tiresias {

int Allocation::gpu_count() const {
  int n = 0;
  for (const auto& s : slices) n += s.count();
  return n;
}

std::string Allocation::str() const {
  std::string out;
  for (const auto& s : slices) {
    if (!out.empty()) out += ',';
    out += fmt::format("n{}:", s.node);
    // Render the mask as ranges of consecutive GPU indices.
    bool first = true;
    for (int i = 0; i < 64; ++i) {
      if (!(s.gpus >> i & 1)) continue;
      int j = i;
      while (j + 1 < 64 && (s.gpus >> (j + 1) & 1)) ++j;
      out += fmt::format("{}{}", first ? "" : "+", i);
      if (j > i) out += fmt::format("-{}", j);
      first = false;
      i = j;
    }
  }
  return out;
}

}  // namespace tiresias
