// A job submission as the daemon receives it, and the one place that checks it. The API only
// turns JSON into a SubmitRequest (types, unknown fields); Validate holds every rule about
// the values, so a request from any front end meets the same rules with the same words.
// Rules that depend on the running cluster (the policy needs a duration, the job can never
// fit) are checked by LiveScheduler::Submit against its core.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace tiresias {

// Numbers are kept as received (wide types), so Validate sees and names the real value.
struct SubmitRequest {
  std::string name, user, model, cwd;
  int64_t gpus = 1;
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::optional<double> duration_s;  // the user's estimate; only oracle policies use it
  // The submitter's account, set by the API from the caller's identity (never from the
  // request body); the job runs as it when serve runs as root.
  std::optional<uint32_t> uid, gid;
  // The estimate in ms; call after Validate.
  std::optional<Duration> duration() const;
};

// The longest duration a request may give: ten years (more is a typo, and ms would overflow
// sums of many jobs).
inline constexpr double kMaxRequestDurationS = 315'360'000;
// The most GPUs a request may ask for before the cluster is consulted.
inline constexpr int kMaxRequestGpus = 1 << 20;

// Variables the scheduler sets for each run (CUDA_VISIBLE_DEVICES, TIRESIAS_*, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT); a job's env may not set them.
bool IsSchedulerEnv(std::string_view name);

// InvalidArgument naming the field ("field 'gpus': ...") for the first rule broken.
Status Validate(const SubmitRequest& r);

}  // namespace tiresias
