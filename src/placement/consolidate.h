// The YARN-CS consolidation rule, shared by `consolidate` and the profile-based placement:
// a job that fits a node goes on one node (the first with room); a larger job takes
// floor(G / GPUs per node) idle nodes plus one node with room for the rest, all under one
// switch (the first switch where that works). No slot otherwise, even when enough
// scattered GPUs are free.
#pragma once

#include <optional>
#include <string>

#include "core/allocation.h"
#include "core/cluster_state.h"

namespace tiresias {

std::optional<Allocation> FindPackedSlot(int gpus, const ClusterState& s);
// Why a `gpus`-GPU job finds no packed slot on `s`, as a sentence.
std::string PackedSlotWait(int gpus, const ClusterState& s);

}  // namespace tiresias
