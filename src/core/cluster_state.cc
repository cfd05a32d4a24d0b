// Which GPUs are free right now, per node, with running totals per switch and cluster.
#include "core/cluster_state.h"

#include <bit>
#include <cassert>

namespace tiresias {

ClusterState::ClusterState(const Topology& topo)
    : topo_(topo),
      full_mask_(topo.gpus_per_node() == 64 ? ~uint64_t{0}
                                            : (uint64_t{1} << topo.gpus_per_node()) - 1),
      free_(topo.num_nodes(), full_mask_),
      free_count_(topo.num_nodes(), topo.gpus_per_node()),
      switch_free_(topo.switches(), topo.gpus_per_switch()),
      switch_of_(topo.num_nodes()),
      total_free_(topo.total_gpus()),
      usable_(topo.num_nodes(), full_mask_),
      total_usable_(topo.total_gpus()),
      nodes_by_free_(topo.gpus_per_node() + 1, 0) {
  nodes_by_free_[topo.gpus_per_node()] = topo.num_nodes();
  for (int n = 0; n < topo.num_nodes(); ++n) switch_of_[n] = topo.switch_of(n);
}

void ClusterState::Adjust(int node, uint64_t mask, bool to_free) {
  if (logging_) log_.push_back({node, mask, to_free});
  int n = std::popcount(mask);
  if (to_free) {
    assert((free_[node] & mask) == 0);
    free_[node] |= mask;
  } else {
    assert((free_[node] & mask) == mask);
    free_[node] &= ~mask;
    n = -n;
  }
  --nodes_by_free_[free_count_[node]];
  free_count_[node] += n;
  ++nodes_by_free_[free_count_[node]];
  switch_free_[switch_of_[node]] += n;
  total_free_ += n;
}

void ClusterState::Take(std::span<const NodeSlice> slices) {
  for (const auto& s : slices) Adjust(s.node, s.gpus, false);
}

void ClusterState::Give(std::span<const NodeSlice> slices) {
  for (const auto& s : slices) Adjust(s.node, s.gpus, true);
}

void ClusterState::GiveAll(std::span<const NodeSlice> slices) {
  if (staged_.empty()) staged_.assign(free_.size(), 0);
  for (const NodeSlice& s : slices) {
    if (staged_[s.node] == 0) touched_.push_back(s.node);
    assert((staged_[s.node] & s.gpus) == 0);
    staged_[s.node] |= s.gpus;
  }
  for (int node : touched_) {
    Adjust(node, staged_[node], true);
    staged_[node] = 0;
  }
  touched_.clear();
}

void ClusterState::UndoLog() {
  logging_ = false;
  for (auto c = log_.rbegin(); c != log_.rend(); ++c) Adjust(c->node, c->mask, !c->to_free);
  log_.clear();
}

void ClusterState::SetUsable(int node, uint64_t mask) {
  EndLog();  // usable_ is not logged: a trial cannot be undone past this
  mask &= full_mask_;
  const uint64_t lost = usable_[node] & ~mask, gained = mask & ~usable_[node];
  if (lost) Adjust(node, lost, false);  // asserts they were free
  if (gained) Adjust(node, gained, true);
  total_usable_ += std::popcount(gained) - std::popcount(lost);
  usable_[node] = mask;
}

bool ClusterState::AllFree(std::span<const NodeSlice> slices) const {
  for (const auto& s : slices) {
    if ((free_[s.node] & s.gpus) != s.gpus) return false;
  }
  return true;
}

}  // namespace tiresias
