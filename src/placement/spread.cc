// spread: any free GPUs, least-loaded nodes first (most free GPUs, then lowest index).
// random: any free GPUs on nodes in a seeded random order.
// best-fit: one node if possible, the one left with the fewest free GPUs; otherwise the
// fullest-free nodes first, so the job spans as few nodes as it can. None of them waits for
// a packed slot.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "placement/registry.h"

namespace tiresias {

Allocation TakeInOrder(int gpus, const ClusterState& s, const std::vector<int>& nodes) {
  Allocation a;
  int need = gpus;
  for (int n : nodes) {
    if (need == 0) break;
    int take = std::min(need, s.free_on_node(n));
    if (take == 0) continue;
    a.slices.push_back({n, LowestFree(s.free_mask(n), take)});
    need -= take;
  }
  std::sort(a.slices.begin(), a.slices.end(),
            [](const NodeSlice& x, const NodeSlice& y) { return x.node < y.node; });
  return a;
}

std::optional<Allocation> BestFitAny(int gpus, const ClusterState& s) {
  if (s.total_free() < gpus) return std::nullopt;
  const int nodes = s.topology().num_nodes();
  int best = -1;
  for (int n = 0; n < nodes; ++n) {
    int f = s.free_on_node(n);
    if (f >= gpus && (best < 0 || f < s.free_on_node(best))) best = n;
  }
  if (best >= 0) return Allocation{{{best, LowestFree(s.free_mask(best), gpus)}}};
  std::vector<int> order(nodes);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return s.free_on_node(x) > s.free_on_node(y); });
  return TakeInOrder(gpus, s, order);
}

namespace {

class Spread : public TakesAnyFreeGpus {
 public:
  std::unique_ptr<PlacementPolicy> Clone() const override {
    return std::make_unique<Spread>(*this);
  }
  std::string_view name() const override { return "spread"; }
  bool pure_and_monotone() const override { return true; }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    if (s.total_free() < job.gpus) return NoSlotNow{};
    std::vector<int> order(s.topology().num_nodes());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return s.free_on_node(x) > s.free_on_node(y); });
    // One GPU per node per round: spread the gang as widely as the free GPUs allow.
    Allocation a;
    std::vector<uint64_t> taken(s.topology().num_nodes(), 0);
    int need = job.gpus;
    while (need > 0) {
      for (int n : order) {
        uint64_t left = s.free_mask(n) & ~taken[n];
        if (need == 0 || left == 0) continue;
        taken[n] |= LowestFree(left, 1);
        --need;
      }
    }
    for (int n = 0; n < s.topology().num_nodes(); ++n) {
      if (taken[n]) a.slices.push_back({n, taken[n]});
    }
    return Placed{std::move(a)};
  }
};

class Random : public TakesAnyFreeGpus {
 public:
  std::unique_ptr<PlacementPolicy> Clone() const override {
    return std::make_unique<Random>(*this);
  }
  explicit Random(uint64_t seed) : rng_(seed) {}
  std::string_view name() const override { return "random"; }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    if (s.total_free() < job.gpus) return NoSlotNow{};
    std::vector<int> order(s.topology().num_nodes());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng_);
    return Placed{TakeInOrder(job.gpus, s, order)};
  }

 private:
  std::mt19937_64 rng_;
};

class BestFit : public TakesAnyFreeGpus {
 public:
  std::unique_ptr<PlacementPolicy> Clone() const override {
    return std::make_unique<BestFit>(*this);
  }
  std::string_view name() const override { return "best-fit"; }
  bool pure_and_monotone() const override { return true; }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    if (auto a = BestFitAny(job.gpus, s)) return Placed{std::move(*a)};
    return NoSlotNow{};
  }
};

}  // namespace

PlacementInfo SpreadInfo() {
  return {"spread",
          "any free GPUs, least-loaded nodes first (one GPU per node per round)",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<PlacementPolicy>> {
            return std::unique_ptr<PlacementPolicy>(new Spread());
          }};
}

PlacementInfo RandomInfo() {
  return {
      "random",
      "any free GPUs on nodes in a seeded random order",
      {{"seed", OptionSpec::Type::kInt, "1", "random seed", {}, 0, 1e18}},
      [](const OptionValues& v, const DataSource&) -> StatusOr<std::unique_ptr<PlacementPolicy>> {
        return std::unique_ptr<PlacementPolicy>(new Random(static_cast<uint64_t>(v.Int("seed"))));
      }};
}

PlacementInfo BestFitInfo() {
  return {"best-fit",
          "the node left with the fewest free GPUs; else the fewest nodes",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<PlacementPolicy>> {
            return std::unique_ptr<PlacementPolicy>(new BestFit());
          }};
}

}  // namespace tiresias
