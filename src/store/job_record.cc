// LiveState names, the GPUs column format and the JSON form of a job request.
#include "store/job_record.h"

#include <array>

namespace tiresias {
namespace {
constexpr std::array<const char*, 8> kNames = {"pending",  "starting", "running",   "preempting",
                                               "finished", "failed",   "cancelled", "timeout"};
constexpr std::array<const char*, 3> kDependencyKinds = {"afterok", "afterany", "afternotok"};
}  // namespace

std::string ToString(const Dependency& d) {
  return std::string(kDependencyKinds[static_cast<size_t>(d.kind)]) + ":" + d.job.str();
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
  return s == LiveState::kFinished || s == LiveState::kFailed || s == LiveState::kCancelled ||
         s == LiveState::kTimeout;
}

nlohmann::json RequestToJson(const JobRecord& r) {
  nlohmann::json env = nlohmann::json::object();
  for (const auto& [k, v] : r.env) env[k] = v;
  nlohmann::json j = {{"name", r.name}, {"user", r.user}, {"model", r.model}, {"gpus", r.gpus},
                      {"argv", r.argv}, {"cwd", r.cwd},   {"env", env}};
  if (r.duration) j["duration_ms"] = *r.duration;
  if (r.uid >= 0) j["uid"] = r.uid;
  if (r.gid >= 0) j["gid"] = r.gid;
  if (r.time_limit) j["time_limit_ms"] = *r.time_limit;
  if (!r.dependencies.empty()) {
    nlohmann::json deps = nlohmann::json::array();
    for (const Dependency& d : r.dependencies) deps.push_back(ToString(d));
    j["dependencies"] = deps;
  }
  if (r.array_id != JobId()) {
    j["array"] = {{"id", r.array_id.value()}, {"index", r.array_index}, {"limit", r.array_limit}};
  }
  if (!r.output.empty()) j["output"] = r.output;
  if (!r.error.empty()) j["error"] = r.error;
  if (r.tasks_per_gpu > 0) j["tasks_per_gpu"] = r.tasks_per_gpu;
  if (r.keep_checkpoints) j["keep_checkpoints"] = true;
  if (r.stop_at_checkpoint > 0) j["stop_at_checkpoint_ms"] = r.stop_at_checkpoint;
  if (!r.vc.empty()) j["vc"] = r.vc;
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
  if (j.contains("time_limit_ms")) r.time_limit = j["time_limit_ms"].get<Duration>();
  r.dependencies.clear();
  for (const auto& d : j.value("dependencies", nlohmann::json::array())) {
    const std::string text = d.get<std::string>();
    const size_t colon = text.find(':');
    for (size_t k = 0; k < kDependencyKinds.size(); ++k) {
      if (text.substr(0, colon) == kDependencyKinds[k]) {
        r.dependencies.push_back(
            {static_cast<Dependency::Kind>(k), JobId(std::stoll(text.substr(colon + 1)))});
      }
    }
  }
  if (j.contains("array")) {
    r.array_id = JobId(j["array"].value("id", int64_t{-1}));
    r.array_index = j["array"].value("index", -1);
    r.array_limit = j["array"].value("limit", 0);
  }
  r.output = j.value("output", "");
  r.error = j.value("error", "");
  r.tasks_per_gpu = j.value("tasks_per_gpu", 0);
  r.keep_checkpoints = j.value("keep_checkpoints", false);
  r.stop_at_checkpoint = j.value("stop_at_checkpoint_ms", Duration{0});
  r.vc = j.value("vc", "");
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
