// EvenSplit: a placement wrapper for engines that give every node of a job the same number of
// GPUs (see even_split.h).
#include "placement/even_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "placement/registry.h"

namespace tiresias {

bool IsEvenSplit(const Allocation& a) {
  return std::all_of(a.slices.begin(), a.slices.end(),
                     [&](const NodeSlice& x) { return x.count() == a.slices.front().count(); });
}

namespace {

// The numbers of nodes an even split of `gpus` may use: k divides gpus, and gpus / k fit a node.
std::vector<int> EvenNodeCounts(int gpus, const Topology& t) {
  std::vector<int> out;
  for (int k = (gpus + t.gpus_per_node() - 1) / t.gpus_per_node(); k <= t.num_nodes(); ++k) {
    if (k > 0 && gpus % k == 0) out.push_back(k);
  }
  return out;
}

// `k` nodes in [first, last) with `per` free GPUs each, those left with the fewest first.
std::optional<Allocation> Pick(int k, int per, int first, int last, const ClusterState& s) {
  std::vector<int> fit;
  for (int n = first; n < last; ++n) {
    if (s.free_on_node(n) >= per) fit.push_back(n);
  }
  if (static_cast<int>(fit.size()) < k) return std::nullopt;
  std::stable_sort(fit.begin(), fit.end(),
                   [&](int x, int y) { return s.free_on_node(x) < s.free_on_node(y); });
  fit.resize(static_cast<size_t>(k));
  std::sort(fit.begin(), fit.end());
  Allocation a;
  for (int n : fit) a.slices.push_back({n, LowestFree(s.free_mask(n), per)});
  return a;
}

class EvenSplitPolicy : public PlacementPolicy {
 public:
  explicit EvenSplitPolicy(std::unique_ptr<PlacementPolicy> inner) : inner_(std::move(inner)) {}

  std::string_view name() const override { return inner_->name(); }
  std::unique_ptr<PlacementPolicy> Clone() const override {
    auto c = inner_->Clone();
    if (!c) return nullptr;
    return std::make_unique<EvenSplitPolicy>(std::move(c));
  }
  std::optional<std::string> NeverFitsReason(const JobSpec& job,
                                             const Topology& topo) const override {
    if (auto why = inner_->NeverFitsReason(job, topo)) return why;
    if (!EvenNodeCounts(job.gpus, topo).empty()) return std::nullopt;
    return fmt::format(
        "asks for {} GPUs, which cannot be split evenly over {} nodes of {} GPUs, and the "
        "cluster's engine (Slurm) gives every node of a job the same number of GPUs",
        job.gpus, topo.num_nodes(), topo.gpus_per_node());
  }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    PlacementResult r = inner_->Place(job, s);
    const auto* p = std::get_if<Placed>(&r);
    if (!p || IsEvenSplit(p->alloc)) return r;
    if (auto a = FindEvenSlot(job.gpus, s)) return Placed{std::move(*a), p->fallback};
    return NoSlotNow{};
  }
  std::string WhyNoSlot(const JobSpec& job, const ClusterState& s) const override {
    // The inner policy's reason, unless it would place the job (unevenly).
    auto trial = inner_->Clone();
    const bool inner_places =
        trial ? std::holds_alternative<Placed>(trial->Place(job, s)) : s.total_free() >= job.gpus;
    if (!inner_places) return inner_->WhyNoSlot(job, s);
    std::string ways;
    for (int k : EvenNodeCounts(job.gpus, s.topology())) {
      ways += ways.empty() ? fmt::format("{} node{} with {} free GPU{} each", k, k == 1 ? "" : "s",
                                         job.gpus / k, job.gpus / k == 1 ? "" : "s")
                           : fmt::format(", or {} with {}", k, job.gpus / k);
    }
    return fmt::format(
        "waits for {} (the cluster's engine, Slurm, gives every node of a job the same number "
        "of GPUs; {} free in all)",
        ways, s.total_free());
  }
  void OnJobFinished(const Job& job, const Topology& topo) override {
    inner_->OnJobFinished(job, topo);
  }
  std::string Note() const override { return inner_->Note(); }

 private:
  std::unique_ptr<PlacementPolicy> inner_;
};

}  // namespace

std::optional<Allocation> FindEvenSlot(int gpus, const ClusterState& s) {
  const Topology& t = s.topology();
  for (int k : EvenNodeCounts(gpus, t)) {
    const int per = gpus / k;
    if (s.nodes_with_free(per) < k) continue;
    // Under one switch when possible.
    for (int sw = 0; sw < t.switches(); ++sw) {
      if (s.free_on_switch(sw) < gpus) continue;
      const int first = sw * t.nodes_per_switch();
      if (auto a = Pick(k, per, first, first + t.nodes_per_switch(), s)) return a;
    }
    if (t.switches() > 1) {
      if (auto a = Pick(k, per, 0, t.num_nodes(), s)) return a;
    }
  }
  return std::nullopt;
}

std::unique_ptr<PlacementPolicy> EvenSplit(std::unique_ptr<PlacementPolicy> inner) {
  return std::make_unique<EvenSplitPolicy>(std::move(inner));
}

}  // namespace tiresias
