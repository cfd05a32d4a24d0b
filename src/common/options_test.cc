// MakeOrderingPolicy's errors (src/policy/registry.h, options.h, queue_discipline.h): an
// unknown policy lists the valid names, an unknown option lists the valid options, and bad
// values (non-numbers, queues without thresholds, unknown choices, decreasing thresholds)
// give a message naming the policy, the option and what is wrong.
#include <gtest/gtest.h>

#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias {
namespace {

// The error message of MakeOrderingPolicy, or "" when it succeeds.
std::string Error(const std::string& name, const std::vector<std::string>& opts) {
  auto p = MakeOrderingPolicy(name, opts, TestFiles());
  return p.ok() ? "" : p.status().message();
}

TEST(PolicyOptions, ErrorCodes) {
  EXPECT_EQ(MakeOrderingPolicy("nope", {}, TestFiles()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeOrderingPolicy("dlas", {"x=1"}, TestFiles()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeOrderingPolicy("dlas", {"queues=3"}, TestFiles()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      MakeOrderingPolicy("gittins", {"history=/nonexistent/h.csv"}, TestFiles()).status().code(),
      StatusCode::kIoError);
}

TEST(PolicyOptions, UnknownPolicyListsValidNames) {
  EXPECT_EQ(Error("tiresias", {}),
            "unknown policy 'tiresias'; valid policies: fifo, fifo-backfill, sjf, srtf, srsf, "
            "las, las2d, dlas, gittins");
}

TEST(PolicyOptions, UnknownOptionListsValidOptions) {
  EXPECT_EQ(Error("dlas", {"knob=8"}),
            "policy dlas: unknown option 'knob'; valid options: queues, thresholds, "
            "promote_knob, threshold_quantiles, queue_order, history, online, history_batch");
  EXPECT_EQ(Error("fifo", {"x=1"}), "policy fifo: unknown option 'x'; valid options: (none)");
  EXPECT_EQ(Error("srtf", {"ties=stable", "thresholds=1"}),
            "policy srtf: unknown option 'thresholds'; valid options: ties");
}

TEST(PolicyOptions, NotKeyValue) {
  EXPECT_EQ(Error("dlas", {"thresholds"}), "policy dlas: option 'thresholds' must be key=value");
  EXPECT_EQ(Error("dlas", {"=3"}), "policy dlas: option '=3' must be key=value");
}

TEST(PolicyOptions, BadNumbers) {
  EXPECT_EQ(Error("dlas", {"thresholds=abc"}),
            "policy dlas: option thresholds=abc: 'abc' is not a number");
  EXPECT_EQ(Error("dlas", {"thresholds=10,x"}),
            "policy dlas: option thresholds=10,x: 'x' is not a number");
  EXPECT_EQ(Error("dlas", {"queues=two"}),
            "policy dlas: option queues=two: not an integer in [1, 100]");
  EXPECT_EQ(Error("dlas", {"queues=2.5"}),
            "policy dlas: option queues=2.5: not an integer in [1, 100]");
  EXPECT_EQ(Error("dlas", {"promote_knob=lots"}),
            "policy dlas: option promote_knob=lots: not a number in [0, 1000000]");
  EXPECT_EQ(Error("dlas", {"promote_knob=inf"}),
            "policy dlas: option promote_knob=inf: not a number in [0, 1000000]");
  EXPECT_EQ(Error("dlas", {"promote_knob=-1"}),
            "policy dlas: option promote_knob=-1: out of range: expected a number in [0, 1000000]");
}

TEST(PolicyOptions, QueuesAndThresholdsMustAgree) {
  EXPECT_EQ(Error("dlas", {"queues=3"}),
            "policy dlas: queues=3 needs thresholds=T1,...,T2 (GPU-seconds)");
  EXPECT_EQ(Error("gittins", {"queues=4"}),
            "policy gittins: queues=4 needs thresholds=T1,...,T3 (GPU-seconds)");
  EXPECT_EQ(Error("dlas", {"queues=3", "thresholds=100"}),
            "policy dlas: queues=3 needs 2 thresholds, got 1");
  EXPECT_EQ(Error("dlas", {"thresholds=7200,3250"}),
            "policy dlas: thresholds must be at least 0.001 GPU-s and strictly increasing, got "
            "7200,3250");
  EXPECT_EQ(Error("dlas", {"thresholds=0"}),
            "policy dlas: option thresholds=0: '0' is out of range: expected numbers in [0.001, "
            "315360000000000]");
  EXPECT_EQ(
      Error("dlas", {"thresholds=5,5"}),
      "policy dlas: thresholds must be at least 0.001 GPU-s and strictly increasing, got 5,5");
  // Valid combinations.
  EXPECT_EQ(Error("dlas", {"queues=3", "thresholds=3250,7200"}), "");
  EXPECT_EQ(Error("dlas", {"queues=1"}), "");
  EXPECT_EQ(Error("dlas", {"queues=2"}), "");
  EXPECT_EQ(Error("dlas", {"thresholds=0.5"}), "");
}

TEST(PolicyOptions, QueueCountBelowOneIsRejectedClearly) {
  std::string e = Error("dlas", {"queues=0"});
  EXPECT_FALSE(e.empty());
  EXPECT_NE(e.find("queues"), std::string::npos) << e;
}

TEST(PolicyOptions, SubMillisecondThresholdIsRejected) {
  // 0.0001 GPU-s = 0.1 GPU-ms rounds to 0: Q1 would be empty and every job demoted on start.
  std::string e = Error("dlas", {"thresholds=0.0001"});
  EXPECT_NE(e.find("thresholds"), std::string::npos) << e;
}

TEST(PolicyOptions, BadChoices) {
  EXPECT_EQ(Error("dlas", {"queue_order=bogus"}),
            "policy dlas: option queue_order=bogus: valid values: running-first, fifo");
  EXPECT_EQ(Error("srsf", {"ties=random"}),
            "policy srsf: option ties=random: valid values: submit, stable");
  EXPECT_EQ(Error("gittins", {"online=yes"}),
            "policy gittins: option online=yes: valid values: true, false");
}

TEST(PolicyOptions, GittinsSpecificChecks) {
  EXPECT_EQ(Error("gittins", {"history="}), "policy gittins: option history=: empty path");
  // The option is named (found by a tester: only the file was).
  EXPECT_EQ(Error("gittins", {"history=/nonexistent/h.csv"}),
            "policy gittins: option history: /nonexistent/h.csv: cannot open: No such file or "
            "directory");
  EXPECT_EQ(Error("dlas", {"threshold_quantiles=0.5", "history=/nonexistent/h.csv"}),
            "policy dlas: option history: /nonexistent/h.csv: cannot open: No such file or "
            "directory");
  EXPECT_EQ(Error("gittins", {"quantum=0"}),
            "policy gittins: option quantum=0: out of range: expected a number in [0.001, "
            "315360000000000]");
  EXPECT_EQ(Error("gittins", {"history_batch=0"}),
            "policy gittins: option history_batch=0: out of range: expected an integer in [1, "
            "1000000000]");
}

TEST(PolicyOptions, HelpListsEveryPolicyAndOption) {
  std::string help = OrderingPolicies().Help();
  for (const auto& info : OrderingPolicies()) {
    EXPECT_NE(help.find(info.name), std::string::npos) << info.name;
    for (const auto& o : info.options) EXPECT_NE(help.find(o.name + "=<"), std::string::npos);
  }
  EXPECT_NE(help.find("queue_order=<one of running-first|fifo>"), std::string::npos) << help;
}

// Found by fuzz/options_fuzzer: gittins quantum=1e308 passed the parser and its conversion to
// ms was undefined. Every numeric option now declares a range, checked by the parser, and the
// bounds keep the arithmetic of the policy inside 64 bits.
TEST(PolicyOptions, EveryNumericOptionDeclaresItsRange) {
  auto check = [](const std::string& owner, const std::vector<OptionSpec>& specs) {
    for (const auto& s : specs) {
      if (s.type == OptionSpec::Type::kInt || s.type == OptionSpec::Type::kDouble ||
          s.type == OptionSpec::Type::kDoubleList) {
        EXPECT_TRUE(s.bounded()) << owner << " option " << s.name << " has no range";
      }
    }
  };
  for (const auto& p : OrderingPolicies()) check(p.name, p.options);
  for (const auto& p : PlacementPolicies()) check(p.name, p.options);
}

TEST(PolicyOptions, ValuesBeyondTheirRangeAreRefusedWithTheRange) {
  EXPECT_EQ(Error("gittins", {"quantum=1e308"}),
            "policy gittins: option quantum=1e308: out of range: expected a number in [0.001, "
            "315360000000000]");
  EXPECT_EQ(Error("dlas", {"promote_knob=1e7"}),
            "policy dlas: option promote_knob=1e7: out of range: expected a number in [0, "
            "1000000]");
  EXPECT_EQ(Error("dlas", {"thresholds=10,1e300"}),
            "policy dlas: option thresholds=10,1e300: '1e300' is out of range: expected numbers "
            "in [0.001, 315360000000000]");
  EXPECT_EQ(Error("dlas", {"queues=101"}),
            "policy dlas: option queues=101: out of range: expected an integer in [1, 100]");
  EXPECT_EQ(Error("dlas", {"promote_knob=1000000"}), "");  // the edges are valid
  const std::string help = OrderingPolicies().Help();
  EXPECT_NE(help.find("quantum=<number in [0.001, 315360000000000]>"), std::string::npos) << help;
  auto p = MakePlacementPolicy("tiresias", {"explore_every=-1"}, TestFiles());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(),
            "placement tiresias: option explore_every=-1: out of range: expected an integer in "
            "[0, 1000000000]");
}

TEST(PlacementOptions, UnknownPlacementListsValidNames) {
  auto p = MakePlacementPolicy("no-such-placement", {}, TestFiles());
  ASSERT_FALSE(p.ok());
  const std::string m = p.status().message();
  EXPECT_EQ(
      m.rfind("unknown placement 'no-such-placement'; valid placements: count, consolidate", 0), 0u)
      << m;
  auto q = MakePlacementPolicy("count", {"x=1"}, TestFiles());
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().message(), "placement count: unknown option 'x'; valid options: (none)");
}

// A given option that changes nothing is named with what it needs: dlas reads its history only
// for threshold_quantiles, history_batch only matters when online=true, and the learned
// PACKLIMIT's knobs only with packlimit=learned. Options that do take effect say nothing.
TEST(PolicyOptions, AnOptionThatChangesNothingIsNamed) {
  using V = std::vector<std::string>;
  EXPECT_EQ(*OrderingPolicies().Ineffective("dlas", {"history=h.csv", "online=true"}),
            (V{"policy dlas: history has no effect without threshold_quantiles",
               "policy dlas: online has no effect without threshold_quantiles"}));
  EXPECT_EQ(*OrderingPolicies().Ineffective("dlas", {"history_batch=5"}),
            V{"policy dlas: history_batch has no effect without threshold_quantiles and "
              "online=true"});
  EXPECT_EQ(*OrderingPolicies().Ineffective(
                "dlas", {"threshold_quantiles=0.5", "history=h.csv", "online=true"}),
            V{});
  EXPECT_EQ(*OrderingPolicies().Ineffective("gittins", {"history_batch=5", "online=false"}),
            V{"policy gittins: history_batch has no effect without online=true"});
  EXPECT_EQ(*OrderingPolicies().Ineffective("gittins", {"history_batch=5", "online=true"}), V{});
  EXPECT_EQ(*PlacementPolicies().Ineffective("tiresias", {"explore_every=3", "packlimit=0.2"}),
            V{"placement tiresias: explore_every has no effect without packlimit=learned"});
  EXPECT_EQ(*PlacementPolicies().Ineffective("tiresias", {"explore_every=3", "packlimit=learned"}),
            V{});
  // A bad option is an error here too, not a note.
  EXPECT_FALSE(OrderingPolicies().Ineffective("dlas", {"knob=8"}).ok());
}

}  // namespace
}  // namespace tiresias
