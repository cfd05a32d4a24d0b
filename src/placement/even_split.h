// Even splits, for an engine that gives every node of a job the same number of GPUs (Slurm:
// a job's --gres is per node). Such an engine cannot run a placement such as 4+2: it holds 4+4,
// and the 2 GPUs beyond the placement are taken from whatever job the core put beside it, which
// is then evicted (and, when that was the job's own surplus, the job evicts itself in a loop).
//
// EvenSplit wraps a placement policy: the inner policy's choice stands when it is on one node
// or gives each of its nodes the same count; otherwise the job gets the fewest nodes that split
// it evenly (G/k GPUs on each of k nodes, k dividing G), under one switch when possible, on the
// nodes that will be left with the fewest free GPUs (for a policy that packs, a fallback, as
// the preemptive core sees it, when that takes more nodes than the fewest an even split
// needs). A job no even split can ever hold (7 GPUs on nodes of 4) never fits, with that
// reason. Pure: no clock, no I/O.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/allocation.h"
#include "core/cluster_state.h"
#include "core/placement_policy.h"

namespace tiresias {

// `node_gpus`: each node's GPUs, when they differ (a Slurm partition's nodes; the topology has
// the largest count, the others' missing GPUs never usable); empty: the topology's for all.
std::unique_ptr<PlacementPolicy> EvenSplit(std::unique_ptr<PlacementPolicy> inner,
                                           std::vector<int> node_gpus = {});

// Every node of the allocation holds the same number of its GPUs.
bool IsEvenSplit(const Allocation& a);
// The numbers of nodes k an even split of `gpus` may use on nodes of these sizes (k divides
// `gpus`, and at least k nodes have gpus / k), fewest first; empty: none ever.
std::vector<int> EvenNodeCounts(int gpus, const std::vector<int>& node_gpus);
// An even allocation of `gpus` GPUs on the free GPUs of `s` (fewest nodes first); nullopt
// when there is none now.
std::optional<Allocation> FindEvenSlot(int gpus, const ClusterState& s,
                                       const std::vector<int>& node_gpus);

}  // namespace tiresias
