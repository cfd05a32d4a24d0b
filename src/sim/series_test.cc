// The simulator's time series (SimConfig::series_step, timeseries.csv of --out), on runs small
// enough to work out by hand.
#include <gtest/gtest.h>

#include "sim/report.h"
#include "sim/report_data.h"
#include "sim/simulator.h"

namespace tiresias {
namespace {

TEST(Series, EachPointIsTheStateBetweenTwoEvents) {
  // 2 GPUs, fifo. A (2 GPUs, 100 s) at 0; B (1 GPU, 100 s) at 50 waits until A ends at 100,
  // then runs 100..200. Points every 60 s from the first submit; each holds the state after
  // the last event before it: 0 -> A runs (2 busy); 60 -> A runs, B waits; 120 and 180 -> B
  // runs (1 busy). The run ends at 200; no point after the last event's step.
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 1, 2);
  cfg.policy = "fifo";
  cfg.preempt_overhead = 0;
  cfg.series_step = Seconds(60);
  std::vector<JobSpec> jobs = {
      {.id = JobId(0), .gpus = 2, .duration = Seconds(100)},
      {.id = JobId(1), .gpus = 1, .submit = Seconds(50), .duration = Seconds(100)}};
  auto r = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->series.size(), 4u);
  const int busy[] = {2, 2, 1, 1}, waiting[] = {0, 1, 0, 0};
  for (size_t i = 0; i < 4; ++i) {
    const SeriesPoint& p = r->series[i];
    EXPECT_EQ(p.t, Seconds(60) * static_cast<Time>(i));
    EXPECT_EQ(p.busy_gpus, busy[i]) << i;
    EXPECT_EQ(p.free_gpus, 2 - busy[i]) << i;
    ASSERT_EQ(p.running.size(), 1u);  // fifo: one queue
    EXPECT_EQ(p.running[0], 1) << i;
    EXPECT_EQ(p.waiting[0], waiting[i]) << i;
  }
  EXPECT_EQ(SeriesCsv(*r),
            "time_s,busy_gpus,free_gpus,unusable_gpus,running_jobs,waiting_jobs,running_q1,"
            "waiting_q1,preemptions\n"
            "0,2,0,0,1,0,1,0,0\n60,2,0,0,1,1,1,1,0\n120,1,1,0,1,0,1,0,0\n180,1,1,0,1,0,1,0,0\n");
}

TEST(Series, PreemptionsAreCountedInTheStepTheyHappen) {
  // 1 GPU, srtf. A (100 s) at 0; B (10 s) at 30 has less left than A's 70 s: A is preempted at
  // 30, B runs 30..40, A resumes 40..110. Points every 20 s: 0 and 20 before the preemption;
  // the row at 40 counts it (it happened in (20, 40]); 60, 80, 100 none.
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 1, 1);
  cfg.policy = "srtf";
  cfg.preempt_overhead = 0;
  cfg.series_step = Seconds(20);
  std::vector<JobSpec> jobs = {
      {.id = JobId(0), .gpus = 1, .duration = Seconds(100)},
      {.id = JobId(1), .gpus = 1, .submit = Seconds(30), .duration = Seconds(10)}};
  auto r = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->preemptions, 1u);
  ASSERT_EQ(r->series.size(), 6u);
  const uint64_t so_far[] = {0, 0, 1, 1, 1, 1};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r->series[i].t, Seconds(20) * static_cast<Time>(i));
    EXPECT_EQ(r->series[i].preemptions, so_far[i]) << i;
    EXPECT_EQ(r->series[i].busy_gpus, 1) << i;
  }
  const std::string csv = SeriesCsv(*r);
  EXPECT_NE(csv.find("\n40,1,0,0,1,0,1,0,1\n60,1,0,0,1,0,1,0,0\n"), std::string::npos) << csv;
}

TEST(Series, NoneUnlessAsked) {
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 1, 1);
  cfg.policy = "fifo";
  auto r = RunSimulation(cfg, {{.id = JobId(0), .gpus = 1, .duration = Seconds(10)}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->series.empty());
}

TEST(ReportData, CdfKeepsTheEndsAndEvenRanks) {
  // 10 values, 4 points: ranks 0, 3, 6, 9 (k * 9 / 3), y = (rank + 1) / 10.
  auto c = CdfPoints({10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, 4);
  EXPECT_EQ(c["x"], nlohmann::json({1, 4, 7, 10}));
  EXPECT_EQ(c["y"], nlohmann::json({0.1, 0.4, 0.7, 1.0}));
  // Few values: all of them.
  c = CdfPoints({3, 1}, 4);
  EXPECT_EQ(c["x"], nlohmann::json({1, 3}));
  EXPECT_EQ(c["y"], nlohmann::json({0.5, 1.0}));
  EXPECT_TRUE(CdfPoints({}, 4)["x"].empty());
  // 10,007 values, 400 points: the maximum is the last point, and the size stays bounded.
  std::vector<double> many(10007);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i);
  c = CdfPoints(many);
  ASSERT_EQ(c["x"].size(), kCdfPoints);
  EXPECT_EQ(c["x"].front(), 0.0);
  EXPECT_EQ(c["x"].back(), 10006.0);
  EXPECT_EQ(c["y"].back(), 1.0);
}

}  // namespace
}  // namespace tiresias
