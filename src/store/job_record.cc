// LiveState names, the GPUs column format and the JSON form of a job request.
#include "store/job_record.h"

#include <array>

namespace tiresias {
namespace {
constexpr std::array<const char*, 7> kNames = {"pending",  "starting", "running",  "preempting",
                                               "finished", "failed",   "cancelled"};
}

const char* ToString(LiveState s) {
  return kNames[static_cast<size_t>(s)];
}

std::optional<LiveState> ParseLiveState(std::string_view s) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (s == kNames[i]) return static_cast<LiveState>(i);
  }
  return std::nullopt;
}

bool IsTerminal(LiveState s) {
  return s == LiveState::kFinished || s == LiveState::kFailed || s == LiveState::kCancelled;
}

nlohmann::json RequestToJson(const JobRecord& r) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : r.env) env[k] = v;
  nlohmann::json j = {{"name", r.name}, {"user", r.user}, {"model", r.model}, {"gpus", r.gpus},
                      {"argv", r.argv}, {"cwd", r.cwd},   {"env", env}};
  if (r.duration) j["duration_ms"] = *r.duration;
  if (r.uid >= 0) j["uid"] = r.uid;
  if (r.gid >= 0) j["gid"] = r.gid;
  return j;
}

void RequestFromJson(const nlohmann::json& j, JobRecord& r) {
  r.name = j.value("name", "");
  r.user = j.value("user", "");
  r.model = j.value("model", "");
  r.gpus = j.value("gpus", 1);
  r.argv = j.value("argv", std::vector<std::string>{});
  r.cwd = j.value("cwd", "");
  r.env.clear();
  if (j.contains("env")) {
    for (const auto& [k, v] : j["env"].items()) r.env.emplace_back(k, v.get<std::string>());
  }
  if (j.contains("duration_ms")) r.duration = j["duration_ms"].get<Duration>();
  r.uid = j.value("uid", int64_t{-1});
  r.gid = j.value("gid", int64_t{-1});
}

nlohmann::json EngineToJson(const JobRecord& r) {
  return {{"job", r.engine_job}, {"nodes", r.nodes}};
}

void EngineFromJson(const nlohmann::json& j, JobRecord& r) {
  r.engine_job =
      j.is_object() && j.contains("job") && j["job"].is_string() ? j["job"].get<std::string>() : "";
  r.nodes.clear();
  if (j.is_object() && j.contains("nodes") && j["nodes"].is_array()) {
    for (const auto& n : j["nodes"]) {
      if (n.is_string()) r.nodes.push_back(n.get<std::string>());
    }
  }
}

}  // namespace tiresias
