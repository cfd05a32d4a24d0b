// The rules every job submission meets (see submit_request.h).
#include "live/submit_request.h"

#include <fmt/format.h>

namespace tiresias {

bool IsSchedulerEnv(std::string_view name) {
  return name == "CUDA_VISIBLE_DEVICES" || name == "WORLD_SIZE" || name == "MASTER_ADDR" ||
         name == "MASTER_PORT" || name.starts_with("TIRESIAS_");
}

std::optional<Duration> SubmitRequest::duration() const {
  if (!duration_s) return std::nullopt;
  return static_cast<Duration>(*duration_s * kMsPerSecond);
}

Status Validate(const SubmitRequest& r) {
  if (r.argv.empty() || r.argv[0].empty()) {
    return InvalidArgument("field 'argv': missing (the command to run)");
  }
  // execve takes C strings: a NUL byte would silently cut an argument (or the directory, or a
  // value) short, so the job would run something other than what was asked.
  for (size_t i = 0; i < r.argv.size(); ++i) {
    if (r.argv[i].find('\0') != std::string::npos) {
      return InvalidArgument(fmt::format("field 'argv': argument {} contains a NUL byte", i));
    }
  }
  if (r.cwd.find('\0') != std::string::npos) {
    return InvalidArgument("field 'cwd': contains a NUL byte");
  }
  if (r.gpus < 1 || r.gpus > kMaxRequestGpus) {
    return InvalidArgument(
        fmt::format("field 'gpus': expected an integer in 1..{}, got {}", kMaxRequestGpus, r.gpus));
  }
  if (r.duration_s && !(*r.duration_s > 0 && *r.duration_s <= kMaxRequestDurationS)) {
    return InvalidArgument(fmt::format(
        "field 'duration_s': expected a positive number of seconds (at most ten years), got {}",
        *r.duration_s));
  }
  for (const auto& [k, v] : r.env) {
    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos) {
      return InvalidArgument(fmt::format("field 'env': '{}' is not a variable name", k));
    }
    if (v.find('\0') != std::string::npos) {
      return InvalidArgument(fmt::format("field 'env': the value of {} contains a NUL byte", k));
    }
    if (IsSchedulerEnv(k)) {
      return InvalidArgument(fmt::format(
          "field 'env': {} is set by the scheduler for each run and cannot be given", k));
    }
  }
  return Status::Ok();
}

}  // namespace tiresias
