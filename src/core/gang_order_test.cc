// GangOrder against a std::map and brute force: the same order, first entry, lower bounds,
// first fitting job at every position and smallest gang, over seeded random inserts and
// erases.
#include "core/gang_order.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace tiresias {
namespace {

SortKey KeyOf(int64_t k0, int64_t id) {
  return SortKey{.k0 = k0, .id = JobId(id)};
}

struct Model {
  std::map<SortKey, std::pair<uint32_t, int>> m;  // key -> slot, gpus
};

void ExpectSame(const GangOrder& g, const Model& model, std::mt19937_64& rng) {
  ASSERT_EQ(g.size(), model.m.size());
  ASSERT_EQ(g.empty(), model.m.empty());
  int min = 0;
  auto it = g.begin();
  for (const auto& [key, v] : model.m) {
    ASSERT_NE(it, g.end());
    EXPECT_EQ(it->first, key);
    EXPECT_EQ(it->second, v.first);
    EXPECT_EQ(it.gpus(), v.second);
    min = min == 0 ? v.second : std::min(min, v.second);
    ++it;
  }
  EXPECT_EQ(it, g.end());
  EXPECT_EQ(g.MinGpus(), min);
  // Probes: keys present and absent, every budget from 0 to beyond the largest gang.
  std::uniform_int_distribution<int64_t> k0(-1, 60), id(0, 3);
  for (int probe = 0; probe < 20; ++probe) {
    const SortKey k = KeyOf(k0(rng), id(rng));
    auto lb = g.lower_bound(k);
    auto mlb = model.m.lower_bound(k);
    ASSERT_EQ(lb == g.end(), mlb == model.m.end());
    if (mlb != model.m.end()) {
      EXPECT_EQ(lb->first, mlb->first);
    }
    for (int budget = 0; budget <= 9; ++budget) {
      auto want = mlb;
      while (want != model.m.end() && want->second.second > budget) ++want;
      auto got = g.NextFitting(lb, budget);
      ASSERT_EQ(got == g.end(), want == model.m.end()) << "budget " << budget;
      if (want != model.m.end()) {
        EXPECT_EQ(got->first, want->first) << "budget " << budget;
      }
    }
  }
}

TEST(GangOrderTest, AgreesWithAMapAndBruteForce) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    std::mt19937_64 rng(seed);
    GangOrder g;
    Model model;
    std::uniform_int_distribution<int64_t> k0(0, 50), id(0, 3);
    std::uniform_int_distribution<int> gpus(1, 8), op(0, 9);
    for (int step = 0; step < 600; ++step) {
      const SortKey k = KeyOf(k0(rng), id(rng));
      if (op(rng) < 6) {
        if (model.m.contains(k)) continue;  // keys are unique, as the core's are
        const int n = gpus(rng);
        g.emplace(k, static_cast<uint32_t>(step), n);
        model.m.emplace(k, std::make_pair(static_cast<uint32_t>(step), n));
      } else {
        g.erase(k);  // absent keys are ignored
        model.m.erase(k);
      }
      if (step % 25 == 0) ExpectSame(g, model, rng);
    }
    ExpectSame(g, model, rng);
    GangOrder other;
    other.swap(g);
    EXPECT_TRUE(g.empty());
    ExpectSame(other, model, rng);
    other.clear();
    EXPECT_TRUE(other.empty());
    EXPECT_EQ(other.begin(), other.end());
    EXPECT_EQ(other.MinGpus(), 0);
  }
}

TEST(GangOrderTest, IteratorsSurviveOtherErasures) {
  // The pass erases the job it starts while holding an iterator to the next one.
  GangOrder g;
  for (int i = 0; i < 100; ++i) g.emplace(KeyOf(i, 0), static_cast<uint32_t>(i), 1 + i % 4);
  auto it = g.begin();
  int seen = 0;
  while (it != g.end()) {
    const SortKey k = it->first;
    ++it;
    g.erase(k);
    ++seen;
  }
  EXPECT_EQ(seen, 100);
  EXPECT_TRUE(g.empty());
}

TEST(GangOrderTest, NextFittingSkipsLargeGangs) {
  // Gangs 8, 8, 1, 8, 2 in key order: with 2 GPUs left the first fit is the 1-GPU job, then
  // (from the job after it) the 2-GPU one; with 0 none.
  GangOrder g;
  const int gangs[] = {8, 8, 1, 8, 2};
  for (int i = 0; i < 5; ++i) g.emplace(KeyOf(i, 0), static_cast<uint32_t>(i), gangs[i]);
  auto first = g.NextFitting(g.begin(), 2);
  ASSERT_NE(first, g.end());
  EXPECT_EQ(first->second, 2u);
  auto second = g.NextFitting(++first, 2);
  ASSERT_NE(second, g.end());
  EXPECT_EQ(second->second, 4u);
  EXPECT_EQ(g.NextFitting(g.begin(), 0), g.end());
}

}  // namespace
}  // namespace tiresias
