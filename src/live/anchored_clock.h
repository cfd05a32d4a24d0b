// The daemon's clock: the wall clock read once, then advanced by a steady (monotonic) clock.
// A step of the wall clock while serve runs (NTP, an operator's `date -s`) then neither freezes
// scheduling (a step back: a grace deadline an hour away) nor ages every job at once (a step
// forward: time limits hit, service attained that was never run). A restart reads the wall
// clock again, so the time serve was down counts as it really passed.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

namespace tiresias {

class AnchoredClock {
 public:
  // Both in milliseconds: `wall` since the epoch, `steady` from any fixed point.
  AnchoredClock(std::function<int64_t()> wall, std::function<int64_t()> steady)
      : steady_(std::move(steady)), wall0_(wall()), steady0_(steady_()) {}
  int64_t operator()() const { return wall0_ + (steady_() - steady0_); }

 private:
  std::function<int64_t()> steady_;
  int64_t wall0_, steady0_;
};

}  // namespace tiresias
