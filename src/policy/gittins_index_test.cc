// GittinsIndex (src/policy/gittins_index.h) on a 5-sample distribution worked by hand:
// G(a, D) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a], returned per GPU-second.
// Samples {1, 2, 3, 4, 10} GPU-seconds, passed as GPU-ms (x1000). Also the online history
// (Add with a batch) and the gittins policy's order inside a queue on a temp history file.
#include "policy/gittins_index.h"

#include <gtest/gtest.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

GittinsIndex Five(size_t batch = 100) {
  return GittinsIndex({Seconds(10), Seconds(1), Seconds(4), Seconds(2), Seconds(3)}, batch);
}

TEST(GittinsIndex, QuantileIsTheNearestRank) {
  // Sorted {1, 2, 3, 4, 10} s. Rank ceil(q x 5): q = 0.5 -> 3rd (3 s); 0.2 -> 1st (1 s);
  // 0.21 -> 2nd (2 s); 0.99 and 1 -> 5th (10 s); 0 -> clamped to the 1st.
  const GittinsIndex g = Five();
  EXPECT_EQ(g.Quantile(0.5), Seconds(3));
  EXPECT_EQ(g.Quantile(0.2), Seconds(1));
  EXPECT_EQ(g.Quantile(0.21), Seconds(2));
  EXPECT_EQ(g.Quantile(0.99), Seconds(10));
  EXPECT_EQ(g.Quantile(1), Seconds(10));
  EXPECT_EQ(g.Quantile(0), Seconds(1));
  EXPECT_EQ(GittinsIndex({}).Quantile(0.5), 0);
}

TEST(GittinsIndex, FromZeroWithQuantumThree) {
  // a = 0, D = 3 s: all 5 samples exceed 0; 3 of them (1, 2, 3) end within 3: P = 3/5.
  // E[min(S, 3)] = (1 + 2 + 3 + 3 + 3) / 5 = 12/5. G = (3/5) / (12/5) = 1/4 per GPU-s.
  EXPECT_DOUBLE_EQ(Five().Index(0, Seconds(3)), 0.25);
}

TEST(GittinsIndex, AfterTwoSecondsWithQuantumThree) {
  // a = 2 s: samples above 2 are {3, 4, 10}; S - a = {1, 2, 8}; within D = 3: {1, 2}: P = 2/3.
  // E[min(S - a, 3)] = (1 + 2 + 3) / 3 = 2. G = (2/3) / 2 = 1/3 per GPU-s.
  EXPECT_NEAR(Five().Index(Seconds(2), Seconds(3)), 1.0 / 3.0, 1e-12);
}

TEST(GittinsIndex, SampleEqualToAttainedIsNotAbove) {
  // a = 3 s: 3 is not > 3, so the samples are {4, 10}: S - a = {1, 7}; D = 1: P = 1/2 (1 <= 1
  // counts), E[min] = (1 + 1) / 2 = 1. G = 1/2.
  EXPECT_DOUBLE_EQ(Five().Index(Seconds(3), Seconds(1)), 0.5);
}

TEST(GittinsIndex, QuantumCoveringEverySample) {
  // a = 0, D = 100 s: every sample ends within D: P = 1, E = (1+2+3+4+10)/5 = 4. G = 1/4.
  EXPECT_DOUBLE_EQ(Five().Index(0, Seconds(100)), 0.25);
  // a = 4 s, D = 5 s: only {10} above, 10 - 4 = 6 > 5: P = 0 -> G = 0.
  EXPECT_DOUBLE_EQ(Five().Index(Seconds(4), Seconds(5)), 0.0);
}

TEST(GittinsIndex, BeyondAllSamplesIsZero) {
  EXPECT_DOUBLE_EQ(Five().Index(Seconds(10), Seconds(3)), 0.0);
  EXPECT_DOUBLE_EQ(Five().Index(Seconds(1000), Seconds(3)), 0.0);
  EXPECT_DOUBLE_EQ(GittinsIndex({}).Index(0, Seconds(3)), 0.0);  // no history at all
}

TEST(GittinsIndex, ScaleIsPerGpuSecond) {
  // The same distribution in GPU-ms units gives the index per GPU-second: a tenfold longer
  // distribution and quantum gives a tenfold smaller index.
  GittinsIndex ten({Seconds(10), Seconds(20), Seconds(30), Seconds(40), Seconds(100)});
  EXPECT_DOUBLE_EQ(ten.Index(0, Seconds(30)), 0.025);
}

TEST(GittinsIndex, OnlyGrowsUntilTheNextSampleAndMayDropThere) {
  // NextBreak's promise, which lets the core leave running gittins jobs' keys stale until
  // then (KeyBoundUntil): with the quantum fixed (the last queue) or with service + quantum
  // fixed (a queue's threshold), the index never falls while the service stays below the
  // next sample. By hand, samples {2, 5, 9} s, quantum 6 s: at 0 s, all three above, 2 and 5
  // end within (2 + 5 = 7 s expected) and 9 goes beyond (6 s): 2 / 13 s; at 1.9 s, 2 / 9.2 s
  // (it grew); at 2 s, 2 no longer counts: 5 ends within (3 s), 9 beyond (6 s): 1 / 9 s
  // (it dropped).
  const GittinsIndex by_hand({2000, 5000, 9000});
  EXPECT_EQ(by_hand.NextBreak(0), 2000);
  EXPECT_DOUBLE_EQ(by_hand.Index(0, 6000), 2.0 / 13.0);
  EXPECT_DOUBLE_EQ(by_hand.Index(1900, 6000), 2.0 / 9.2);
  EXPECT_DOUBLE_EQ(by_hand.Index(2000, 6000), 1.0 / 9.0);
  EXPECT_EQ(by_hand.NextBreak(2000), 5000);
  EXPECT_EQ(by_hand.NextBreak(9000), std::nullopt);  // index 0 from here on
  // Random histories, services and quanta, both ways the quantum moves.
  std::mt19937_64 rng(3);
  int drops = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<Service> samples(1 + rng() % 40);
    for (Service& s : samples) s = 1 + static_cast<Service>(rng() % 100000);
    const GittinsIndex g(samples);
    const Service a0 = static_cast<Service>(rng() % 100000);
    const Service quantum = 1 + static_cast<Service>(rng() % 50000);
    const bool fixed = rng() % 2 == 0;  // else the quantum ends at a0 + quantum
    auto index = [&](Service a) { return g.Index(a, fixed ? quantum : a0 + quantum - a); };
    const auto next = g.NextBreak(a0);
    const Service until = next ? *next : a0 + 100000;
    double last = index(a0);
    for (Service a = a0 + 1; a < until && a < a0 + quantum; a += 1 + rng() % 97) {
      const double now = index(a);
      ASSERT_GE(now, last) << "round " << round << ": fell at " << a << " before " << until;
      last = now;
    }
    if (next && *next < a0 + quantum) drops += index(*next) < index(*next - 1);
  }
  EXPECT_GT(drops, 0) << "no drop at a sample: the check cannot tell a late break";
}

TEST(GittinsIndex, OnlineAddMergesEveryBatch) {
  GittinsIndex g = Five(/*batch=*/2);
  EXPECT_EQ(g.size(), 5u);
  g.Add(Seconds(1));
  // Buffered: still the 5 samples and the same index.
  EXPECT_EQ(g.size(), 5u);
  EXPECT_DOUBLE_EQ(g.Index(0, Seconds(3)), 0.25);
  g.Add(Seconds(1));
  // Merged: {1, 1, 1, 2, 3, 4, 10}; a = 0, D = 3: 5 of 7 end within 3: P = 5/7;
  // E = (1+1+1+2+3+3+3)/7 = 14/7. G = 5/14.
  EXPECT_EQ(g.size(), 7u);
  EXPECT_NEAR(g.Index(0, Seconds(3)), 5.0 / 14.0, 1e-12);
}

// The gittins policy: within one queue, the higher index goes first; the quantum is the
// queue's upper threshold minus the job's service in its climb.
TEST(GittinsPolicy, HigherIndexFirstInsideAQueue) {
  auto path = std::filesystem::temp_directory_path() / "tiresias_gittins_history_test.csv";
  {
    std::ofstream out(path);
    out << "duration\n1\n2\n3\n4\n10\n";  // GPU-seconds
  }
  // One queue boundary at 5 GPU-s.
  auto p = MakeOrderingPolicy("gittins", {"history=" + path.string(), "thresholds=5"}, TestFiles());
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
  Scheduler s(*Topology::Create(1, 1, 1), std::move(*p), std::move(*pl));
  // Job 1 runs 0..2000 (2 GPU-s), then job 2 arrives and job 3 too.
  ASSERT_TRUE(s.Submit({.id = JobId(1), .gpus = 1, .submit = 0}, 0).ok());
  s.Schedule(0);
  ASSERT_TRUE(s.Submit({.id = JobId(2), .gpus = 1, .submit = 2000}, 2000).ok());
  // Job 1: a = 2, D = 5 - 2 = 3: G = 1/3 (worked above). Job 2: a = 0, D = 5: among
  // {1,2,3,4,10}, 4 end within 5: P = 4/5, E = (1+2+3+4+5)/5 = 3: G = 4/15 < 1/3.
  // Job 1 keeps running; job 2 waits.
  auto acts = s.Schedule(2000);
  EXPECT_TRUE(acts.empty());
  EXPECT_TRUE(s.Find(JobId(1))->running());
  EXPECT_NE(s.Explain(JobId(2), 2000).where.find("Gittins index 0.266667"), std::string::npos)
      << s.Explain(JobId(2), 2000).where;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tiresias

namespace tiresias {
namespace {

// The public simulator's index sums raw sample values instead of (s - a), so a job that has
// already run is judged as if it started afresh. On samples {3, 4, 10} GPU-s above a = 2 GPU-s
// with D = 3 GPU-s: both count 2 of 3 samples ending within a + D = 5, but
//   ours:      E[min(s - a, D)] = (1 + 2 + 3) / 3 = 2   -> index (2/3) / 2 = 1/3
//   reference: E[min(s, D)]     = (3 + 3 + 3) / 3 = 3   -> index (2/3) / 3 = 2/9
// Ours follows algorithms.md; the reference's value is shown here for comparison.
TEST(GittinsVsReference, OursConditionsOnAttainedService) {
  GittinsIndex g({1000, 2000, 3000, 4000, 10000});
  const double ours = g.Index(2000, 3000);
  EXPECT_NEAR(ours, 1.0 / 3.0, 1e-12);
  const double reference = (2.0 / 3.0) / ((3.0 + 3.0 + 3.0) / 3.0);
  EXPECT_NEAR(reference, 2.0 / 9.0, 1e-12);
  EXPECT_GT(ours, reference);  // ours favours a job close to its likely end
}

// The history bound allows samples up to 3.15e17 GPU-ms; forty of them sum past int64. The
// prefix sums are doubles, so the index stays right instead of wrapping to nonsense (found by
// fuzz/history_fuzzer).
TEST(GittinsIndex, HugeSamplesDoNotOverflowTheSums) {
  const Service big = 315'360'000'000'000'000;
  GittinsIndex g(std::vector<Service>(40, big));
  // From 0 with a quantum covering every sample: 40 ending / (40 x big) GPU-ms, per GPU-s.
  EXPECT_DOUBLE_EQ(g.Index(0, big), 40.0 / (40.0 * static_cast<double>(big)) * 1000);
}

// The hinted index (a running job re-keyed at every pass) is the plain one bit for bit,
// whatever the hint: service climbing slowly, jumping, quanta <= 0, and the history growing
// under a hint (online merges).
TEST(GittinsIndex, HintedIndexIsExactlyThePlainOne) {
  std::mt19937_64 rng(7);
  std::vector<Service> samples;
  std::uniform_int_distribution<Service> sample(1, 500000);
  for (int i = 0; i < 300; ++i) samples.push_back(sample(rng));
  samples.push_back(samples[5]);  // equal samples
  GittinsIndex g(samples, 7);
  std::uniform_int_distribution<Service> step(0, 4000), jump(0, 600000), quantum(-1000, 200000);
  std::uniform_int_distribution<int> coin(0, 19);
  uint64_t hint = 0;
  Service a = 0;
  for (int k = 0; k < 20000; ++k) {
    a = coin(rng) == 0 ? jump(rng) : a + step(rng);
    if (coin(rng) == 0) hint = rng();  // any hint, even nonsense
    if (coin(rng) == 0) g.Add(sample(rng));
    const Service q = quantum(rng);
    const double plain = g.Index(a, q);
    const double hinted = g.Index(a, q, &hint);
    ASSERT_EQ(std::bit_cast<uint64_t>(plain), std::bit_cast<uint64_t>(hinted))
        << "a " << a << " quantum " << q;
  }
}

}  // namespace
}  // namespace tiresias
