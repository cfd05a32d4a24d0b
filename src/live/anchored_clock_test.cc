// AnchoredClock: wall time at the start, advanced by the steady clock only. Found by a review:
// serve read the wall clock at every step, so a step back of 1 h kept a job that ignores
// SIGTERM alive for the hour, and a step forward of 1 h for 3 s timed out a job with a 10
// minute limit after 25 s of running.
#include "live/anchored_clock.h"

#include <gtest/gtest.h>

namespace tiresias {
namespace {

TEST(AnchoredClock, WallStepsWhileRunningDoNotMoveIt) {
  int64_t wall = 1'000'000, steady = 50;
  AnchoredClock clock([&] { return wall; }, [&] { return steady; });
  EXPECT_EQ(clock(), 1'000'000);
  steady += 2'000;
  wall += 2'000;
  EXPECT_EQ(clock(), 1'002'000);
  wall -= 3'600'000;  // stepped back an hour: time still runs
  steady += 1'000;
  EXPECT_EQ(clock(), 1'003'000);
  wall += 7'200'000;  // forward an hour past the truth: nothing ages
  steady += 1'000;
  EXPECT_EQ(clock(), 1'004'000);
  // A new clock (serve restarted) reads the wall clock again.
  AnchoredClock after([&] { return wall; }, [&] { return steady; });
  EXPECT_EQ(after(), wall);
}

}  // namespace
}  // namespace tiresias
