// Sweeps (src/sim/sweep.h): grid values and ranges, grid expansion (geometric thresholds per
// queue count, options given only to policies that declare them, refused combinations skipped),
// the 95% interval over replicates, the robust ranking and the SVG plot, on figures worked by
// hand; and a small sweep run end to end on a synthetic workload.
#include "sim/sweep.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/svg_plot.h"
#include "test_files.h"
#include "trace/synthetic.h"

namespace tiresias {
namespace {

TEST(SweepGrid, AxesAndRanges) {
  auto a = ParseGridAxis("queues=2,3, 4");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->key, "queues");
  EXPECT_EQ(a->values, (std::vector<std::string>{"2", "3", "4"}));
  EXPECT_FALSE(ParseGridAxis("queues").ok());
  EXPECT_FALSE(ParseGridAxis("queues=2,,3").ok());
  EXPECT_EQ(*ParseIntRange("1..5"), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(*ParseIntRange("1,3,7"), (std::vector<int64_t>{1, 3, 7}));
  EXPECT_EQ(*ParseIntRange("2..10/4"), (std::vector<int64_t>{2, 6, 10}));
  EXPECT_FALSE(ParseIntRange("5..1").ok());
  EXPECT_FALSE(ParseIntRange("x").ok());
  // A valid range that is too long says so (it said "not a range A..B").
  EXPECT_EQ(ParseIntRange("1..100000000").status().message(),
            "'1..100000000': more than 100,000 values");
}

std::vector<std::string> Labels(const std::vector<SweepPoint>& points) {
  std::vector<std::string> out;
  for (const auto& p : points) out.push_back(p.label);
  return out;
}

TEST(SweepGrid, GeometricThresholdsPerQueueCount) {
  // 100:10000 for K queues: K-1 values from 100 to 10000 in equal ratios. Two queues: 100;
  // three: 100, 10000; four: 100, 1000, 10000 (ratio 10).
  std::vector<std::string> skipped;
  auto points = ExpandGrid({.policy = "dlas", .placement = "count"},
                           {*ParseGridAxis("queues=2,3,4"), *ParseGridAxis("thresholds=100:10000")},
                           TestFiles(), &skipped);
  ASSERT_TRUE(points.ok()) << points.status().message();
  EXPECT_EQ(Labels(*points), (std::vector<std::string>{
                                 "dlas queues=2 thresholds=100 +count",
                                 "dlas queues=3 thresholds=100,10000 +count",
                                 "dlas queues=4 thresholds=100,1000,10000 +count",
                             }));
  EXPECT_EQ((*points)[2].knobs.at("thresholds"), "100:10000");
  EXPECT_TRUE(skipped.empty());
}

TEST(SweepGrid, OptionsGoOnlyToPoliciesThatDeclareThem) {
  // srtf takes no queues: it runs once, not once per queue count.
  auto points = ExpandGrid({.policy = "dlas", .placement = "count"},
                           {*ParseGridAxis("policy=dlas,srtf"), *ParseGridAxis("queues=1,2"),
                            *ParseGridAxis("placement=count,consolidate")},
                           TestFiles(), nullptr);
  ASSERT_TRUE(points.ok()) << points.status().message();
  EXPECT_EQ(Labels(*points), (std::vector<std::string>{
                                 "dlas queues=1 +count",
                                 "dlas queues=1 +consolidate",
                                 "dlas queues=2 +count",
                                 "dlas queues=2 +consolidate",
                                 "srtf +count",
                                 "srtf +consolidate",
                             }));
}

// Found by a tester: an axis no policy takes (a typo) was ignored and a value out of range
// only skipped, with exit 0 and a "best" configuration. Both are errors; a value refused only
// with some other axis's values (queues=3 above) is still a combination matter.
TEST(SweepGrid, AnOptionNoPolicyHasOrAValueRefusedOnItsOwnIsAnError) {
  const GridBase base{.policy = "dlas", .placement = "count"};
  auto typo = ExpandGrid(base, {*ParseGridAxis("promote-knob=0,8")}, TestFiles(), nullptr);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message().rfind("--grid promote-knob: no policy of the sweep has this "
                                          "option (dlas: queues, thresholds, promote_knob",
                                          0),
            0u)
      << typo.status().message();
  auto zero = ExpandGrid(base, {*ParseGridAxis("queues=0,2")}, TestFiles(), nullptr);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("--grid queues=0: policy dlas: option queues=0: out of "
                                         "range"),
            std::string::npos)
      << zero.status().message();
  auto place = ExpandGrid(base, {*ParseGridAxis("placement=count,nope")}, TestFiles(), nullptr);
  ASSERT_FALSE(place.ok());
  EXPECT_NE(place.status().message().find("--grid placement=nope: unknown placement 'nope'"),
            std::string::npos);
  // Nor when another policy of the grid ignores the option (found by a review: fifo's
  // combination with queues=0 counted as a valid one).
  auto mixed = ExpandGrid(base, {*ParseGridAxis("policy=fifo,dlas"), *ParseGridAxis("queues=0,2")},
                          TestFiles(), nullptr);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("--grid queues=0:"), std::string::npos)
      << mixed.status().message();
  // An option of one policy of the grid only is fine (fifo has no queues).
  auto some = ExpandGrid(base, {*ParseGridAxis("policy=dlas,fifo"), *ParseGridAxis("queues=2,3")},
                         TestFiles(), nullptr);
  EXPECT_TRUE(some.ok()) << some.status().message();
}

TEST(SweepGrid, RefusedCombinationsAreSkippedWithTheReason) {
  // Three queues need two thresholds: 5/10/20 gives three, so only queues=4 takes it.
  std::vector<std::string> skipped;
  auto points = ExpandGrid({.policy = "dlas", .placement = "count"},
                           {*ParseGridAxis("queues=3,4"), *ParseGridAxis("thresholds=5/10/20")},
                           TestFiles(), &skipped);
  ASSERT_TRUE(points.ok()) << points.status().message();
  EXPECT_EQ(Labels(*points), (std::vector<std::string>{"dlas queues=4 thresholds=5,10,20 +count"}));
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("queues=3 needs 2 thresholds, got 3"), std::string::npos);
  // `-` leaves an option out: thresholds or threshold_quantiles, never both (refused).
  skipped.clear();
  auto either = ExpandGrid({.policy = "dlas", .placement = "count"},
                           {*ParseGridAxis("thresholds=50,-"), *ParseGridAxis("promote_knob=-,2")},
                           TestFiles(), &skipped);
  ASSERT_TRUE(either.ok()) << either.status().message();
  EXPECT_EQ(Labels(*either),
            (std::vector<std::string>{"dlas thresholds=50 +count",
                                      "dlas promote_knob=2 thresholds=50 +count", "dlas +count",
                                      "dlas promote_knob=2 +count"}));
  // A range without a queue count cannot be expanded.
  EXPECT_FALSE(
      ExpandGrid({.policy = "dlas"}, {*ParseGridAxis("thresholds=1:9")}, TestFiles(), nullptr)
          .ok());
}

TEST(SweepStats, NinetyFivePercentIntervalUsesStudentsT) {
  // {10, 12, 14}: mean 12, sample sd 2, t(0.975, 2 df) = 4.303: half-width 4.303 x 2 / sqrt 3.
  const Spread s = MeanAndInterval({10, 12, 14});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 12);
  EXPECT_NEAR(s.half_width, 4.303 * 2 / std::sqrt(3.0), 1e-12);
  // One replicate: no interval (NaN, an empty ci95 cell; it was 0, printed "± 0").
  EXPECT_TRUE(std::isnan(MeanAndInterval({7}).half_width));
  EXPECT_EQ(MeanAndInterval({NAN, 5}).n, 1u);  // missing values are left out
}

TEST(SweepStats, RobustRankingPrefersTheSmallestWorstRatio) {
  // One cluster, two replicates. P0: 60 and 250 s (mean 155); P1: 100 and 200 s (mean 150).
  // The best of each replicate: 60 (P0), 200 (P1). P0's ratios 1 and 250/200 = 1.25 (worst
  // 1.25, geometric mean sqrt(1.25)); P1's 100/60 = 1.667 and 1 (worst 1.667): P0 is the more
  // robust although P1 has the lower mean.
  SweepConfig cfg;
  cfg.points.resize(2);
  cfg.clusters.push_back({"c", *Topology::Create(1, 1, 1)});
  cfg.replicates.resize(2);
  const size_t mean_jct = 0;
  ASSERT_STREQ(SweepMetrics()[mean_jct].name, "mean_jct");
  auto run = [](size_t p, size_t r, double v) {
    SweepRun x{p, 0, r, std::vector<double>(SweepMetrics().size(), NAN), 0};
    x.values[0] = v;
    return x;
  };
  const std::vector<SweepRun> runs = {run(0, 0, 60), run(0, 1, 250), run(1, 0, 100),
                                      run(1, 1, 200)};
  const auto rank = RankRobust(cfg, runs, mean_jct);
  ASSERT_EQ(rank.size(), 2u);
  EXPECT_EQ(rank[0].point, 0u);
  EXPECT_NEAR(rank[0].worst_ratio, 1.25, 1e-12);
  EXPECT_NEAR(rank[0].geomean_ratio, std::sqrt(1.25), 1e-12);
  EXPECT_NEAR(rank[1].worst_ratio, 100.0 / 60.0, 1e-12);
  EXPECT_NEAR(rank[1].geomean_ratio, std::sqrt(100.0 / 60.0), 1e-12);
}

TEST(SweepPlot, EachValueIsItsClosestConfigurationToTheBestOfEachReplicate) {
  // One cluster, two replicates (a quiet and a busy week), knob a: P0 has a=1, P1 and P2
  // a=2. Replicate 0: P0 100, P1 110, P2 120 s (best 100); replicate 1: P0 1000, P1 900, P2
  // 1200 s (best 900). Ratios to the best of their replicate: P0 1 and 10/9 (mean 1.0556),
  // P1 1.1 and 1 (mean 1.05), P2 1.2 and 4/3. For a=2 the plot shows P1, the closer. Its
  // bar: t(0.975, 1 df) = 12.706 x sd / sqrt 2 = 12.706 x 0.05 (P1's ratios differ by 0.1),
  // and P0's 12.706 x (1/9) / 2.
  SweepConfig cfg;
  cfg.points.resize(3);
  cfg.points[0].knobs = {{"a", "1"}};
  cfg.points[1].knobs = {{"a", "2"}};
  cfg.points[2].knobs = {{"a", "2"}};
  cfg.clusters.push_back({"c", *Topology::Create(1, 1, 1)});
  cfg.replicates.resize(2);
  auto run = [](size_t p, size_t r, double v) {
    SweepRun x{p, 0, r, std::vector<double>(SweepMetrics().size(), NAN), 0};
    x.values[0] = v;  // mean_jct
    return x;
  };
  const std::vector<SweepRun> runs = {run(0, 0, 100),  run(1, 0, 110), run(2, 0, 120),
                                      run(0, 1, 1000), run(1, 1, 900), run(2, 1, 1200)};
  const auto plots = KnobPlots(cfg, {{"a", {"1", "2"}}}, runs, 0);
  ASSERT_EQ(plots.size(), 1u);
  ASSERT_EQ(plots[0].series.size(), 1u);
  const PlotSeries& s = plots[0].series[0];
  ASSERT_EQ(s.y.size(), 2u);
  EXPECT_NEAR(s.y[0], (1 + 10.0 / 9) / 2, 1e-12);
  EXPECT_NEAR(s.hi[0] - s.y[0], 12.706 / 18, 1e-12);
  EXPECT_NEAR(s.y[1], 1.05, 1e-12);
  EXPECT_NEAR(s.y[1] - s.lo[1], 12.706 * 0.05, 1e-12);
}

TEST(SweepPlot, SvgHasAPointAndABarPerValueAndEscapesText) {
  LinePlot p{
      "a <title>", "queues", "ratio", {"2", "3"}, {{"c&d", {1.5, 1.0}, {1.4, 0.9}, {1.6, 1.1}}}};
  const std::string svg = RenderSvg(p);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("a &lt;title&gt;"), std::string::npos);
  EXPECT_NE(svg.find(">c&amp;d<"), std::string::npos);
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, 2u);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(svg.find("http://", svg.find("xmlns") + 40), std::string::npos);  // nothing fetched
}

TEST(SweepRunTest, EveryPointClusterAndReplicateRuns) {
  // 2 points x 1 cluster x 2 seeds on a small contended cluster: four runs, each finishing
  // every job; more queues give a different mean JCT (the runs are real).
  SweepConfig cfg;
  auto points = ExpandGrid({.policy = "dlas", .placement = "count"}, {*ParseGridAxis("queues=1,2")},
                           TestFiles(), nullptr);
  ASSERT_TRUE(points.ok());
  cfg.points = *points;
  cfg.clusters.push_back({"1x2x4", *Topology::Create(1, 2, 4)});
  for (uint64_t seed : {1, 2}) {
    cfg.replicates.push_back(
        {"seed", std::make_shared<const std::vector<JobSpec>>(SyntheticPhillyLike(
                     {.jobs = 80, .seed = seed, .load = 1.5, .cluster_gpus = 8, .max_gpus = 8}))});
  }
  cfg.threads = 2;
  cfg.data = std::shared_ptr<const DataSource>(&TestFiles(), [](const DataSource*) {});
  auto runs = RunSweep(cfg);
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 4u);
  const size_t finished = 13;
  ASSERT_STREQ(SweepMetrics()[finished].name, "finished");
  for (const auto& r : *runs) EXPECT_EQ(r.values[finished], 80);
  const SweepSummary sum = Summarise(cfg, *runs);
  EXPECT_NE(sum[0][0][0].mean, sum[1][0][0].mean);
  EXPECT_EQ(sum[0][0][0].n, 2u);
}

}  // namespace
}  // namespace tiresias
