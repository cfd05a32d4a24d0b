// Reads `time,node,gpus` capacity rows for the simulator (see capacity_reader.h).
#include "trace/capacity_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/strings.h"
#include "trace/csv.h"

namespace tiresias {

StatusOr<std::vector<CapacityChange>> ReadCapacityChanges(const std::string& path,
                                                          const Topology& topo) {
  auto f = CsvFile::Open(path);
  if (!f.ok()) return f.status();
  auto time = f->Column("time"), node = f->Column("node"), gpus = f->Column("gpus");
  if (!time || !node || !gpus) {
    return InvalidArgument(fmt::format("{}:1: the header must name time, node and gpus", path));
  }
  std::vector<CapacityChange> out;
  std::vector<std::string_view> row;
  while (f->Next(row)) {
    if (std::max({*time, *node, *gpus}) >= row.size()) {
      return InvalidArgument(fmt::format("{}: too few fields", f->where()));
    }
    auto t = ParseDouble(row[*time]);
    if (!t || *t < 0 || !std::isfinite(*t)) {
      return InvalidArgument(fmt::format("{}: time '{}' is not a non-negative number of seconds",
                                         f->where(), row[*time]));
    }
    auto n = ParseInt(row[*node]);
    if (!n || *n < 0 || *n >= topo.num_nodes()) {
      return InvalidArgument(fmt::format("{}: node '{}' is not a node of {} (0..{})", f->where(),
                                         row[*node], topo.str(), topo.num_nodes() - 1));
    }
    auto g = ParseInt(row[*gpus]);
    if (!g || *g < 0 || *g > topo.gpus_per_node()) {
      return InvalidArgument(fmt::format("{}: gpus '{}' is not a count in 0..{}", f->where(),
                                         row[*gpus], topo.gpus_per_node()));
    }
    out.push_back({static_cast<Time>(std::llround(*t * kMsPerSecond)), static_cast<int>(*n),
                   static_cast<int>(*g)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CapacityChange& a, const CapacityChange& b) { return a.at < b.at; });
  return out;
}

}  // namespace tiresias
