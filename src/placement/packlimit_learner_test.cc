// The learned PACKLIMIT: the classifier on its own, and the `tiresias` placement with
// packlimit=learned, trained through OnJobFinished as the core drives it.
#include "placement/packlimit_learner.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/cluster_state.h"
#include "core/model_catalog.h"
#include "placement/registry.h"
#include "test_files.h"
#include "trace/model_profile_reader.h"

namespace tiresias {
namespace {

TEST(PackLimitLearner, LearnsTheSkewThatSeparatesSlowFromFast) {
  PackLimitLearner l(/*slow_below=*/0.8);
  EXPECT_FALSE(l.Sensitive(0.9, 1));  // no examples: explore, nothing is sensitive
  EXPECT_FALSE(l.PackLimit());
  l.Observe(0.74, /*spread=*/0, 1.0);  // packed runs teach nothing
  EXPECT_EQ(l.examples(), 0);
  // First example, VGG-16 (skew 0.744) on 2 nodes at 0.5 of packed speed: slow (y = 1).
  // p = 0.5 before, gradient 0.5: w = (0.5, 0.372, 0.5).
  l.Observe(0.744, 1, 0.5);
  EXPECT_NEAR(l.weights()[0], 0.5, 1e-12);
  EXPECT_NEAR(l.weights()[1], 0.372, 1e-12);
  EXPECT_NEAR(l.weights()[2], 0.5, 1e-12);
  // Then alternate with ResNet-50 (skew 0.112) keeping 0.9 of its speed on 2 nodes.
  for (int i = 0; i < 300; ++i) {
    l.Observe(0.112, 1, 0.9);
    l.Observe(0.744, 1, 0.5);
  }
  EXPECT_TRUE(l.Sensitive(0.744, 1));
  EXPECT_FALSE(l.Sensitive(0.112, 1));
  // The boundary at one level of spread lies between the two skews.
  ASSERT_TRUE(l.PackLimit());
  EXPECT_GT(*l.PackLimit(), 0.112);
  EXPECT_LT(*l.PackLimit(), 0.744);
}

TEST(PackLimitLearner, PlacementLearnsFromCompletedJobs) {
  const std::string profiles = std::string(TIRESIAS_SHARED_DIR) + "/profiles/tensor_sizes.csv";
  if (!std::filesystem::exists(profiles)) GTEST_SKIP() << "../shared/profiles is absent";
  auto p = MakePlacementPolicy("tiresias", {"packlimit=learned"}, TestFiles());
  ASSERT_TRUE(p.ok()) << p.status().message();
  // 1 switch x 2 nodes x 4 GPUs with GPUs 0-1 of both nodes busy: 4 GPUs free, 2 per node.
  Topology topo = *Topology::Create(1, 2, 4);
  ClusterState s(topo);
  s.Take(Allocation{{{0, 0b0011}, {1, 0b0011}}});
  JobSpec vgg{.id = JobId(1), .gpus = 4, .model = "vgg16"};
  JobSpec resnet{.id = JobId(2), .gpus = 4, .model = "resnet50"};
  // Untrained: even VGG-16 takes the scattered GPUs (exploration).
  EXPECT_TRUE(std::holds_alternative<Placed>((*p)->Place(vgg, s)));
  // Completed jobs on two nodes: VGG-16 ran at 0.55 of packed speed, ResNet-50 at 0.9.
  Job done_vgg{.spec = vgg, .rate = 0.55, .alloc = Allocation{{{0, 0b1100}, {1, 0b1100}}}};
  Job done_resnet{.spec = resnet, .rate = 0.9, .alloc = done_vgg.alloc};
  for (int i = 0; i < 200; ++i) {
    (*p)->OnJobFinished(done_vgg, topo);
    (*p)->OnJobFinished(done_resnet, topo);
  }
  auto r = (*p)->Place(vgg, s);
  ASSERT_TRUE(std::holds_alternative<NoSlotNow>(r));
  EXPECT_NE((*p)->WhyNoSlot(vgg, s).find("predicted slow on 2 nodes"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<Placed>((*p)->Place(resnet, s)));
  EXPECT_NE((*p)->Note().find("learned PACKLIMIT 0."), std::string::npos) << (*p)->Note();
  EXPECT_FALSE(MakePlacementPolicy("tiresias", {"packlimit=lots"}, TestFiles()).ok());
}

TEST(PackLimitLearner, UnsureSlowPredictionsAreExploredNowAndThen) {
  const std::string profiles = std::string(TIRESIAS_SHARED_DIR) + "/profiles/tensor_sizes.csv";
  if (!std::filesystem::exists(profiles)) GTEST_SKIP() << "../shared/profiles is absent";
  auto p = MakePlacementPolicy("tiresias", {"packlimit=learned", "explore_every=3"}, TestFiles());
  ASSERT_TRUE(p.ok()) << p.status().message();
  Topology topo = *Topology::Create(1, 2, 4);
  ClusterState s(topo);
  s.Take(Allocation{{{0, 0b0011}, {1, 0b0011}}});  // 2 GPUs free on each node
  JobSpec vgg{.id = JobId(1), .gpus = 4, .model = "vgg16"};
  Job slow{.spec = vgg, .rate = 0.55, .alloc = Allocation{{{0, 0b1100}, {1, 0b1100}}}};
  // Train a twin learner alongside until it just predicts VGG-16 slow on two nodes (spread 1),
  // but unsure: 0.5 < P(slow) < 0.9.
  PackLimitLearner twin(0.8);
  const double skew = ReadModelCatalog(profiles)->Find("vgg16")->skew;
  while (twin.PSlow(skew, 1.0) <= 0.5 || twin.examples() == 0) {
    twin.Observe(skew, 1.0, 0.55);
    (*p)->OnJobFinished(slow, topo);
  }
  ASSERT_LT(twin.PSlow(skew, 1.0), 0.9) << "one more example made it sure; adjust the test";
  // Every third unsure decision spreads it anyway (explore_every=3): wait, wait, place.
  std::string seen;
  for (int i = 0; i < 6; ++i) {
    seen += std::holds_alternative<Placed>((*p)->Place(vgg, s)) ? 'P' : 'w';
  }
  EXPECT_EQ(seen, "wwPwwP");
  EXPECT_FALSE(
      MakePlacementPolicy("tiresias", {"packlimit=learned", "explore_every=-1"}, TestFiles()).ok());
}

}  // namespace
}  // namespace tiresias
