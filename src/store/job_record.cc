// LiveState names, the GPUs column format and the JSON form of a job request.
#include "store/job_record.h"

#include <fmt/format.h>

#include <array>
#include <cstdint>

#include "common/strings.h"

namespace tiresias {
namespace {
constexpr std::array<const char*, 8> kNames = {"pending",  "starting", "running",   "preempting",
                                               "finished", "failed",   "cancelled", "timeout"};
constexpr std::array<const char*, 4> kDependencyKinds = {"afterok", "afterany", "afternotok",
                                                         "singleton"};
}  // namespace

std::string DependencyTarget(const Dependency& d) {
  if (d.kind == Dependency::Kind::kSingleton) return "";
  return d.task >= 0 ? fmt::format("{}_{}", d.job.value(), d.task) : d.job.str();
}

std::string RefOf(const JobRecord& r) {
  return r.array_id != JobId() ? fmt::format("{}_{}", r.array_id.value(), r.array_index)
                               : r.id.str();
}

std::string ToString(const Dependency& d) {
  const char* kind = kDependencyKinds[static_cast<size_t>(d.kind)];
  if (d.kind == Dependency::Kind::kSingleton) return kind;
  return fmt::format("{}:{}", kind, DependencyTarget(d));
}

std::optional<Dependency> ParseDependency(std::string_view kind, std::string_view ref) {
  Dependency d;
  size_t k = 0;
  while (k < kDependencyKinds.size() && kind != kDependencyKinds[k]) ++k;
  if (k == kDependencyKinds.size()) return std::nullopt;
  d.kind = static_cast<Dependency::Kind>(k);
  if (d.kind == Dependency::Kind::kSingleton) {
    return ref.empty() ? std::optional<Dependency>(d) : std::nullopt;
  }
  // Digits only (no sign, no spaces), as a job id is written.
  const auto number = [](std::string_view s) -> std::optional<int64_t> {
    if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != s.npos) {
      return std::nullopt;
    }
    return ParseInt(s);
  };
  const size_t under = ref.find('_');
  const auto job = number(ref.substr(0, under));
  if (!job || *job < 1) return std::nullopt;
  d.job = JobId(*job);
  if (under != std::string_view::npos) {
    const auto task = number(ref.substr(under + 1));
    if (!task || *task > INT32_MAX) return std::nullopt;
    d.task = static_cast<int>(*task);
  }
  return d;
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
    const std::string_view kind = std::string_view(text).substr(0, colon);
    const std::string_view ref =
        colon == std::string::npos ? std::string_view() : std::string_view(text).substr(colon + 1);
    if (auto dep = ParseDependency(kind, ref)) {
      r.dependencies.push_back(*dep);
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
  nlohmann::json j = {{"job", r.engine_job}, {"nodes", r.nodes}};
  if (r.held_in_engine) j["held"] = true;
  if (r.lost_runs > 0) j["lost_runs"] = r.lost_runs;
  return j;
}

void EngineFromJson(const nlohmann::json& j, JobRecord& r) {
  r.engine_job =
      j.is_object() && j.contains("job") && j["job"].is_string() ? j["job"].get<std::string>() : "";
  r.held_in_engine =
      j.is_object() && j.contains("held") && j["held"].is_boolean() && j["held"].get<bool>();
  r.lost_runs = j.is_object() && j.contains("lost_runs") && j["lost_runs"].is_number_integer()
                    ? j["lost_runs"].get<int>()
                    : 0;
  r.nodes.clear();
  if (j.is_object() && j.contains("nodes") && j["nodes"].is_array()) {
    for (const auto& n : j["nodes"]) {
      if (n.is_string()) r.nodes.push_back(n.get<std::string>());
    }
  }
}

}  // namespace tiresias
