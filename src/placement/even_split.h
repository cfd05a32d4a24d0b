// Even splits, for an engine that gives every node of a job the same number of GPUs (Slurm:
// a job's --gres is per node). Such an engine cannot run a placement such as 4+2: it holds 4+4,
// and the 2 GPUs beyond the placement are taken from whatever job the core put beside it, which
// is then evicted (and, when that was the job's own surplus, the job evicts itself in a loop).
//
// EvenSplit wraps a placement policy: the inner policy's choice stands when it is on one node
// or gives each of its nodes the same count; otherwise the job gets the fewest nodes that split
// it evenly (G/k GPUs on each of k nodes, k dividing G), under one switch when possible, on the
// nodes that will be left with the fewest free GPUs. A job no even split can ever hold (7 GPUs
// on nodes of 4) never fits, with that reason. Pure: no clock, no I/O.
#pragma once

#include <memory>
#include <optional>

#include "core/allocation.h"
#include "core/cluster_state.h"
#include "core/placement_policy.h"

namespace tiresias {

std::unique_ptr<PlacementPolicy> EvenSplit(std::unique_ptr<PlacementPolicy> inner);

// Every node of the allocation holds the same number of its GPUs.
bool IsEvenSplit(const Allocation& a);
// An even allocation of `gpus` GPUs on the free GPUs of `s`; nullopt when there is none now.
std::optional<Allocation> FindEvenSlot(int gpus, const ClusterState& s);

}  // namespace tiresias
