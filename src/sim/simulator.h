// The trace-driven simulator: a driver that feeds a job list to the scheduling core on a
// simulated clock and plays the executor (completion times from the speed model). No
// scheduling logic lives here: every decision is the core's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/job.h"
#include "core/speed_model.h"
#include "core/topology.h"

namespace tiresias {

// A realistic default restore cost per preemption (see README: the Tiresias testbed
// measured ~62 s on average; Pollux's simulator charges 30 s per re-allocation).
inline constexpr Duration kDefaultPreemptOverhead = Seconds(30);

struct SimConfig {
  Topology topo = *Topology::Create(1, 1, 1);
  std::string policy = "dlas";
  std::vector<std::string> policy_opts;
  std::string placement = "count";
  std::vector<std::string> placement_opts;
  Duration preempt_overhead = kDefaultPreemptOverhead;
  std::shared_ptr<const SpeedModel> speed;  // null: every placement runs at packed speed
  std::string label;                        // for reports; default "policy+placement"
};

struct JobResult {
  JobId id;
  int gpus = 0;
  std::string model;
  JobState state = JobState::kPending;
  Time submit = 0, first_start = -1, end = -1;
  int preemptions = 0, promotions = 0, final_queue = 0;
  Duration held = 0, overhead = 0, executed = 0;
  std::string reject_reason;
};

struct SimResult {
  std::string label;
  std::string topology;
  int total_gpus = 0;
  std::vector<JobResult> jobs;  // in submission order
  uint64_t passes = 0;          // scheduling passes that ran
  uint64_t events = 0;          // distinct event times processed
};

// Validates the configuration (unknown policy or option -> InvalidArgument) and runs.
// `jobs` must be sorted by (submit, id) (ReadTrace does this).
StatusOr<SimResult> RunSimulation(const SimConfig& cfg, const std::vector<JobSpec>& jobs);

}  // namespace tiresias
