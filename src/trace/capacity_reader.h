// Capacity changes for the simulator (`sim --capacity FILE`): from a time on, a node has only
// so many usable GPUs (a node down, GPUs held by something else), and later gets them back.
// The file is CSV with a header `time,node,gpus`: seconds on the simulation's clock (the
// jobs' submit times; with --from-day, since the window's start), the node's index in the
// topology (0-based), and how many of its GPUs are usable from then on (0 = down, the node's
// GPU count = whole again).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/topology.h"

namespace tiresias {

struct CapacityChange {
  Time at = 0;  // core ms
  int node = 0;
  int gpus = 0;  // usable from `at` on
};

// Rows in time order (a stable sort: rows of one instant keep the file's order). A bad row is
// InvalidArgument naming `file:line` and the problem (a node or GPU count outside `topo`).
StatusOr<std::vector<CapacityChange>> ReadCapacityChanges(const std::string& path,
                                                          const Topology& topo);

}  // namespace tiresias
