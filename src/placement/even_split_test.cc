// EvenSplit pinned on tiny clusters: an uneven multi-node placement (Slurm would hold the
// largest count on every node) becomes the fewest nodes that split the job evenly, or a wait,
// or "never fits" when no even split exists at all.
#include "placement/even_split.h"

#include <gtest/gtest.h>

#include "placement/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

std::unique_ptr<PlacementPolicy> Even(const std::string& inner) {
  auto p = MakePlacementPolicy(inner, {}, TestFiles());
  EXPECT_TRUE(p.ok()) << p.status().message();
  return EvenSplit(std::move(*p));
}

JobSpec Job(int gpus) {
  return JobSpec{.id = JobId(1), .gpus = gpus};
}

std::string PlacedAt(const PlacementResult& r) {
  const auto* p = std::get_if<Placed>(&r);
  return p ? p->alloc.str() : "(not placed)";
}

TEST(EvenSplit, AnUnevenConsolidatedSlotBecomesTheFewestEvenNodes) {
  // 1 switch x 3 nodes x 4 GPUs, node 2's GPU 0 busy. consolidate puts 6 GPUs on one idle
  // node plus 2 more: n0:0-3,n1:0-1, which Slurm would hold as 4+4. Even: k must divide 6 and
  // 6/k fit a node of 4, so k = 2 (3 each): nodes with >= 3 free are n0 (4), n1 (4), n2 (3);
  // those left with the fewest free first: n2 (3), then n0 (4, lower index) -> n0:0-2,n2:1-3.
  ClusterState s(*Topology::Create(1, 3, 4));
  s.Take(Allocation{{{2, 0b0001}}});
  auto consolidate = MakePlacementPolicy("consolidate", {}, TestFiles());
  ASSERT_TRUE(consolidate.ok());
  EXPECT_EQ(PlacedAt((*consolidate)->Place(Job(6), s)), "n0:0-3,n1:0-1");
  EXPECT_EQ(PlacedAt(Even("consolidate")->Place(Job(6), s)), "n0:0-2,n2:1-3");
}

TEST(EvenSplit, AnEvenOrOneNodePlacementIsKept) {
  // 1 x 2 x 4, empty: 8 GPUs are 4+4 (even), 3 GPUs one node: the inner choice stands.
  ClusterState s(*Topology::Create(1, 2, 4));
  EXPECT_EQ(PlacedAt(Even("consolidate")->Place(Job(8), s)), "n0:0-3,n1:0-3");
  EXPECT_EQ(PlacedAt(Even("consolidate")->Place(Job(3), s)), "n0:0-2");
}

TEST(EvenSplit, AScatteredCountPlacementMovesToOneNodeWhenOneHasRoom) {
  // 1 x 2 x 4; n0 has GPUs 0-1 busy, n1 GPU 0: count takes the lowest free GPUs, n0:2-3 and
  // n1:1 (2+1). Even: k = 1 first (3 on one node): only n1 has 3 free -> n1:1-3.
  ClusterState s(*Topology::Create(1, 2, 4));
  s.Take(Allocation{{{0, 0b0011}, {1, 0b0001}}});
  EXPECT_EQ(PlacedAt(Even("count")->Place(Job(3), s)), "n1:1-3");
}

TEST(EvenSplit, NoEvenSlotNowIsAWaitWithItsReason) {
  // 1 x 3 x 4; n1's GPUs 0-1 and n2's 0-2 busy: 7 free (4+2+1), count would place 6 as 4+2.
  // An even 6 needs 2 nodes with 3 free (only n0) or 3 with 2 (n2 has 1); 6 with 1 needs more
  // nodes than there are: no even slot now.
  ClusterState s(*Topology::Create(1, 3, 4));
  s.Take(Allocation{{{1, 0b0011}, {2, 0b0111}}});
  auto p = Even("count");
  EXPECT_TRUE(std::holds_alternative<NoSlotNow>(p->Place(Job(6), s)));
  EXPECT_EQ(p->WhyNoSlot(Job(6), s),
            "waits for 2 nodes with 3 free GPUs each, or 3 with 2 (the cluster's engine, Slurm, "
            "gives every node of a job the same number of GPUs; 7 free in all)");
  // Too few free GPUs: the inner policy's own reason.
  EXPECT_EQ(p->WhyNoSlot(Job(8), s),
            MakePlacementPolicy("count", {}, TestFiles()).value()->WhyNoSlot(Job(8), s));
}

TEST(EvenSplit, AJobNoEvenSplitCanHoldNeverFits) {
  // 2 nodes of 4: 7 GPUs need k dividing 7 with 7/k <= 4, so k = 7 nodes: never. 6 (3+3)
  // and 5 on 5 nodes of 4 (1 each) fit.
  auto p = Even("count");
  auto why = p->NeverFitsReason(Job(7), *Topology::Create(1, 2, 4));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("cannot be split evenly over 2 nodes of 4 GPUs"), std::string::npos) << *why;
  EXPECT_FALSE(p->NeverFitsReason(Job(6), *Topology::Create(1, 2, 4)).has_value());
  EXPECT_FALSE(p->NeverFitsReason(Job(5), *Topology::Create(1, 5, 4)).has_value());
}

TEST(EvenSplit, OneSwitchIsPreferredThenTheWholeCluster) {
  // 2 switches x 2 nodes x 4. Switch 0: n0 full, n1 has 3 free; switch 1: n2 has 3 free,
  // n3 full. 6 GPUs as 3+3: no switch has two nodes with 3 free, so across: n1 and n2.
  ClusterState s(*Topology::Create(2, 2, 4));
  s.Take(Allocation{{{0, 0b1111}, {1, 0b0001}, {2, 0b0001}, {3, 0b1111}}});
  auto a = FindEvenSlot(6, s, {});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->str(), "n1:1-3,n2:1-3");
  // Free n0 again: switch 0 now has n0 (4) and n1 (3): 3+3 there, fewest free first.
  s.Give(Allocation{{{0, 0b1111}}});
  EXPECT_EQ(FindEvenSlot(6, s, {})->str(), "n0:0-2,n1:1-3");
}

TEST(EvenSplit, NodesOfDifferentSizesDecideEachByItsOwnCount) {
  // A Slurm partition of an 8-GPU and a 4-GPU node: the core's topology is 2 x 8, n1's GPUs
  // 4-7 never usable. 10 GPUs: k = 2 needs two nodes with 5 (only n0 has 8 >= 5), k = 5 or 10
  // more nodes than there are: never, with the real sizes. 8 GPUs: 4 + 4 (k = 2: n0 and n1
  // both have >= 4); 12 GPUs: 6 + 6 would need two nodes of 6: never.
  auto p = Even("count");
  auto q = EvenSplit(MakePlacementPolicy("count", {}, TestFiles()).value(), {8, 4});
  const Topology topo = *Topology::Create(1, 2, 8);
  EXPECT_FALSE(p->NeverFitsReason(Job(10), topo).has_value());  // (all taken for 8 GPUs)
  auto why = q->NeverFitsReason(Job(10), topo);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("over 2 nodes of 8, 4 GPUs"), std::string::npos) << *why;
  EXPECT_FALSE(q->NeverFitsReason(Job(8), topo).has_value());
  EXPECT_TRUE(q->NeverFitsReason(Job(12), topo).has_value());
  EXPECT_EQ(EvenNodeCounts(8, {8, 4}), (std::vector<int>{1, 2}));
  EXPECT_EQ(EvenNodeCounts(6, {4, 4, 4}), (std::vector<int>{2, 3}));
}

TEST(EvenSplit, MoreNodesThanAnEvenSplitNeedsIsAFallback) {
  // 1 x 3 x 4; n1 and n2 have GPUs 0-1 busy: n0 has 4 free, n1 and n2 2 each. consolidate puts
  // 6 GPUs on n0 plus 2 on n1 (no fallback). No two nodes have 3 free, so the even slot is
  // 2+2+2 on three nodes, more than the two an even split needs at best: a fallback, so that a
  // preemptive core first tries to free a 3+3 slot. With n1 free too, 3+3 is no fallback.
  ClusterState s(*Topology::Create(1, 3, 4));
  s.Take(Allocation{{{1, 0b0011}, {2, 0b0011}}});
  auto r = Even("consolidate")->Place(Job(6), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(r));
  EXPECT_EQ(std::get<Placed>(r).alloc.str(), "n0:0-1,n1:2-3,n2:2-3");
  EXPECT_TRUE(std::get<Placed>(r).fallback);
  // A policy that places wherever GPUs are free (count) asked for no packing: no fallback, so
  // no preemption only to use fewer nodes.
  auto counted = Even("count")->Place(Job(6), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(counted));
  EXPECT_EQ(std::get<Placed>(counted).alloc.node_count(), 3);
  EXPECT_FALSE(std::get<Placed>(counted).fallback);
  s.Give(Allocation{{{1, 0b0011}}});
  r = Even("consolidate")->Place(Job(6), s);
  ASSERT_TRUE(std::holds_alternative<Placed>(r));
  EXPECT_EQ(std::get<Placed>(r).alloc.str(), "n0:0-2,n1:0-2");
  EXPECT_FALSE(std::get<Placed>(r).fallback);
}

}  // namespace
}  // namespace tiresias
