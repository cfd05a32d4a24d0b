// Builds a scheduling core from a configuration of names and options, the way every driver
// (simulator, live daemon) does: the ordering and placement policies from their registries,
// the files their options name read by a DataSource. The one place that wires the pieces of
// a core together.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/data_source.h"
#include "core/scheduler.h"
#include "core/speed_model.h"
#include "core/topology.h"

namespace tiresias {

struct CoreConfig {
  Topology topo = *Topology::Create(1, 1, 1);
  std::string policy = "dlas";
  std::vector<std::string> policy_opts;
  std::string placement = "count";
  std::vector<std::string> placement_opts;
  SchedulerOptions options;
  std::shared_ptr<const SpeedModel> speed;  // null: every placement at packed speed
  // The version of the options' defaults that `policy_opts` was written against (0 = the
  // current one): state kept by an older build replays as it was decided (policy/registry.h).
  int defaults_version = 0;
  TenantConfig tenants;  // VCs with quotas (core/tenants.h); off with fewer than two
  // The engine gives every node of a job the same number of GPUs (Slurm): the placement is
  // wrapped in EvenSplit (placement/even_split.h), with each node's GPUs when they differ
  // (empty: the topology's).
  bool even_split = false;
  std::vector<int> node_gpus;
};

// The current version of the policy options' defaults.
int PolicyDefaultsVersion();

// InvalidArgument naming the policy or option for a bad configuration; the reader's error
// (file and line) for a file an option names that cannot be read.
StatusOr<std::unique_ptr<Scheduler>> BuildCore(const CoreConfig& cfg, const DataSource& data);

// Checks a policy and a placement with their options as BuildCore would, without a core.
Status ValidatePolicies(const std::string& policy, const std::vector<std::string>& policy_opts,
                        const std::string& placement,
                        const std::vector<std::string>& placement_opts, const DataSource& data);
// The given options of a valid policy and placement that change nothing (e.g. dlas' history=
// without threshold_quantiles): one line each, for the driver to print as a note.
std::vector<std::string> IneffectiveOptions(const std::string& policy,
                                            const std::vector<std::string>& policy_opts,
                                            const std::string& placement,
                                            const std::vector<std::string>& placement_opts);
// The policy's and the placement's names, and each option's name, type and range, on their
// own: not how options go together (3 queues with 1 threshold), nor files they name.
Status CheckOptionValues(const std::string& policy, const std::vector<std::string>& policy_opts,
                         const std::string& placement,
                         const std::vector<std::string>& placement_opts);
// The names of the options an ordering policy declares; InvalidArgument listing the valid
// policies for an unknown name.
StatusOr<std::vector<std::string>> PolicyOptionNames(const std::string& policy);
// The same for a placement policy.
StatusOr<std::vector<std::string>> PlacementOptionNames(const std::string& placement);

}  // namespace tiresias
