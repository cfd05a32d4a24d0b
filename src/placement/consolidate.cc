// consolidate (YARN-CS): jobs wait for a packed slot. See consolidate.h for the rule.
#include "placement/consolidate.h"

#include <fmt/format.h>

#include <algorithm>

#include "placement/registry.h"

namespace tiresias {

std::optional<Allocation> FindPackedSlot(int gpus, const ClusterState& s) {
  const Topology& t = s.topology();
  const int gpn = t.gpus_per_node();
  if (gpus <= gpn) {
    if (s.nodes_with_free(gpus) == 0) return std::nullopt;  // the common miss, in O(gpn)
    for (int n = 0; n < t.num_nodes(); ++n) {
      if (s.free_on_node(n) >= gpus) return Allocation{{{n, LowestFree(s.free_mask(n), gpus)}}};
    }
    return std::nullopt;
  }
  const int whole = gpus / gpn, rest = gpus % gpn;
  if (s.nodes_with_free(gpn) < whole) return std::nullopt;
  for (int sw = 0; sw < t.switches(); ++sw) {
    if (s.free_on_switch(sw) < gpus) continue;
    const int first = sw * t.nodes_per_switch(), last = first + t.nodes_per_switch();
    Allocation a;
    std::vector<bool> used(t.nodes_per_switch(), false);
    for (int n = first; n < last && static_cast<int>(a.slices.size()) < whole; ++n) {
      if (s.free_on_node(n) == gpn) {
        a.slices.push_back({n, s.free_mask(n)});
        used[n - first] = true;
      }
    }
    if (static_cast<int>(a.slices.size()) < whole) continue;
    if (rest > 0) {
      int pick = -1;
      for (int n = first; n < last; ++n) {
        if (!used[n - first] && s.free_on_node(n) >= rest) {
          pick = n;
          break;
        }
      }
      if (pick < 0) continue;
      a.slices.push_back({pick, LowestFree(s.free_mask(pick), rest)});
      std::sort(a.slices.begin(), a.slices.end(),
                [](const NodeSlice& x, const NodeSlice& y) { return x.node < y.node; });
    }
    return a;
  }
  return std::nullopt;
}

std::string PackedSlotWait(int gpus, const ClusterState& s) {
  const int gpn = s.topology().gpus_per_node();
  if (gpus <= gpn) {
    return fmt::format("waits for one node with {} free GPUs ({} free in all, scattered)", gpus,
                       s.total_free());
  }
  return fmt::format("waits for {} idle nodes{} under one switch ({} GPUs free in all)", gpus / gpn,
                     gpus % gpn ? fmt::format(" plus {} GPUs on one more node", gpus % gpn) : "",
                     s.total_free());
}

namespace {

class Consolidate : public PlacementPolicy {
 public:
  std::unique_ptr<PlacementPolicy> Clone() const override {
    return std::make_unique<Consolidate>(*this);
  }
  std::string_view name() const override { return "consolidate"; }
  bool pure_and_monotone() const override { return true; }  // a packed slot stays one
  std::optional<std::string> NeverFitsReason(const JobSpec& job,
                                             const Topology& topo) const override {
    if (auto why = PlacementPolicy::NeverFitsReason(job, topo)) return why;
    if (job.gpus > topo.gpus_per_switch()) {
      return fmt::format("asks for {} GPUs; consolidated jobs sit under one switch of {} GPUs",
                         job.gpus, topo.gpus_per_switch());
    }
    return std::nullopt;
  }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    if (auto a = FindPackedSlot(job.gpus, s)) return Placed{std::move(*a)};
    return NoSlotNow{};
  }
  std::string WhyNoSlot(const JobSpec& job, const ClusterState& s) const override {
    return PackedSlotWait(job.gpus, s);
  }
};

}  // namespace

PlacementInfo ConsolidateInfo() {
  return {"consolidate",
          "YARN-CS: one node, or the fewest whole nodes under one switch; waits "
          "for such a slot",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<PlacementPolicy>> {
            return std::unique_ptr<PlacementPolicy>(new Consolidate());
          }};
}

}  // namespace tiresias
