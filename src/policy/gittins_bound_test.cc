// GittinsIndex::LeastIndexAhead (src/policy/gittins_index.h): the bound a running gittins
// job's stored key keeps while its service climbs. Worked by hand on samples {1, 2, 3, 4, 10}
// GPU-seconds, then checked against a brute force on random histories: the value is the least
// index over every service in [a, until), and `until` is where the rule says it stops.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>

#include "policy/gittins_index.h"

namespace tiresias {
namespace {

GittinsIndex Five() {
  return GittinsIndex({Seconds(10), Seconds(1), Seconds(4), Seconds(2), Seconds(3)});
}

// A fixed quantum D = 3 s from a = 0 (the last queue's rule). G(x) just past each sample:
//   a = 0: 1/4 (gittins_index_test.cc);
//   x = 1: above {2,3,4,10} -> {1,2,3,9}: 3 of 4 within 3, E = (1+2+3+3)/4 = 9/4 -> 1/3;
//   x = 2: above {3,4,10} -> {1,2,8}: 2 of 3, E = (1+2+3)/3 = 2 -> 1/3;
//   x = 3: above {4,10} -> {1,7}: 1 of 2, E = (1+3)/2 = 2 -> 1/4;
//   x = 4: above {10} -> {6}: none within 3 -> 0; x = 10: nothing above -> 0.
TEST(GittinsBound, FixedQuantumStopsWhereTheIndexFallsBelowTheFloor) {
  for (bool tabled : {false, true}) {
    GittinsIndex g = Five();
    if (tabled) g.SetRules({{.to_end = false, .param = Seconds(3)}});
    uint64_t hint = 0;
    std::optional<Service> until;
    // Slack 0.5: floor 1/8. Samples 1, 2, 3 stay at or above it (1/3, 1/3, 1/4); 4 falls to
    // 0: the bound 1/4 holds until the service reaches 4 s.
    EXPECT_DOUBLE_EQ(g.LeastIndexAhead(0, Seconds(3), false, 0.5, 0, 100, &hint, &until), 0.25);
    EXPECT_EQ(until, Seconds(4)) << tabled;
    // Slack 0: floor 1/4 itself; sample 3 (exactly 1/4) still counts, 4 does not.
    EXPECT_DOUBLE_EQ(g.LeastIndexAhead(0, Seconds(3), false, 0, 0, 100, &hint, &until), 0.25);
    EXPECT_EQ(until, Seconds(4));
    // Slack 1: floor 0, every sample counts; the least is 0, for good.
    EXPECT_DOUBLE_EQ(g.LeastIndexAhead(0, Seconds(3), false, 1, 0, 100, &hint, &until), 0.0);
    EXPECT_EQ(until, std::nullopt);
    // From 1 s with slack 0.1 (floor 0.3): 2 s gives 1/3, 3 s gives 1/4 < 0.3: until 3 s.
    EXPECT_NEAR(g.LeastIndexAhead(Seconds(1), Seconds(3), false, 0.1, 0, 100, &hint, &until),
                1.0 / 3.0, 1e-12);
    EXPECT_EQ(until, Seconds(3));
  }
  // A floor raised by another index: at_least 0.3 from a = 0 (G = 1/4 <= 0.3) keeps the floor
  // at 1/4 itself (a job at or after the cut: tight); from 1 s (G = 1/3 > 0.3, slack 1) the
  // floor is 0.3: 2 s (1/3) counts, 3 s (1/4) does not.
  {
    GittinsIndex g = Five();
    uint64_t hint = 0;
    std::optional<Service> until;
    EXPECT_DOUBLE_EQ(g.LeastIndexAhead(0, Seconds(3), false, 1, 0.3, 100, &hint, &until), 0.25);
    EXPECT_EQ(until, Seconds(4));
    EXPECT_NEAR(g.LeastIndexAhead(Seconds(1), Seconds(3), false, 1, 0.3, 100, &hint, &until),
                1.0 / 3.0, 1e-12);
    EXPECT_EQ(until, Seconds(3));
  }
  // Untabled, at most two samples are looked at: 1 and 2 s; until the third, 3 s.
  uint64_t hint = 0;
  std::optional<Service> until;
  EXPECT_DOUBLE_EQ(Five().LeastIndexAhead(0, Seconds(3), false, 1, 0, 2, &hint, &until), 0.25);
  EXPECT_EQ(until, Seconds(3));
}

// A queue that ends at 3 s, from a = 0 (quantum D(x) = 3 - x):
//   a = 0, D = 3: 1/4; x = 1, D = 2: {1,2,3,9}: 2 of 4 within 2, E = (1+2+2+2)/4 = 7/4 -> 2/7;
//   x = 2, D = 1: {1,2,8}: 1 of 3, E = (1+1+1)/3 = 1 -> 1/3; the sample at 3 s is the queue's
//   end (the job is demoted there and keyed again): not looked at, and the bound holds until.
TEST(GittinsBound, QueueEndStopsTheLook) {
  for (bool tabled : {false, true}) {
    GittinsIndex g = Five();
    if (tabled) g.SetRules({{.to_end = true, .param = Seconds(3)}});
    uint64_t hint = 0;
    std::optional<Service> until;
    EXPECT_DOUBLE_EQ(g.LeastIndexAhead(0, Seconds(3), true, 0.5, 0, 100, &hint, &until), 0.25);
    EXPECT_EQ(until, Seconds(3)) << tabled;
    // From 1 s (D = 2): 2/7, then 1/3 at 2 s; the least is 2/7.
    EXPECT_NEAR(g.LeastIndexAhead(Seconds(1), Seconds(2), true, 0.5, 0, 100, &hint, &until),
                2.0 / 7.0, 1e-12);
    EXPECT_EQ(until, Seconds(3));
  }
}

// The rule's brute force: every distinct sample above a (below the end, to_end) in order, its
// index computed afresh, stopping at the first below the floor or after max_breaks (untabled).
struct Expected {
  double least;
  std::optional<Service> until;
};
Expected BruteForce(const std::vector<Service>& samples, Service a, Service quantum, bool to_end,
                    double slack, double at_least, int max_breaks, bool tabled) {
  GittinsIndex g(samples);
  const std::set<Service> distinct(samples.begin(), samples.end());
  Expected e{g.Index(a, quantum), std::nullopt};
  double floor = e.least;  // at or below at_least: the index now
  if (e.least > at_least) floor = std::max(e.least * (1 - slack), at_least);
  int k = 0;
  for (auto it = distinct.upper_bound(a); it != distinct.end(); ++it, ++k) {
    const Service s = *it;
    if ((to_end && s >= a + quantum) || (!tabled && k == max_breaks)) {
      e.until = s;
      break;
    }
    const double gs = g.Index(s, to_end ? a + quantum - s : quantum);
    if (gs < floor) {
      e.until = s;
      break;
    }
    e.least = std::min(e.least, gs);
  }
  return e;
}

TEST(GittinsBound, MatchesTheBruteForceAndBoundsEveryServiceUntilThen) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> size(1, 60), coin(0, 3), breaks(1, 12);
  std::uniform_int_distribution<Service> sample(1, 400);
  const double slacks[] = {0, 0.05, 0.3, 1};
  for (int round = 0; round < 400; ++round) {
    std::vector<Service> samples;
    for (int i = size(rng); i > 0; --i) samples.push_back(sample(rng));
    if (coin(rng) == 0) samples.push_back(samples[0]);  // equal samples
    const Service a = std::uniform_int_distribution<Service>(0, 420)(rng);
    const Service quantum = std::uniform_int_distribution<Service>(1, 300)(rng);
    const bool to_end = coin(rng) < 2, tabled = coin(rng) < 2;
    const double slack = slacks[coin(rng)];
    const int max_breaks = breaks(rng);
    GittinsIndex g(samples);
    // A table for another rule is not used.
    if (tabled)
      g.SetRules({{.to_end = !to_end, .param = 1}, {to_end, to_end ? a + quantum : quantum}});
    uint64_t hint = rng() % 64;  // any hint
    std::optional<Service> until;
    // A floor from another job's index (the budget cut's), or none.
    const double at_least = coin(rng) == 0 ? 0 : g.Index(sample(rng), quantum);
    const double least =
        g.LeastIndexAhead(a, quantum, to_end, slack, at_least, max_breaks, &hint, &until);
    const Expected e = BruteForce(samples, a, quantum, to_end, slack, at_least, max_breaks, tabled);
    ASSERT_EQ(least, e.least) << "round " << round;
    ASSERT_EQ(until, e.until) << "round " << round;
    // The bound: no service in [a, until) (and before the queue's end) has a lower index.
    const Service stop = std::min(until.value_or(500), to_end ? a + quantum : Service{500});
    for (Service x = a; x < stop; ++x) {
      ASSERT_GE(g.Index(x, to_end ? a + quantum - x : quantum), least)
          << "round " << round << " x " << x;
    }
  }
}

// The tables follow the history: after a merge they are built again from the new samples.
TEST(GittinsBound, TablesFollowAMerge) {
  GittinsIndex g({Seconds(1), Seconds(2), Seconds(3), Seconds(4)}, /*batch=*/1);
  g.SetRules({{.to_end = false, .param = Seconds(3)}});
  uint64_t hint = 0;
  std::optional<Service> until;
  (void)g.LeastIndexAhead(0, Seconds(3), false, 1, 0, 100, &hint, &until);  // built
  ASSERT_TRUE(g.Add(Seconds(10)));  // now {1, 2, 3, 4, 10}: the first test's values
  EXPECT_DOUBLE_EQ(g.LeastIndexAhead(0, Seconds(3), false, 0.5, 0, 100, &hint, &until), 0.25);
  EXPECT_EQ(until, Seconds(4));
}

}  // namespace
}  // namespace tiresias
