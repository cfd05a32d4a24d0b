// Placement rules pinned on tiny clusters: what each policy does with a gang when the free
// GPUs are scattered, and the "no slot now" / "never fits" distinction.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "core/cluster_state.h"
#include "core/model_catalog.h"
#include "placement/even_split.h"
#include "placement/registry.h"
#include "test_files.h"
#include "trace/model_profile_reader.h"

namespace tiresias {
namespace {

const std::string kProfiles = std::string(TIRESIAS_SHARED_DIR) + "/profiles/tensor_sizes.csv";

std::unique_ptr<PlacementPolicy> Make(const std::string& name,
                                      const std::vector<std::string>& opts = {}) {
  auto p = MakePlacementPolicy(name, opts, TestFiles());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(*p);
}

JobSpec Job(int gpus, const std::string& model = "") {
  return JobSpec{.id = JobId(1), .gpus = gpus, .model = model};
}

// 1 switch x 2 nodes x 4 GPUs, with GPUs 0-1 of both nodes busy: 4 GPUs free, 2 per node.
ClusterState HalfFree() {
  ClusterState s(*Topology::Create(1, 2, 4));
  s.Take(Allocation{{{0, 0b0011}, {1, 0b0011}}});
  return s;
}

TEST(Placement, ClusterStateCountsNodesByFreeGpus) {
  // 2 nodes x 4 GPUs with GPUs 0-1 of both busy: both have 2 free; then node 1 fills.
  ClusterState s = HalfFree();
  EXPECT_EQ(s.nodes_with_free(0), 2);
  EXPECT_EQ(s.nodes_with_free(2), 2);
  EXPECT_EQ(s.nodes_with_free(3), 0);
  s.Take(Allocation{{{1, 0b1100}}});
  EXPECT_EQ(s.nodes_with_free(1), 1);
  s.Give(Allocation{{{0, 0b0011}}});
  EXPECT_EQ(s.nodes_with_free(4), 1);  // node 0 whole again
}

TEST(Placement, FourGpuJobOnTwoHalfFreeNodes) {
  ClusterState s = HalfFree();
  // consolidate (YARN-CS): a 4-GPU job must sit on one node; neither has 4 free -> waits.
  auto consolidate = Make("consolidate");
  auto r = consolidate->Place(Job(4, "vgg16"), s);
  ASSERT_TRUE(std::holds_alternative<NoSlotNow>(r));
  EXPECT_NE(consolidate->WhyNoSlot(Job(4, "vgg16"), s).find("one node with 4 free GPUs"),
            std::string::npos);
  // count: any 4 free GPUs: 2 on node 0 (GPUs 2,3) + 2 on node 1.
  auto c = Make("count")->Place(Job(4), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(c));
  EXPECT_EQ(std::get<Placed>(c).alloc.str(), "n0:2-3,n1:2-3");
}

TEST(Placement, TiresiasConsolidatesOnlySensitiveModels) {
  if (!std::filesystem::exists(kProfiles)) GTEST_SKIP() << "../shared/profiles is absent";
  ClusterState s = HalfFree();
  auto p = Make("tiresias");
  // VGG16: largest tensor 392 of 526.8 MB -> skew 0.744 > PACKLIMIT 0.5: waits for a packed slot.
  auto vgg = p->Place(Job(4, "vgg16"), s);
  ASSERT_TRUE(std::holds_alternative<NoSlotNow>(vgg));
  EXPECT_NE(p->WhyNoSlot(Job(4, "vgg16"), s).find("skew 0.74"), std::string::npos);
  // ResNet-50: largest tensor 9 of 80.6 MB -> skew 0.112: takes the scattered GPUs now.
  auto resnet = p->Place(Job(4, "resnet50"), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(resnet));
  EXPECT_EQ(std::get<Placed>(resnet).alloc.gpu_count(), 4);
  // An unknown model is treated as insensitive.
  EXPECT_TRUE(std::holds_alternative<Placed>(p->Place(Job(4, "mystery-net"), s)));
  // A sensitive job still gets a packed slot when one exists: 2 GPUs fit node 0.
  auto small = p->Place(Job(2, "vgg16"), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(small));
  EXPECT_EQ(std::get<Placed>(small).alloc.node_count(), 1);
}

// A DataSource without the files (../shared absent): every read is "cannot open".
class NoFiles : public DataSource {
 public:
  StatusOr<std::shared_ptr<const std::vector<Service>>> GpuTimeHistory(
      const std::string& path) const override {
    return IoError(path + ": cannot open");
  }
  StatusOr<std::shared_ptr<const ModelCatalog>> ModelProfiles(
      const std::string& path) const override {
    return IoError(path + ": cannot open");
  }
};

TEST(Placement, TiresiasWithoutTheDefaultProfilesPlacesEveryJobAsInsensitive) {
  // tiresias is the simulator's default placement, so a missing default profiles file must
  // not stop a run: VGG16 (skew 0.74 with profiles, so it would wait for a packed slot on
  // HalfFree) takes the 2 + 2 scattered GPUs, and the note says why.
  NoFiles none;
  auto p = MakePlacementPolicy("tiresias", {}, none);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ClusterState s = HalfFree();
  auto vgg = (*p)->Place(Job(4, "vgg16"), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(vgg));
  EXPECT_EQ(std::get<Placed>(vgg).alloc.node_count(), 2);
  EXPECT_NE((*p)->Note().find("no model profiles"), std::string::npos) << (*p)->Note();
  // A profiles file the user names must load.
  auto named = MakePlacementPolicy("tiresias", {"profiles=/nonexistent/profiles.csv"}, none);
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("/nonexistent/profiles.csv"), std::string::npos);
}

TEST(Placement, SpreadUsesLeastLoadedNodesFirst) {
  // 1x3x4; node 0 has 1 free, node 1 has 4 free, node 2 has 3 free.
  ClusterState s(*Topology::Create(1, 3, 4));
  s.Take(Allocation{{{0, 0b0111}, {2, 0b0001}}});
  // Order by free GPUs: node 1 (4), node 2 (3), node 0 (1); one GPU per node per round:
  // round 1 takes n1:0, n2:1, n0:3 -> 3 GPUs; round 2 takes n1:1 -> 4.
  auto r = Make("spread")->Place(Job(4), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(r));
  EXPECT_EQ(std::get<Placed>(r).alloc.str(), "n0:3,n1:0-1,n2:1");
}

TEST(Placement, BestFitPicksTheTightestNode) {
  ClusterState s(*Topology::Create(1, 3, 4));
  s.Take(Allocation{{{0, 0b0111}, {2, 0b0001}}});  // free: n0 1, n1 4, n2 3
  // A 2-GPU job fits n1 (4 free) and n2 (3 free); best fit leaves the least: n2.
  auto r = Make("best-fit")->Place(Job(2), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(r));
  EXPECT_EQ(std::get<Placed>(r).alloc.str(), "n2:1-2");
}

TEST(Placement, RandomIsSeededAndDeterministic) {
  ClusterState s(*Topology::Create(2, 4, 4));
  auto a = Make("random", {"seed=5"})->Place(Job(3), s);
  auto b = Make("random", {"seed=5"})->Place(Job(3), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(a));
  EXPECT_EQ(std::get<Placed>(a).alloc.str(), std::get<Placed>(b).alloc.str());
}

TEST(Placement, MultiNodeConsolidationNeedsIdleNodesUnderOneSwitch) {
  // 2 switches x 2 nodes x 4 GPUs. An 8-GPU job needs 2 idle nodes under one switch.
  ClusterState s(*Topology::Create(2, 2, 4));
  s.Take(Allocation{{{0, 0b0001}, {2, 0b0001}}});  // one GPU busy on a node of each switch
  auto p = Make("consolidate");
  EXPECT_TRUE(std::holds_alternative<NoSlotNow>(p->Place(Job(8), s)));
  // 6 GPUs = 1 idle node + 2 more on another node of the same switch: switch 0 has n1 idle and
  // n0 with 3 free -> n0:1-2 + n1:0-3.
  auto r = p->Place(Job(6), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(r));
  EXPECT_EQ(std::get<Placed>(r).alloc.str(), "n0:1-2,n1:0-3");
  // Larger than a switch: never fits, a distinct result from "no slot now".
  auto why = p->NeverFitsReason(Job(12), s.topology());
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("one switch"), std::string::npos);
  EXPECT_FALSE(Make("count")->NeverFitsReason(Job(12), s.topology()).has_value());
}

TEST(Placement, PureAndMonotoneIsWhatThePoliciesThatClaimItDo) {
  // The core asks such a policy once, with every victim's GPUs given back, whether a job can
  // be placed at all (Scheduler::PreemptivePass). So: asking twice answers the same, and a
  // job it cannot place on some free GPUs it cannot place on any subset of them. Random
  // states of 2 switches x 4 nodes x 4 GPUs, gangs of 1-16 GPUs, sensitive and insensitive
  // models (all insensitive without ../shared).
  EXPECT_FALSE(Make("random", {"seed=1"})->pure_and_monotone());  // draws on every success
  EXPECT_FALSE(Make("tiresias", {"packlimit=learned"})->pure_and_monotone());
  // Those that never wait for a packed slot say so; those that may, do not.
  for (const std::string name : {"count", "spread", "best-fit", "random"}) {
    EXPECT_TRUE(Make(name)->places_whenever_enough_free()) << name;
  }
  EXPECT_FALSE(Make("consolidate")->places_whenever_enough_free());
  EXPECT_FALSE(Make("tiresias")->places_whenever_enough_free());
  std::mt19937_64 rng(17);
  // Each also wrapped in EvenSplit (Slurm's even splits), which says so when its policy does.
  for (const std::string base :
       {"count", "consolidate", "spread", "best-fit", "tiresias", "even count", "even consolidate",
        "even spread", "even best-fit", "even tiresias"}) {
    const bool even = base.starts_with("even ");
    const std::string name = even ? base.substr(5) : base;
    auto p = even ? EvenSplit(Make(name)) : Make(name);
    ASSERT_TRUE(p->pure_and_monotone()) << base;
    int failures = 0;
    for (int round = 0; round < 400; ++round) {
      ClusterState s(*Topology::Create(2, 4, 4));
      for (int n = 0; n < 8; ++n) {
        if (const uint64_t busy = rng() & 0xF) s.Take(Allocation{{{n, busy}}});
      }
      const std::string model = std::vector<std::string>{"vgg16", "resnet50", ""}[rng() % 3];
      const JobSpec job = Job(1 + static_cast<int>(rng() % 16), model);
      const auto first = p->Place(job, s), again = p->Place(job, s);
      ASSERT_EQ(first.index(), again.index()) << base;
      if (auto* a = std::get_if<Placed>(&first)) {
        EXPECT_EQ(a->alloc.str(), std::get<Placed>(again).alloc.str()) << base;
        continue;
      }
      ++failures;
      if (!even && p->places_whenever_enough_free()) {
        EXPECT_LT(s.total_free(), job.gpus) << base << " refused with enough GPUs free";
      }
      for (int n = 0; n < 8; ++n) {  // fewer free GPUs: still nothing
        if (const uint64_t more = s.free_mask(n) & rng()) s.Take(Allocation{{{n, more}}});
      }
      EXPECT_FALSE(std::holds_alternative<Placed>(p->Place(job, s)))
          << base << ": placed on fewer free GPUs a job it could not place on more";
    }
    EXPECT_GT(failures, 20) << base;  // the subset check ran
  }
}

TEST(ModelProfiles, SkewFromTensorSizesAndUserModels) {
  ModelCatalog c;
  ASSERT_TRUE(c.Add("toy", {1, 1, 2}).ok());  // largest 2 of 4 MB -> skew 0.5
  EXPECT_DOUBLE_EQ(c.Find("toy")->skew, 0.5);
  EXPECT_FALSE(c.Add("bad", {1, -2}).ok());
  if (!std::filesystem::exists(kProfiles)) GTEST_SKIP() << "../shared/profiles is absent";
  auto loaded = ReadModelCatalog(kProfiles);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->size(), 9u);
  EXPECT_NEAR(loaded->Find("alexnet")->skew, 144.0 / 235.8, 1e-9);
}

TEST(Placement, UnknownNameListsValidOnes) {
  auto p = MakePlacementPolicy("packed", {}, TestFiles());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("consolidate"), std::string::npos);
  EXPECT_NE(p.status().message().find("tiresias"), std::string::npos);
}

}  // namespace
}  // namespace tiresias
