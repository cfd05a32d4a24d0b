// `tiresias whatif --journal`: the live daemon's journal replayed (the live run as its core saw
// it) and the stream of its finished jobs simulated under another configuration.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/simulator.h"
#include "store/job_record.h"

namespace tiresias {

// Empty fields: the live configuration's.
struct WhatIfConfig {
  std::string policy, placement, cluster;
  std::vector<std::string> opts, popts;
  double overhead = 0;  // restore seconds per resume (the live times already hold it)
  // A tenants file for the replay; "" = the live tenants (the last the journal set), "none" =
  // no tenants.
  std::string tenants;
};

struct WhatIfRun {
  SimResult live, whatif;  // the finished jobs: as they ran, as they would have
  std::map<JobId, JobRecord> records;
  std::string summary;
};

StatusOr<WhatIfRun> ReplayJournal(const std::string& path, const WhatIfConfig& config);

}  // namespace tiresias
