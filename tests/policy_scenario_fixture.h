// Helpers of the narrated policy scenario tests (src/policy/dlas_scenario_test.cc,
// fifo_sjf_srtf_las_test.cc, policy_defaults_test.cc, scheduler_scenario_test.cc): a
// Scheduler on one node of `gpus` GPUs with a named ordering policy and count placement, a
// JobSpec in one call, a submit that must succeed, and a pass's actions and the waiting order
// as text. Units: times in ms, service in GPU-ms. In a named namespace: the helpers span files.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/scheduler.h"
#include "placement/registry.h"
#include "policy/registry.h"
#include "test_files.h"

namespace tiresias::policy_scenario_test {

inline std::unique_ptr<Scheduler> Make(const std::string& policy,
                                       const std::vector<std::string>& opts, int gpus = 4,
                                       SchedulerOptions so = {}) {
  auto p = MakeOrderingPolicy(policy, opts, TestFiles());
  EXPECT_TRUE(p.ok()) << p.status().message();
  auto pl = MakePlacementPolicy("count", {}, TestFiles());
  EXPECT_TRUE(pl.ok()) << pl.status().message();
  return std::make_unique<Scheduler>(*Topology::Create(1, 1, gpus), std::move(*p), std::move(*pl),
                                     so);
}

inline JobSpec J(int64_t id, int gpus, Time submit, std::optional<Duration> dur = std::nullopt) {
  return JobSpec{.id = JobId(id), .gpus = gpus, .submit = submit, .duration = dur};
}

// "preempt 1, start 2": the actions of one pass, in order.
inline std::string Str(const std::vector<Action>& acts) {
  std::string s;
  for (const auto& a : acts) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} {}", ToString(a.kind), a.job.value());
  }
  return s;
}

inline std::string Order(const Scheduler& s) {
  std::string o;
  for (JobId id : s.WaitingInOrder()) o += fmt::format("{}{}", o.empty() ? "" : " ", id.value());
  return o;
}

inline void Submit(Scheduler& s, const JobSpec& j, Time now) {
  Status st = s.Submit(j, now);
  ASSERT_TRUE(st.ok()) << st.message();
}

}  // namespace tiresias::policy_scenario_test
