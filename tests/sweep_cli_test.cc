// `tiresias sweep` end to end, as a researcher runs it: a grid of queue counts and thresholds
// on a hand-made trace over two clusters and two windows writes runs.csv (one row per run),
// summary.csv, robust.csv, a plot per knob and index.html, and prints the best configuration
// per metric with its 95% interval; a grid with no valid point fails with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"

namespace {

using tiresias::testing::ReadAll;
using tiresias::testing::RunTiresias;
using tiresias::testing::ScratchDir;

size_t Lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(SweepCli, GridTimesClustersTimesWindowsWritesEveryFile) {
  auto dir = ScratchDir("sweep");
  // Two days of jobs: on day 0 a long job then a burst of short ones; day 1 the same later.
  std::ofstream t(dir / "t.csv");
  t << "job_id,num_gpu,submit_time,duration,user,vc\n";
  int id = 0;
  for (int day = 0; day < 2; ++day) {
    const int base = day * 86400;
    t << id++ << ",4," << base << ",20000,a,v1\n";
    for (int k = 0; k < 6; ++k) t << id++ << ",2," << base + 100 + k * 10 << ",300,b,v2\n";
  }
  t.close();
  auto r = RunTiresias("sweep --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x4,1x2x4 --windows 0,1 --days 1 --placement count"
                       " --grid queues=1,2,3 --grid thresholds=100:1000 --threads 2 --quiet -o " +
                       (dir / "out").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("3 configurations x 2 clusters x 2 replicates = 12 runs"), std::string::npos)
      << r.out;
  // On 1x1x4 a single queue (FIFO by submit) makes the six short jobs wait behind the long
  // 4-GPU one for 20,000 s; two queues demote it after 100 GPU-s (25 s) and they preempt it.
  EXPECT_NE(r.out.find("cluster 1x1x4 (2 replicates): best configuration per metric"),
            std::string::npos);
  EXPECT_NE(r.out.find("most robust on mean JCT (s)"), std::string::npos) << r.out;
  const std::string runs = ReadAll(dir / "out" / "runs.csv");
  EXPECT_EQ(Lines(runs), 1u + 12u) << runs;
  EXPECT_NE(runs.find("point,config,queues,thresholds,cluster,replicate,mean_jct"),
            std::string::npos);
  EXPECT_NE(runs.find("\"dlas queues=3 thresholds=100,1000 +count\",3,100:1000,1x2x4,days 1-2"),
            std::string::npos)
      << runs;
  // Values are exact (found by a tester: 6 significant digits, 2.66177e+06): a mean over
  // 7 jobs has more digits than that.
  EXPECT_EQ(runs.find("e+"), std::string::npos) << runs;
  size_t longest = 0;
  for (size_t i = 0, run = 0; i < runs.size(); ++i) {
    run = std::isdigit(static_cast<unsigned char>(runs[i])) || runs[i] == '.' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  EXPECT_GT(longest, 8u) << runs;
  EXPECT_EQ(Lines(ReadAll(dir / "out" / "summary.csv")), 1u + 3u * 2u);
  EXPECT_EQ(Lines(ReadAll(dir / "out" / "robust.csv")), 1u + 3u);
  const std::string svg = ReadAll(dir / "out" / "knob_queues.svg");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find(">1x2x4<"), std::string::npos);  // a series per cluster
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "knob_thresholds.svg"));
  const std::string html = ReadAll(dir / "out" / "index.html");
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // The single queue loses: the first line of robust.csv is not queues=1.
  const std::string robust = ReadAll(dir / "out" / "robust.csv");
  const size_t from = robust.find('\n') + 1;
  const std::string first = robust.substr(from, robust.find('\n', from) - from);
  EXPECT_EQ(first.rfind("1,", 0), 0u) << robust;
  EXPECT_EQ(first.find("dlas queues=1"), std::string::npos) << robust;
  // The same directory again with one knob: the other's plot goes.
  std::ofstream(dir / "out" / "knob_stale.svg") << "<svg/>";
  auto again = RunTiresias("sweep --trace " + (dir / "t.csv").string() +
                           " --cluster 1x1x4 --placement count --grid queues=1,2 --quiet -o " +
                           (dir / "out").string());
  ASSERT_EQ(again.rc, 0) << again.out;
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "knob_stale.svg"));
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "knob_thresholds.svg"));
  EXPECT_TRUE(std::filesystem::exists(dir / "out" / "knob_queues.svg"));
}

TEST(SweepCli, AGridWithoutAValidPointSaysWhy) {
  auto dir = ScratchDir("sweep_bad");
  std::ofstream(dir / "t.csv") << "job_id,num_gpu,submit_time,duration\n0,1,0,10\n";
  auto r = RunTiresias("sweep --trace " + (dir / "t.csv").string() +
                       " --cluster 1x1x1 --grid queues=3 --grid thresholds=5/10/20");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("queues=3 needs 2 thresholds, got 3"), std::string::npos) << r.out;
}

}  // namespace
