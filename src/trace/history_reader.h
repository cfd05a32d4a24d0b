// Reads a history of job GPU-times (a CSV with a `duration` column in GPU-seconds, like the
// public simulator's yarn-gput*.csv) for the Gittins index.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/topology.h"

namespace tiresias {

// Samples in GPU-ms; each must be in [0, kMaxGpuSeconds] GPU-seconds (core/topology.h).
StatusOr<std::vector<Service>> ReadGpuTimeHistory(const std::string& path);

}  // namespace tiresias
