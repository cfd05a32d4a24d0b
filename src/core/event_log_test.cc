// The event vocabulary: one table row per kind (names unique, the core's inputs marked), JSON
// Lines that round-trip, parse errors that name the problem, and sentences built from the
// structured detail.
#include "core/event_log.h"

#include <gtest/gtest.h>

#include <set>

namespace tiresias {
namespace {

TEST(EventLog, TableHasEveryKindOnceInEnumOrder) {
  std::set<std::string_view> names;
  for (size_t i = 0; i < EventKinds().size(); ++i) {
    const auto& info = EventKinds()[i];
    EXPECT_EQ(static_cast<size_t>(info.kind), i);
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_EQ(ParseEventKind(info.name), info.kind);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(EventKind::kHold) + 1);
  EXPECT_FALSE(ParseEventKind("Start"));
  // Exactly the calls the daemon makes into the core are replayed.
  std::set<std::string_view> inputs;
  for (const auto& k : EventKinds()) {
    if (k.core_input) inputs.insert(k.name);
  }
  EXPECT_EQ(inputs, (std::set<std::string_view>{"submit", "finish", "cancel", "tick", "launch",
                                                "drain", "interrupt", "eligible", "requeue",
                                                "capacity", "checkpoint", "tenants", "relocate"}));
}

TEST(EventLog, JsonLinesRoundTrip) {
  Action a{Action::Kind::kStart, JobId(7), Allocation::Of({{1, 3}, {0, 2}, {1, 2}}), 0};
  Event e = EventOf(a, 1234);
  EXPECT_EQ(
      ToJsonLine(e),
      R"({"detail":{"gpus":[[0,2],[1,2],[1,3]],"reason":"starts"},"job":7,"kind":"start","t_ms":1234})");
  auto back = EventFromJsonLine(ToJsonLine(e));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->t, 1234);
  EXPECT_EQ(back->kind, EventKind::kStart);
  EXPECT_EQ(back->job, JobId(7));
  EXPECT_EQ(GpusFromJson(back->detail["gpus"]), (std::vector<GpuId>{{0, 2}, {1, 2}, {1, 3}}));
  EXPECT_EQ(Describe(*back), "GPUs n0:2,n1:2-3: starts");
  Event tick{.t = 5, .kind = EventKind::kTick};
  EXPECT_EQ(ToJsonLine(tick), R"({"detail":{},"job":null,"kind":"tick","t_ms":5})");
  EXPECT_EQ(EventFromJsonLine(ToJsonLine(tick))->job, JobId());
}

TEST(EventLog, BadLinesNameTheProblem) {
  EXPECT_EQ(EventFromJsonLine("[1]").status().message(), "not a JSON object");
  EXPECT_EQ(EventFromJsonLine(R"({"kind":"start"})").status().message(),
            "field 't_ms': missing or not a non-negative integer");
  // Numbers out of int64 are refused, not wrapped; a job or detail of the wrong type too.
  EXPECT_EQ(EventFromJsonLine(R"({"t_ms":18446744073709551615,"kind":"tick"})").status().message(),
            "field 't_ms': missing or not a non-negative integer");
  EXPECT_EQ(EventFromJsonLine(R"({"t_ms":-1,"kind":"tick"})").status().message(),
            "field 't_ms': missing or not a non-negative integer");
  EXPECT_EQ(EventFromJsonLine(R"({"t_ms":1,"kind":"tick","job":"3"})").status().message(),
            "field 'job': not null or a non-negative integer");
  EXPECT_EQ(EventFromJsonLine(R"({"t_ms":1,"kind":"tick","job":2.5})").status().message(),
            "field 'job': not null or a non-negative integer");
  EXPECT_EQ(EventFromJsonLine(R"({"t_ms":1,"kind":"tick","detail":[1]})").status().message(),
            "field 'detail': not a JSON object");
  EXPECT_EQ(EventFromJsonLine(R"({"t_ms":1,"kind":"launched"})").status().message(),
            "field 'kind': unknown kind 'launched'");
  // GPUs out of a node's range are not GPUs.
  EXPECT_TRUE(GpusFromJson(nlohmann::json::parse("[[0,64]]")).empty());
  EXPECT_TRUE(GpusFromJson(nlohmann::json::parse("[[-1,0]]")).empty());
  EXPECT_TRUE(GpusFromJson(nlohmann::json::parse(R"([["0",1]])")).empty());
}

TEST(EventLog, ExitSaysWhetherAPreemptedJobCheckpointedOrWasKilled) {
  Event e{.kind = EventKind::kExit,
          .job = JobId(1),
          .detail = {{"how", "exit 0"}, {"after", "preemption"}, {"checkpointed", true}}};
  EXPECT_EQ(Describe(e), "exit 0 after preemption (checkpointed, requeued)");
  e.detail = {
      {"how", "killed by signal 9 (SIGKILL)"}, {"after", "preemption"}, {"checkpointed", false}};
  EXPECT_EQ(Describe(e),
            "killed by signal 9 (SIGKILL) after preemption (killed at the end of its grace "
            "period, requeued)");
  e.detail = {{"how", "exit 0"}, {"after", "requeue"}, {"checkpointed", true}};
  EXPECT_EQ(Describe(e), "exit 0 after requeue (checkpointed, requeued)");
  e.detail = {{"how", "exit 143"}, {"after", "cancel"}};
  EXPECT_EQ(Describe(e), "exit 143 after cancel");
}

// Found by fuzz/journal_fuzzer: Describe read detail fields with json::value(key, default),
// which converts a float (master_port 1.8e24: undefined behaviour) and throws on another type
// (a string). A field of the wrong type now reads as absent, for every kind.
TEST(EventLog, DescribeSurvivesDetailsOfTheWrongType) {
  auto e = EventFromJsonLine(
      R"({"detail":{"attempt":1,"pid":4242,"devices":"0,1","master_port":1844674407370955161540123},)"
      R"("job":3,"kind":"launch","t_ms":1200})");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(Describe(*e), "attempt 1 pid 4242 CUDA_VISIBLE_DEVICES=0,1");
  e->detail["master_port"] = "40123";
  EXPECT_EQ(Describe(*e), "attempt 1 pid 4242 CUDA_VISIBLE_DEVICES=0,1");
  e->detail["master_port"] = 40123;
  EXPECT_EQ(Describe(*e), "attempt 1 pid 4242 CUDA_VISIBLE_DEVICES=0,1 MASTER_PORT=40123");
  Event exit{.kind = EventKind::kExit,
             .job = JobId(1),
             .detail = {{"how", "exit 0"}, {"after", "preemption"}, {"checkpointed", "yes"}}};
  EXPECT_EQ(Describe(exit),
            "exit 0 after preemption (killed at the end of its grace period, requeued)");
  const nlohmann::json odd = {{"how", 7},           {"after", "preemption"}, {"checkpointed", "x"},
                              {"master_port", "x"}, {"gpus", "n0"},          {"reason", nullptr},
                              {"pid", "x"},         {"until_ms", true},      {"name", {1}}};
  for (const auto& info : EventKinds()) {
    Event any{.kind = info.kind, .job = JobId(1), .detail = odd};
    (void)Describe(any);  // threw json::type_error before
  }
}

TEST(EventLog, CapacityCarriesTheUsableGpusOfANode) {
  // Node 2 keeps GPUs 0, 1 and 3 (GPU 2 held outside the scheduler): mask 0b1011 = 11.
  Event e = CapacityEvent(42, 2, 0b1011, "GPU held by Slurm job 17");
  EXPECT_EQ(ToJsonLine(e),
            R"({"detail":{"node":2,"reason":"GPU held by Slurm job 17","usable":[0,1,3]},)"
            R"("job":null,"kind":"capacity","t_ms":42})");
  auto back = EventFromJsonLine(ToJsonLine(e));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(MaskFromJson(back->detail["usable"]), uint64_t{0b1011});
  EXPECT_EQ(Describe(*back), "node 2: 3 GPUs usable (0-1+3): GPU held by Slurm job 17");
  EXPECT_EQ(Describe(CapacityEvent(1, 0, 0, "down")), "node 0: 0 GPUs usable: down");
  // Not masks: duplicates, out of range, not integers.
  EXPECT_FALSE(MaskFromJson(nlohmann::json::parse("[1,1]")));
  EXPECT_FALSE(MaskFromJson(nlohmann::json::parse("[64]")));
  EXPECT_FALSE(MaskFromJson(nlohmann::json::parse(R"(["0"])")));
  EXPECT_EQ(MaskFromJson(nlohmann::json::parse("[]")), uint64_t{0});
  Event ev{.kind = EventKind::kEvict,
           .job = JobId(3),
           .detail = {{"gpus", GpusToJson({{2, 2}})}, {"reason", "node down"}}};
  EXPECT_EQ(Describe(ev), "GPUs n2:2: node down");
}

}  // namespace
}  // namespace tiresias
