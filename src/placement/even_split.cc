// EvenSplit: a placement wrapper for engines that give every node of a job the same number of
// GPUs (see even_split.h).
#include "placement/even_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/strings.h"
#include "placement/registry.h"

namespace tiresias {

bool IsEvenSplit(const Allocation& a) {
  return std::all_of(a.slices.begin(), a.slices.end(),
                     [&](const NodeSlice& x) { return x.count() == a.slices.front().count(); });
}

std::vector<int> EvenNodeCounts(int gpus, const std::vector<int>& node_gpus) {
  std::vector<int> out;
  const int n = static_cast<int>(node_gpus.size());
  for (int k = 1; k <= n && k <= gpus; ++k) {
    if (gpus % k != 0) continue;
    const int per = gpus / k;
    if (std::count_if(node_gpus.begin(), node_gpus.end(), [&](int g) { return g >= per; }) >= k) {
      out.push_back(k);
    }
  }
  return out;
}

namespace {

// Each node's GPUs: as given, or the topology's for every node.
std::vector<int> Sizes(const std::vector<int>& node_gpus, const Topology& t) {
  if (!node_gpus.empty()) return node_gpus;
  return std::vector<int>(static_cast<size_t>(t.num_nodes()), t.gpus_per_node());
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
  EvenSplitPolicy(std::unique_ptr<PlacementPolicy> inner, std::vector<int> node_gpus)
      : inner_(std::move(inner)), node_gpus_(std::move(node_gpus)) {}

  std::string_view name() const override { return inner_->name(); }
  std::unique_ptr<PlacementPolicy> Clone() const override {
    auto c = inner_->Clone();
    if (!c) return nullptr;
    return std::make_unique<EvenSplitPolicy>(std::move(c), node_gpus_);
  }
  // An even slot on some free GPUs is one on more, and FindEvenSlot finds one whenever there
  // is one: monotone when the inner policy is.
  bool pure_and_monotone() const override { return inner_->pure_and_monotone(); }
  std::optional<std::string> NeverFitsReason(const JobSpec& job,
                                             const Topology& topo) const override {
    if (auto why = inner_->NeverFitsReason(job, topo)) return why;
    const std::vector<int> sizes = Sizes(node_gpus_, topo);
    if (!EvenNodeCounts(job.gpus, sizes).empty()) return std::nullopt;
    const bool alike =
        std::all_of(sizes.begin(), sizes.end(), [&](int g) { return g == sizes.front(); });
    std::vector<std::string> each;
    for (int g : sizes) each.push_back(std::to_string(g));
    return fmt::format(
        "asks for {} GPUs, which cannot be split evenly over {} nodes of {} GPUs, and the "
        "cluster's engine (Slurm) gives every node of a job the same number of GPUs",
        job.gpus, sizes.size(), alike ? each.front() : Join(each, ", "));
  }
  PlacementResult Place(const JobSpec& job, const ClusterState& s) override {
    PlacementResult r = inner_->Place(job, s);
    const auto* p = std::get_if<Placed>(&r);
    if (!p || IsEvenSplit(p->alloc)) return r;
    const std::vector<int> sizes = Sizes(node_gpus_, s.topology());
    auto a = FindEvenSlot(job.gpus, s, sizes);
    if (!a) return NoSlotNow{};
    // More nodes than an even split needs at best: for a policy that packs, a compromise, which
    // a preemptive core may improve on by giving victims' GPUs back first (one that places
    // wherever GPUs are free asked for no such preemption).
    const std::vector<int> ks = EvenNodeCounts(job.gpus, sizes);
    const bool spread =
        !inner_->places_whenever_enough_free() && !ks.empty() && a->node_count() > ks.front();
    return Placed{std::move(*a), p->fallback || spread};
  }
  std::string WhyNoSlot(const JobSpec& job, const ClusterState& s) const override {
    // The inner policy's reason, unless it would place the job (unevenly).
    auto trial = inner_->Clone();
    const bool inner_places =
        trial ? std::holds_alternative<Placed>(trial->Place(job, s)) : s.total_free() >= job.gpus;
    if (!inner_places) return inner_->WhyNoSlot(job, s);
    std::string ways;
    for (int k : EvenNodeCounts(job.gpus, Sizes(node_gpus_, s.topology()))) {
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
  std::vector<int> node_gpus_;
};

}  // namespace

std::optional<Allocation> FindEvenSlot(int gpus, const ClusterState& s,
                                       const std::vector<int>& node_gpus) {
  const Topology& t = s.topology();
  for (int k : EvenNodeCounts(gpus, Sizes(node_gpus, t))) {
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

std::unique_ptr<PlacementPolicy> EvenSplit(std::unique_ptr<PlacementPolicy> inner,
                                           std::vector<int> node_gpus) {
  return std::make_unique<EvenSplitPolicy>(std::move(inner), std::move(node_gpus));
}

}  // namespace tiresias
