// count: any free GPUs anywhere, ignoring topology (the public simulator's Tiresias runs).
// Takes GPUs node by node in index order.
#include <fmt/format.h>

#include "placement/registry.h"

namespace tiresias {
namespace {

class Count : public TakesAnyFreeGpus {
 public:
  std::unique_ptr<PlacementPolicy> Clone() const override { return std::make_unique<Count>(*this); }
  std::string_view name() const override { return "count"; }
  bool pure_and_monotone() const override { return true; }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    if (s.total_free() < job.gpus) {
      return NoSlotNow{};
    }
    Allocation a;
    int need = job.gpus;
    for (int n = 0; need > 0 && n < s.topology().num_nodes(); ++n) {
      int take = std::min(need, s.free_on_node(n));
      if (take == 0) continue;
      a.slices.push_back({n, LowestFree(s.free_mask(n), take)});
      need -= take;
    }
    return Placed{std::move(a)};
  }
};

}  // namespace

PlacementInfo CountInfo() {
  return {"count",
          "any free GPUs anywhere; ignores topology",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<PlacementPolicy>> {
            return std::unique_ptr<PlacementPolicy>(new Count());
          }};
}

}  // namespace tiresias
