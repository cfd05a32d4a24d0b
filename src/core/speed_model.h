// How fast a job progresses on a given allocation, relative to a packed placement (1.0).
// The core asks it once per start; the simulator's executor turns it into completion times.
// Implementations are pure functions of their inputs.
#pragma once

#include "core/allocation.h"
#include "core/job.h"
#include "core/topology.h"

namespace tiresias {

// The slowest rate a speed model gives: a job's remaining work (at most ten years) divided
// by it still fits in 64-bit ms.
inline constexpr double kMinRate = 1e-6;

class SpeedModel {
 public:
  virtual ~SpeedModel() = default;
  // In [kMinRate, 1]: 1.0 = packed speed.
  virtual double Rate(const JobSpec& job, const Allocation& alloc, const Topology& topo) const = 0;
  // False when the model knows nothing of the job's model and treats it as insensitive.
  virtual bool Knows(const JobSpec& /*job*/) const { return true; }
};

}  // namespace tiresias
