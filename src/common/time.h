// Integer time. All times are milliseconds since an epoch chosen by the driver
// (trace start in the simulator, Unix epoch in the daemon). Service is GPU-milliseconds.
// Never floating point, so events land exactly where they are due.
#pragma once

#include <cstdint>
#include <limits>

namespace tiresias {

using Time = int64_t;      // ms since the driver's epoch
using Duration = int64_t;  // ms
using Service = int64_t;   // GPU-ms

inline constexpr Time kNever = std::numeric_limits<Time>::max();
inline constexpr Duration kMsPerSecond = 1000;
// The longest span an input may give, in seconds: ten years. Readers refuse a job duration or
// a submit time beyond it (a typo, not a workload), so sums of many such values in ms, times
// the GPUs of the largest cluster, still fit in 64 bits.
inline constexpr int64_t kMaxInputSeconds = 315'360'000;

constexpr Duration Seconds(int64_t s) {
  return s * kMsPerSecond;
}
constexpr double ToSeconds(int64_t ms) {
  return static_cast<double>(ms) / kMsPerSecond;
}
// ceil(a / b) for a >= 0, b > 0.
constexpr int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace tiresias
