// Which GPUs are free right now, per node, with running totals per switch and cluster.
// Owned by the Scheduler; placement policies read it through a const reference.
//
// Capacity: a GPU may be unusable for a while (its node is down, or something outside the
// scheduler holds it). An unusable GPU is neither free nor held: placement never sees it free,
// and the totals of usable GPUs (total_usable) exclude it. All GPUs start usable.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/allocation.h"
#include "core/topology.h"

namespace tiresias {

class ClusterState {
 public:
  explicit ClusterState(const Topology& topo);

  const Topology& topology() const { return topo_; }
  uint64_t free_mask(int node) const { return free_[node]; }
  int free_on_node(int node) const { return free_count_[node]; }
  int free_on_switch(int sw) const { return switch_free_[sw]; }
  int total_free() const { return total_free_; }
  // The GPUs of `node` that may be used now (a subset of the node's GPUs), and their total.
  uint64_t usable_mask(int node) const { return usable_[node]; }
  int total_usable() const { return total_usable_; }
  // Every GPU of a node, as a mask.
  uint64_t full_mask() const { return full_mask_; }
  // Nodes with at least `k` free GPUs (0 <= k <= GPUs per node); O(GPUs per node).
  int nodes_with_free(int k) const {
    int n = 0;
    for (int f = k; f < static_cast<int>(nodes_by_free_.size()); ++f) n += nodes_by_free_[f];
    return n;
  }

  // Marks the GPUs of the slices (of an allocation) busy / free. Callers guarantee they were
  // free / busy.
  void Take(std::span<const NodeSlice> slices);
  void Give(std::span<const NodeSlice> slices);
  bool AllFree(std::span<const NodeSlice> slices) const;
  void Take(const Allocation& a) { Take(std::span(a.slices)); }
  void Give(const Allocation& a) { Give(std::span(a.slices)); }
  bool AllFree(const Allocation& a) const { return AllFree(std::span(a.slices)); }
  // Gives back the slices of many allocations at once (the victims of a pass): one change
  // per node touched. The slices must be disjoint and busy.
  void GiveAll(std::span<const NodeSlice> slices);
  // Makes exactly `mask` (clipped to the node's GPUs) usable on `node`. GPUs that become
  // unusable must be free (the caller stops their jobs first); GPUs that become usable are
  // free.
  void SetUsable(int node, uint64_t mask);

  // A log for undoing a trial without reading its allocations again (a preemptive pass gives
  // every victim's GPUs back to ask whether a job can be placed at all, and most such asks
  // fail). After BeginLog(), every Take and Give is logged until UndoLog() reverts them,
  // newest first, or EndLog() keeps them; logged() counts them (0 when not logging).
  // SetUsable ends a log and keeps its changes: it is not one to undo (usable_ is not
  // logged), so a caller that finds logged() other than what it gave sees the trial spoilt.
  void BeginLog() {
    log_.clear();
    logging_ = true;
  }
  bool logging() const { return logging_; }
  size_t logged() const { return log_.size(); }
  void UndoLog();
  void EndLog() {
    log_.clear();
    logging_ = false;
  }

 private:
  struct Change {
    int node;
    uint64_t mask;
    bool to_free;
  };
  void Adjust(int node, uint64_t mask, bool to_free);
  Topology topo_;
  uint64_t full_mask_;
  std::vector<uint64_t> free_;
  std::vector<int> free_count_;
  std::vector<int> switch_free_;
  std::vector<int> switch_of_;  // node -> its switch (no division on the hot path)
  int total_free_;
  std::vector<uint64_t> usable_;
  int total_usable_;
  std::vector<int> nodes_by_free_;  // free GPU count -> number of nodes with exactly that
  std::vector<Change> log_;         // kept with its capacity from trial to trial
  std::vector<uint64_t> staged_;    // GiveAll's GPUs per node (all zero between calls)
  std::vector<int> touched_;        // GiveAll's nodes
  bool logging_ = false;
};

}  // namespace tiresias
