// How fast a job progresses on a given allocation, relative to a packed placement (1.0).
// The core asks it once per start; the simulator's executor turns it into completion times.
// Implementations are pure functions of their inputs.
#pragma once

#include "core/allocation.h"
#include "core/job.h"
#include "core/topology.h"

namespace tiresias {

class SpeedModel {
 public:
  virtual ~SpeedModel() = default;
  // In (0, 1]: 1.0 = packed speed.
  virtual double Rate(const JobSpec& job, const Allocation& alloc, const Topology& topo) const = 0;
  // False when the model knows nothing of the job's model and treats it as insensitive.
  virtual bool Knows(const JobSpec& /*job*/) const { return true; }
};

}  // namespace tiresias
