// Small cores and jobs for the forecast tests (engine/forecast_test.cc,
// engine/forecast_durations_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core_builder.h"
#include "engine/file_data_source.h"

namespace tiresias::forecast_fixture {

// A core of one node with `gpus` GPUs, count placement.
inline std::unique_ptr<Scheduler> Core(const std::string& policy, std::vector<std::string> opts,
                                       int gpus, Duration overhead = 0) {
  FileDataSource files;
  auto core = BuildCore(CoreConfig{.topo = *Topology::Create(1, 1, gpus),
                                   .policy = policy,
                                   .policy_opts = std::move(opts),
                                   .placement = "count",
                                   .options = {.restore_overhead = overhead}},
                        files);
  EXPECT_TRUE(core.ok()) << core.status().message();
  return std::move(*core);
}

inline JobSpec Spec(int64_t id, int gpus, Time submit, std::optional<Duration> d) {
  return {.id = JobId(id), .gpus = gpus, .submit = submit, .duration = d};
}

// dlas with one queue on `gpus` GPUs, both jobs submitted at 0: `running` has started and
// `waiting` waits behind it.
inline std::unique_ptr<Scheduler> OneRunsOneWaits(int gpus, const JobSpec& running,
                                                  const JobSpec& waiting) {
  auto core = Core("dlas", {"queues=1"}, gpus);
  EXPECT_TRUE(core->Submit(running, 0).ok());
  EXPECT_TRUE(core->Submit(waiting, 0).ok());
  (void)core->Schedule(0);
  EXPECT_TRUE(core->Find(running.id)->running());
  EXPECT_FALSE(core->Find(waiting.id)->running());
  return core;
}

}  // namespace tiresias::forecast_fixture
