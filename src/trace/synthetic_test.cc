// The synthetic workload (src/trace/synthetic.h): the same seed gives the same jobs bit for bit
// (pinned rows: a change of generator, table or arithmetic shows here, and these rows are what
// any standard library must give), our logarithm against the library's, the drawn mix,
// durations and offered load against the figures they were fitted to, the CSV writer against
// the in-memory jobs, and the embedded Philly figures against a re-fit of the file.
#include "trace/synthetic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "test_util.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

struct Row {
  int64_t id;
  int gpus;
  int64_t submit_s, duration_s;
  std::string model, vc;
};

TEST(Synthetic, SameSeedSameJobsPinned) {
  // Seed 1, load 1 on 64 GPUs. Regenerating these rows with another standard library or
  // compiler must give the same numbers: xoshiro256** from splitmix64, our own logarithm, no
  // std distributions, no FMA contraction.
  const std::vector<Row> want = {
      {0, 1, 0, 1242, "resnet101", "6214e9"},     {1, 1, 1681, 68, "resnet101", "11cb48"},
      {2, 1, 2453, 1452, "vgg16", "11cb48"},      {3, 8, 4043, 117825, "vgg19", "6214e9"},
      {4, 1, 10294, 1061, "resnet152", "6214e9"}, {5, 1, 14805, 1094, "alexnet", "6214e9"},
  };
  // 1242 + 68 + 1452 + 8 x 117825 + 1061 + 1094 = 947,517 GPU-s offered at load 1 to 64 GPUs
  // span 947,517 / 64 = 14,804.95 s: the arrivals are stretched to end there (14,805).
  const auto jobs = SyntheticPhillyLike({.jobs = 6, .seed = 1, .load = 1.0, .cluster_gpus = 64});
  ASSERT_EQ(jobs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(jobs[i].id, JobId(want[i].id));
    EXPECT_EQ(jobs[i].gpus, want[i].gpus);
    EXPECT_EQ(jobs[i].submit, Seconds(want[i].submit_s));
    EXPECT_EQ(jobs[i].duration, Seconds(want[i].duration_s));
    EXPECT_EQ(jobs[i].model, want[i].model);
    EXPECT_EQ(jobs[i].vc, want[i].vc);
  }
  // Another seed, other jobs.
  EXPECT_NE(
      SyntheticPhillyLike({.jobs = 6, .seed = 2, .load = 1.0, .cluster_gpus = 64})[0].duration,
      jobs[0].duration);
}

TEST(Synthetic, GeneratorAndLogarithmArePinned) {
  PortableRng r(42);
  EXPECT_EQ(r.Next(), 1546998764402558742ULL);
  EXPECT_EQ(r.Next(), 6990951692964543102ULL);
  EXPECT_EQ(r.Next(), 12544586762248559009ULL);
  for (double x : {2.0, 0.5, 1e-300, 0.999999, 10.0, 3.0, 0.123}) {
    EXPECT_NEAR(PortableLog(x), std::log(x), 4e-16 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  EXPECT_EQ(PortableLog(1.0), 0.0);
  PortableRng b(7);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(b.Below(3), 3u);
}

TEST(Synthetic, DrawsTheFittedMixDurationsAndLoad) {
  // 100,000 jobs on 512 GPUs at load 0.9: the GPU-size shares follow the Philly counts (93.2%
  // one GPU: 76,627 of 82,247), the 1-GPU median duration is near the fitted 1117 s, and the
  // offered load over the arrival span is near 0.9.
  const auto jobs =
      SyntheticPhillyLike({.jobs = 100000, .seed = 3, .load = 0.9, .cluster_gpus = 512});
  std::map<int, int> sizes;
  std::vector<double> one;
  double gpu_s = 0;
  for (const auto& j : jobs) {
    ++sizes[j.gpus];
    if (j.gpus == 1) one.push_back(ToSeconds(*j.duration));
    gpu_s += ToSeconds(*j.duration) * j.gpus;
  }
  EXPECT_NEAR(sizes[1] / 100000.0, 76627.0 / 82247, 0.005);
  EXPECT_NEAR(sizes[8] / 100000.0, 1643.0 / 82247, 0.002);
  std::sort(one.begin(), one.end());
  EXPECT_NEAR(one[one.size() / 2], 1117, 60);
  const double span = ToSeconds(jobs.back().submit - jobs.front().submit);
  EXPECT_NEAR(gpu_s / (512 * span), 0.9, 0.05);
  // max_gpus leaves larger sizes out.
  for (const auto& j : SyntheticPhillyLike({.jobs = 2000, .seed = 3, .max_gpus = 8})) {
    EXPECT_LE(j.gpus, 8);
  }
}

TEST(Synthetic, CsvIsTheSameJobs) {
  const auto dir = testing::ScratchDir("synth_csv");
  const SyntheticConfig cfg{.jobs = 500, .seed = 9, .load = 1.1, .cluster_gpus = 128};
  auto load = WriteSyntheticCsv(cfg, (dir / "s.csv").string());
  ASSERT_TRUE(load.ok()) << load.status().message();
  EXPECT_NEAR(*load, 1.1, 0.2);
  auto read = ReadTrace((dir / "s.csv").string());
  ASSERT_TRUE(read.ok()) << read.status().message();
  const auto jobs = SyntheticPhillyLike(cfg);
  ASSERT_EQ(read->jobs.size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    EXPECT_EQ(read->jobs[i].submit, jobs[i].submit);
    EXPECT_EQ(read->jobs[i].gpus, jobs[i].gpus);
    EXPECT_EQ(read->jobs[i].duration, jobs[i].duration);
    EXPECT_EQ(read->jobs[i].model, jobs[i].model);
    EXPECT_EQ(read->jobs[i].vc, jobs[i].vc);
  }
}

TEST(Synthetic, FitsQuantilesByInterpolationBetweenOrderStatistics) {
  // One class (1 GPU) with durations 10, 20, 30, 40, 50 s: the p-quantile sits at p x 4 between
  // order statistics: p = 0.01 -> 10.4 -> 10 (rounded), p = 0.5 -> 30, p = 0.99 -> 49.6 -> 50.
  std::vector<JobSpec> jobs;
  for (int i = 0; i < 5; ++i) {
    jobs.push_back(
        {.id = JobId(i), .gpus = 1, .vc = i < 2 ? "a" : "b", .duration = Seconds(10 * (i + 1))});
  }
  const WorkloadFigures f = FitFigures(jobs, "t");
  ASSERT_EQ(f.durations[0].size(), QuantileLevels().size());
  EXPECT_EQ(f.durations[0][0], 10);
  EXPECT_EQ(f.durations[0][1], 10);
  EXPECT_EQ(f.durations[0][50], 30);
  EXPECT_EQ(f.durations[0][99], 50);
  EXPECT_TRUE(f.durations[1].empty());
  EXPECT_EQ(f.sizes, (std::vector<std::pair<int, int64_t>>{{1, 5}}));
  EXPECT_EQ(f.vcs, (std::vector<std::pair<std::string, int64_t>>{{"a", 2}, {"b", 3}}));
}

TEST(Synthetic, EmbeddedFiguresAreTheFitOfPhilly) {
  const std::string path = std::string(TIRESIAS_SHARED_DIR) + "/traces/philly.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent (../shared)";
  auto t = ReadTrace(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const WorkloadFigures f = FitFigures(t->jobs, path);
  const WorkloadFigures& embedded = PhillyFigures();
  EXPECT_EQ(f.sizes, embedded.sizes);
  EXPECT_EQ(f.vcs, embedded.vcs);
  for (size_t c = 0; c < f.durations.size(); ++c) EXPECT_EQ(f.durations[c], embedded.durations[c]);
}

}  // namespace
}  // namespace tiresias
