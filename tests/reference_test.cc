// Fidelity against the public Tiresias simulator (../shared/docs/reference-results.md):
// trace 60_job.csv on clusters n2g4 and n4g4, placement count, zero preemption overhead,
// the reference's queue settings for dlas (3 queues, 3250/7200 GPU-s, running jobs first).
#include <gtest/gtest.h>

#include <filesystem>

#include "sim/metrics.h"
#include "sim/simulator.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

const std::string kDir = std::string(TIRESIAS_SHARED_DIR) + "/traces/tiresias/";

struct Case {
  std::string policy;
  std::vector<std::string> opts;
  std::string placement;
  std::string cluster;
  double mean_jct;
  double makespan;
  int preemptions;
};

Metrics RunCase(const Case& c) {
  auto trace = ReadTrace(kDir + "60_job.csv");
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  SimConfig cfg;
  cfg.topo = *ResolveCluster(kDir + c.cluster + ".csv");
  cfg.policy = c.policy;
  cfg.policy_opts = c.opts;
  cfg.placement = c.placement;
  cfg.preempt_overhead = 0;
  auto r = RunSimulation(cfg, trace->jobs);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return ComputeMetrics(*r);
}

class ReferenceTest : public testing::TestWithParam<Case> {};

TEST_P(ReferenceTest, MatchesPublicSimulator) {
  if (!std::filesystem::exists(kDir + "60_job.csv")) GTEST_SKIP() << "../shared is absent";
  const Case& c = GetParam();
  Metrics m = RunCase(c);
  EXPECT_EQ(m.finished, 60u);
  EXPECT_NEAR(m.jct.mean, c.mean_jct, 0.005) << c.policy << " on " << c.cluster;
  EXPECT_DOUBLE_EQ(m.makespan, c.makespan) << c.policy << " on " << c.cluster;
  EXPECT_EQ(m.preemptions, c.preemptions) << c.policy << " on " << c.cluster;
}

const std::vector<std::string> kRefDlas = {"queues=3", "thresholds=3250,7200",
                                           "queue_order=running-first"};

INSTANTIATE_TEST_SUITE_P(
    SixtyJobs, ReferenceTest,
    testing::Values(Case{"fifo", {}, "count", "n2g4", 1556.48, 5747, 0},
                    Case{"fifo", {}, "count", "n4g4", 200.82, 3335, 0},
                    Case{"fifo-backfill", {}, "count", "n2g4", 715.27, 4806, 0},
                    Case{"fifo-backfill", {}, "count", "n4g4", 190.68, 3271, 0},
                    Case{"srtf", {"ties=stable"}, "count", "n2g4", 519.87, 4901, 7},
                    Case{"srtf", {"ties=stable"}, "count", "n4g4", 192.12, 3271, 4},
                    Case{"srsf", {"ties=stable"}, "count", "n2g4", 563.38, 4962, 13},
                    Case{"srsf", {"ties=stable"}, "count", "n4g4", 195.90, 3315, 7},
                    Case{"dlas", kRefDlas, "count", "n2g4", 715.27, 4806, 0},
                    Case{"dlas", kRefDlas, "count", "n4g4", 190.68, 3271, 0},
                    Case{"fifo", {}, "consolidate", "n2g4", 1556.48, 5747, 0},
                    Case{"fifo", {}, "consolidate", "n4g4", 219.18, 3341, 0}),
    [](const testing::TestParamInfo<Case>& info) {
      std::string name = info.param.policy + "_" + info.param.placement + "_" + info.param.cluster;
      for (char& c : name) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// Our default tie rule (submit time, then id) differs from the reference's stable sort in one
// pass of srsf on n4g4: at t=504 s jobs 16 (4 GPUs x 110 s) and 13 (8 GPUs x 55 s) both have
// 440 GPU-s left. The reference keeps 16 first (its list order) and preempts 13; by submit
// time 13 goes first and keeps running, so 16 waits: mean JCT 194.98 s instead of 195.90 s.
TEST(ReferenceTies, DefaultTieRuleDiffersOnlyWhereDocumented) {
  if (!std::filesystem::exists(kDir + "60_job.csv")) GTEST_SKIP() << "../shared is absent";
  Metrics ours = RunCase({"srsf", {}, "count", "n4g4", 0, 0, 0});
  EXPECT_NEAR(ours.jct.mean, 194.98, 0.005);
  Metrics srtf = RunCase({"srtf", {}, "count", "n2g4", 0, 0, 0});
  EXPECT_NEAR(srtf.jct.mean, 519.87, 0.005);  // no tie matters here
}

}  // namespace
}  // namespace tiresias
