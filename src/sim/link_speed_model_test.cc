// The placement speed model and its effect in the simulator, with hand-worked numbers:
// all-reduce iteration = compute + 2 (n - 1) / n x MB / (GB/s of the slowest link); parameter
// servers: compute + the busiest PS's max(local MB / intra, remote MB / slowest link).
#include "sim/link_speed_model.h"

#include <gtest/gtest.h>

#include "sim/metrics.h"
#include "sim/simulator.h"

namespace tiresias {
namespace {

// Model "m": tensors 300 + 100 = 400 MB (skew 0.75), 200 ms compute per iteration.
std::shared_ptr<const LinkSpeedModel> Model() {
  ModelCatalog c;
  EXPECT_TRUE(c.Add("m", {300, 100}).ok());
  EXPECT_TRUE(c.SetComputeMs("m", 200).ok());
  return std::make_shared<LinkSpeedModel>(std::move(c), LinkBandwidths{10, 2.5, 1.25}, 200,
                                          CommMode::kAllReduce);
}

// Parameter servers. Same volume, two shapes: "skewed" 300 + 100 MB (skew 0.75) and
// "balanced" 4 x 100 MB (skew 0.25), both 200 ms compute.
std::shared_ptr<const LinkSpeedModel> PsModel() {
  ModelCatalog c;
  EXPECT_TRUE(c.Add("skewed", {300, 100}).ok());
  EXPECT_TRUE(c.Add("balanced", {100, 100, 100, 100}).ok());
  EXPECT_TRUE(c.SetComputeMs("skewed", 200).ok());
  EXPECT_TRUE(c.SetComputeMs("balanced", 200).ok());
  return std::make_shared<LinkSpeedModel>(std::move(c), LinkBandwidths{10, 2.5, 1.25}, 200,
                                          CommMode::kParameterServer);
}

TEST(LinkSpeedModel, ParameterServersMakeSkewMatter) {
  auto m = PsModel();
  const LinkBandwidths bw = m->bandwidths();
  Topology t = *Topology::Create(2, 4, 4);  // 2 switches x 4 nodes x 4 GPUs
  // 4 GPUs packed on one node: one PS serves all 400 MB to 4 local workers, pushes and pulls:
  // 2 x 4 x 400 = 3200 MB / 10 = 320 ms, for either model -> 520 ms per iteration.
  EXPECT_DOUBLE_EQ(PsCommMs({300, 100}, {4, 1, 1}, bw), 320);
  EXPECT_DOUBLE_EQ(PsCommMs({100, 100, 100, 100}, {4, 1, 1}, bw), 320);
  // 2 + 2 on two nodes, one switch (2.5 GB/s). Skewed: PS0 300 MB, PS1 100 MB. PS0 sends and
  // receives 2 x 2 x 300 = 1200 MB locally (120 ms) and 1200 MB to the 2 remote workers
  // (480 ms): 480 ms; PS1 160 ms. Iteration 680 ms -> rate 520/680.
  EXPECT_DOUBLE_EQ(PsCommMs({300, 100}, {4, 2, 1}, bw), 480);
  EXPECT_NEAR(m->RateOf("skewed", {4, 2, 1}, t), 520.0 / 680, 1e-12);
  // Balanced: 200 MB per PS, remote 2 x 2 x 200 = 800 MB / 2.5 = 320 ms (local 80 ms):
  // 520 ms, as fast as packed.
  EXPECT_DOUBLE_EQ(PsCommMs({100, 100, 100, 100}, {4, 2, 1}, bw), 320);
  EXPECT_EQ(m->RateOf("balanced", {4, 2, 1}, t), 1.0);
  // One GPU on each of 4 nodes over two switches (1.25 GB/s). Skewed: PS0 300 MB to 3 remote
  // workers, 2 x 3 x 300 = 1800 MB -> 1440 ms: rate 520/1640. Balanced: 100 MB per PS,
  // 600 MB -> 480 ms: rate 520/680.
  EXPECT_NEAR(m->RateOf("skewed", {4, 4, 2}, t), 520.0 / 1640, 1e-12);
  EXPECT_NEAR(m->RateOf("balanced", {4, 4, 2}, t), 520.0 / 680, 1e-12);
  // All-reduce sees only the volume: both 200 + 1.5 x 400 / 2.5 = 440 ms on 2 + 2.
  EXPECT_DOUBLE_EQ(IterationMs(200, 400, {4, 2, 1}, bw), 440);
  // Which node hosts the big tensor matters: 1 + 3 puts the 300 MB PS on the node with one
  // worker, remote 2 x 3 x 300 = 1800 MB / 2.5 = 720 ms (PS1: 80 ms): rate 520/920.
  Allocation uneven{{{0, 0b1}, {1, 0b111}}};  // GPU bit masks: 1 + 3 GPUs
  PlacementShape s = ShapeOf(uneven, t);
  EXPECT_EQ(s.per_node, (std::vector<int>{1, 3}));
  EXPECT_DOUBLE_EQ(PsCommMs({300, 100}, s, bw), 720);
  EXPECT_NEAR(m->Rate(JobSpec{.gpus = 4, .model = "skewed"}, uneven, t), 520.0 / 920, 1e-12);
  // One GPU: no communication.
  EXPECT_EQ(PsCommMs({300, 100}, {1, 1, 1}, bw), 0);
}

TEST(LinkSpeedModel, PackedShapeAndModes) {
  Topology t = *Topology::Create(2, 4, 4);
  EXPECT_EQ(PackedShape(10, t).per_node, (std::vector<int>{4, 4, 2}));
  EXPECT_EQ((PlacementShape{7, 3, 1}.GpusPerNode()), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(*ParseCommMode("ps"), CommMode::kParameterServer);
  EXPECT_EQ(*ParseCommMode("allreduce"), CommMode::kAllReduce);
  EXPECT_FALSE(ParseCommMode("ring").ok());
}

TEST(LinkSpeedModel, RateFollowsTheSlowestLink) {
  auto m = Model();
  Topology t = *Topology::Create(2, 4, 4);  // 2 switches x 4 nodes x 4 GPUs
  // 4 GPUs packed on one node: 200 + 2*3/4 * 400/10 = 260 ms.
  EXPECT_DOUBLE_EQ(IterationMs(200, 400, {4, 1, 1}, m->bandwidths()), 260);
  // One GPU on each of 4 nodes under one switch: 200 + 1.5 * 400/2.5 = 440 ms -> 260/440.
  EXPECT_NEAR(m->RateOf("m", {4, 4, 1}, t), 260.0 / 440, 1e-12);
  // Across two switches: 200 + 1.5 * 400/1.25 = 680 ms -> 260/680.
  EXPECT_NEAR(m->RateOf("m", {4, 4, 2}, t), 260.0 / 680, 1e-12);
  // 8 GPUs need two nodes anyway: two nodes under one switch is packed.
  EXPECT_EQ(m->RateOf("m", {8, 2, 1}, t), 1.0);
  // One GPU, and unknown models, are never slowed.
  EXPECT_EQ(m->RateOf("m", {1, 1, 1}, t), 1.0);
  EXPECT_EQ(m->RateOf("mystery", {4, 4, 2}, t), 1.0);
  EXPECT_FALSE(m->Knows(JobSpec{.model = "mystery"}));
  Allocation spread{{{0, 1}, {1, 1}, {4, 1}, {5, 1}}};  // nodes 0,1 (switch 0), 4,5 (switch 1)
  PlacementShape s = ShapeOf(spread, t);
  EXPECT_EQ(s.nodes, 4);
  EXPECT_EQ(s.switches, 2);
  EXPECT_EQ(s.slowest(), Link::kInterSwitch);
}

TEST(LinkSpeedModel, ParsesBandwidths) {
  auto bw = ParseLinkBandwidths("intra=12, inter-switch=3");
  ASSERT_TRUE(bw.ok());
  EXPECT_EQ(bw->intra, 12);
  EXPECT_EQ(bw->inter_node, LinkBandwidths{}.inter_node);
  EXPECT_EQ(bw->inter_switch, 3);
  EXPECT_FALSE(ParseLinkBandwidths("nvlink=100").ok());
  EXPECT_FALSE(ParseLinkBandwidths("intra=0").ok());
}

TEST(LinkSpeedModel, SimulatorSlowsSpreadJobsAndReportsIt) {
  // 1 switch x 4 nodes x 4 GPUs; `spread` puts a 4-GPU job one GPU per node.
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 4, 4);
  cfg.policy = "fifo";
  cfg.placement = "spread";
  cfg.preempt_overhead = 0;
  cfg.speed = Model();
  std::vector<JobSpec> jobs = {
      {.id = JobId(0), .gpus = 4, .submit = 0, .model = "m", .duration = Seconds(260)},
      {.id = JobId(1), .gpus = 4, .submit = 0, .model = "other", .duration = Seconds(100)}};
  auto r = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Job 0: 260 s packed at rate 260/440 -> 440 s (to the ms, ceil of the division).
  EXPECT_NEAR(static_cast<double>(r->jobs[0].end), 440000, 1);
  EXPECT_NEAR(r->jobs[0].slowdown(), 440.0 / 260, 1e-5);
  EXPECT_EQ(r->jobs[0].nodes, 4);
  EXPECT_EQ(r->jobs[0].switches, 1);
  // Job 1's model is unknown: packed speed, counted.
  EXPECT_EQ(r->jobs[1].end, Seconds(100));
  Metrics m = ComputeMetrics(*r);
  EXPECT_EQ(m.unknown_models, 1u);
  EXPECT_NEAR(m.slowdown.mean, (440.0 / 260 + 1) / 2, 1e-5);
  EXPECT_DOUBLE_EQ(m.mean_nodes, 4);
}

TEST(LinkSpeedModel, FragmentationIdleGpus) {
  // 1 switch x 2 nodes x 4 GPUs, consolidate, fifo. A (3 GPUs, 100 s) takes node 0, B (3 GPUs,
  // 200 s) node 1; C (2 GPUs, 50 s) finds 2 GPUs free, one per node: no slot, so those 2 GPUs
  // idle from 0 to 100 s, when A ends and C takes node 0 (100..150 s). Makespan 200 s:
  // 2 GPUs x 100 s / 200 s = 1.0 GPU idle on average because of fragmentation.
  SimConfig cfg;
  cfg.topo = *Topology::Create(1, 2, 4);
  cfg.policy = "fifo";
  cfg.placement = "consolidate";
  cfg.preempt_overhead = 0;
  std::vector<JobSpec> jobs = {{.id = JobId(0), .gpus = 3, .duration = Seconds(100)},
                               {.id = JobId(1), .gpus = 3, .duration = Seconds(200)},
                               {.id = JobId(2), .gpus = 2, .duration = Seconds(50)}};
  auto r = RunSimulation(cfg, jobs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->jobs[2].first_start, Seconds(100));
  Metrics m = ComputeMetrics(*r);
  EXPECT_DOUBLE_EQ(m.frag_idle_gpus, 1.0);
  // With `count`, C takes the scattered GPUs at once: nothing idles for fragmentation.
  cfg.placement = "count";
  EXPECT_DOUBLE_EQ(ComputeMetrics(*RunSimulation(cfg, jobs)).frag_idle_gpus, 0.0);
}

}  // namespace
}  // namespace tiresias
