// ClusterState: the running totals after takes and gives, giving many allocations back at
// once, and the change log a preemptive pass undoes (an ask with every victim's GPUs given
// back, then taken back without reading their allocations again).
#include "core/cluster_state.h"

#include <gtest/gtest.h>

#include <vector>

namespace tiresias {
namespace {

// Every value a placement reads, for comparing two states.
struct Seen {
  std::vector<uint64_t> free;
  std::vector<int> per_node, per_switch, with_free;
  int total;
  bool operator==(const Seen&) const = default;
};

Seen SeenOf(const ClusterState& s) {
  const Topology& t = s.topology();
  Seen v{.total = s.total_free()};
  for (int n = 0; n < t.num_nodes(); ++n) {
    v.free.push_back(s.free_mask(n));
    v.per_node.push_back(s.free_on_node(n));
  }
  for (int w = 0; w < t.switches(); ++w) v.per_switch.push_back(s.free_on_switch(w));
  for (int k = 0; k <= t.gpus_per_node(); ++k) v.with_free.push_back(s.nodes_with_free(k));
  return v;
}

Allocation On(std::vector<NodeSlice> slices) {
  return Allocation{std::move(slices)};
}

TEST(ClusterStateTest, TakeAndGiveKeepEveryTotal) {
  // 2 switches x 2 nodes x 4 GPUs. Take 3 GPUs of node 0 and 2 of node 3: node 0 has 1 free,
  // node 3 has 2; switch 0 has 8 - 3 = 5, switch 1 has 8 - 2 = 6; 11 free in all; nodes with
  // at least 2 free: nodes 1, 2, 3 = 3; with 4: nodes 1 and 2.
  ClusterState s(*Topology::Create(2, 2, 4));
  const Allocation a = On({{0, 0b0111}, {3, 0b1100}});
  s.Take(a);
  EXPECT_EQ(s.free_mask(0), 0b1000u);
  EXPECT_EQ(s.free_on_node(0), 1);
  EXPECT_EQ(s.free_on_node(3), 2);
  EXPECT_EQ(s.free_on_switch(0), 5);
  EXPECT_EQ(s.free_on_switch(1), 6);
  EXPECT_EQ(s.total_free(), 11);
  EXPECT_EQ(s.nodes_with_free(2), 3);
  EXPECT_EQ(s.nodes_with_free(4), 2);
  EXPECT_FALSE(s.AllFree(a));
  s.Give(a);
  EXPECT_TRUE(s.AllFree(a));
  EXPECT_EQ(s.total_free(), 16);
  EXPECT_EQ(s.nodes_with_free(4), 4);
}

TEST(ClusterStateTest, UndoLogRevertsOnlyWhatWasLogged) {
  ClusterState s(*Topology::Create(2, 2, 4));
  const Allocation before_log = On({{1, 0b0011}});
  const Allocation v1 = On({{0, 0b0001}, {2, 0b1111}}), v2 = On({{0, 0b0110}});
  s.Take(before_log);
  s.Take(v1);
  s.Take(v2);
  const Seen held = SeenOf(s);
  s.BeginLog();
  EXPECT_TRUE(s.logging());
  s.Give(v1);  // three slices' worth of changes: node 0, node 2, node 0
  s.Give(v2);
  EXPECT_EQ(s.logged(), 3u);
  EXPECT_EQ(s.total_free(), 16 - 2);             // only before_log's GPUs held
  const Allocation started = On({{0, 0b0011}});  // a start on the given GPUs, also logged
  s.Take(started);
  EXPECT_EQ(s.logged(), 4u);
  s.UndoLog();
  EXPECT_FALSE(s.logging());
  EXPECT_EQ(SeenOf(s), held);  // as before the log, before_log's take kept
  // After the log ends, changes are not logged (and a new log starts empty).
  s.Give(v2);
  EXPECT_EQ(s.logged(), 0u);
  s.BeginLog();
  s.Give(v1);
  EXPECT_EQ(s.logged(), 2u);  // v1's two slices
  s.EndLog();                 // keeps them and clears the log
  EXPECT_FALSE(s.logging());
  s.Give(before_log);
  EXPECT_EQ(s.logged(), 0u);
  EXPECT_EQ(s.total_free(), 16);
  // A change of capacity ends a log (it is not undone with the trial's gives and takes).
  s.BeginLog();
  s.Take(v2);
  s.SetUsable(3, 0b0011);  // node 3's GPUs 2 and 3 gone: 16 - 2 (v2) - 2 free
  EXPECT_FALSE(s.logging());
  EXPECT_EQ(s.logged(), 0u);
  EXPECT_EQ(s.total_free(), 12);
  EXPECT_EQ(s.total_usable(), 14);
}

TEST(ClusterStateTest, GiveAllIsEveryGiveWithOneChangePerNode) {
  // Three allocations' slices on nodes 0, 2, 0, 3: the same state as giving each back in turn,
  // logged as three changes (nodes 0, 2, 3), which the undo takes back.
  const std::vector<Allocation> held = {On({{0, 0b0011}, {2, 0b1000}}), On({{0, 0b0100}}),
                                        On({{3, 0b1111}})};
  ClusterState one_by_one(*Topology::Create(2, 2, 4)), at_once(*Topology::Create(2, 2, 4));
  for (const Allocation& a : held) {
    one_by_one.Take(a);
    at_once.Take(a);
  }
  const Seen before = SeenOf(at_once);
  std::vector<NodeSlice> slices;
  for (const Allocation& a : held) {
    one_by_one.Give(a);
    slices.insert(slices.end(), a.slices.begin(), a.slices.end());
  }
  at_once.BeginLog();
  at_once.GiveAll(slices);
  EXPECT_EQ(SeenOf(at_once), SeenOf(one_by_one));
  EXPECT_EQ(at_once.total_free(), 16);
  EXPECT_EQ(at_once.logged(), 3u);
  at_once.UndoLog();
  EXPECT_EQ(SeenOf(at_once), before);
  at_once.GiveAll(slices);  // its per-node scratch was left clear
  EXPECT_EQ(SeenOf(at_once), SeenOf(one_by_one));
}

}  // namespace
}  // namespace tiresias
