// The event vocabulary: the kind table, JSON forms and sentences (see event_log.h).
#include "core/event_log.h"

#include <fmt/format.h>

namespace tiresias {

const std::vector<EventKindInfo>& EventKinds() {
  static const std::vector<EventKindInfo> kAll = {
      {EventKind::kSubmit, "submit", true},       {EventKind::kFinish, "finish", true},
      {EventKind::kCancel, "cancel", true},       {EventKind::kTick, "tick", true},
      {EventKind::kLaunch, "launch", true},       {EventKind::kHold, "hold", true},
      {EventKind::kReject, "reject", false},      {EventKind::kStart, "start", false},
      {EventKind::kPreempt, "preempt", false},    {EventKind::kExit, "exit", false},
      {EventKind::kAdopt, "adopt", false},        {EventKind::kRequeue, "requeue", false},
      {EventKind::kInterrupt, "interrupt", true}, {EventKind::kCapacity, "capacity", true},
      {EventKind::kEvict, "evict", false},
  };
  return kAll;
}

const EventKindInfo& Info(EventKind k) {
  return EventKinds()[static_cast<size_t>(k)];
}

std::string_view ToString(EventKind k) {
  return Info(k).name;
}

std::optional<EventKind> ParseEventKind(std::string_view name) {
  for (const auto& i : EventKinds()) {
    if (i.name == name) return i.kind;
  }
  return std::nullopt;
}

Event EventOf(const Action& a, Time t) {
  return Event{.t = t,
               .kind = a.kind == Action::Kind::kStart ? EventKind::kStart : EventKind::kPreempt,
               .job = a.job,
               .detail = {{"gpus", GpusToJson(a.alloc.Gpus())}, {"reason", a.reason}}};
}

nlohmann::json GpusToJson(const std::vector<GpuId>& gpus) {
  nlohmann::json out = nlohmann::json::array();
  for (const GpuId& g : gpus) out.push_back({g.node, g.index});
  return out;
}

std::vector<GpuId> GpusFromJson(const nlohmann::json& j) {
  std::vector<GpuId> out;
  if (!j.is_array()) return out;
  for (const auto& g : j) {
    if (!g.is_array() || g.size() != 2 || !g[0].is_number_integer() || !g[1].is_number_integer()) {
      return {};
    }
    const int64_t node = g[0].get<int64_t>(), index = g[1].get<int64_t>();
    if (node < 0 || node > INT32_MAX || index < 0 || index >= kMaxGpusPerNode) return {};
    out.push_back(GpuId{static_cast<int>(node), static_cast<int>(index)});
  }
  return out;
}

nlohmann::json MaskToJson(uint64_t mask) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i < kMaxGpusPerNode; ++i) {
    if (mask >> i & 1) out.push_back(i);
  }
  return out;
}

std::optional<uint64_t> MaskFromJson(const nlohmann::json& j) {
  if (!j.is_array()) return std::nullopt;
  uint64_t mask = 0;
  for (const auto& i : j) {
    if (!i.is_number_integer()) return std::nullopt;
    const int64_t v = i.get<int64_t>();
    if (v < 0 || v >= kMaxGpusPerNode || (mask >> v & 1)) return std::nullopt;
    mask |= uint64_t{1} << v;
  }
  return mask;
}

Event CapacityEvent(Time t, int node, uint64_t mask, const std::string& reason) {
  return Event{.t = t,
               .kind = EventKind::kCapacity,
               .detail = {{"node", node}, {"usable", MaskToJson(mask)}, {"reason", reason}}};
}

std::string ToJsonLine(const Event& e) {
  nlohmann::json j = {{"t_ms", e.t}, {"kind", ToString(e.kind)}, {"detail", e.detail}};
  j["job"] = e.job == JobId() ? nlohmann::json(nullptr) : nlohmann::json(e.job.value());
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

StatusOr<Event> EventFromJsonLine(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("not a JSON object");
  if (!j.contains("t_ms") || !j["t_ms"].is_number_integer()) {
    return InvalidArgument("field 't_ms': missing or not an integer");
  }
  if (!j.contains("kind") || !j["kind"].is_string()) {
    return InvalidArgument("field 'kind': missing or not a string");
  }
  auto kind = ParseEventKind(j["kind"].get<std::string>());
  if (!kind) {
    return InvalidArgument(
        fmt::format("field 'kind': unknown kind '{}'", j["kind"].get<std::string>()));
  }
  Event e{.t = j["t_ms"].get<Time>(), .kind = *kind};
  if (j.contains("job") && j["job"].is_number_integer()) e.job = JobId(j["job"].get<int64_t>());
  if (j.contains("detail") && j["detail"].is_object()) e.detail = j["detail"];
  return e;
}

namespace {

std::string Str(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Num(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_number() ? it->dump() : "?";
}

}  // namespace

std::string Describe(const Event& e) {
  const nlohmann::json& d = e.detail;
  switch (e.kind) {
    case EventKind::kSubmit:
      return fmt::format("{} ({} GPUs)", Str(d, "name"), Num(d, "gpus"));
    case EventKind::kFinish:
      return Str(d, "how");
    case EventKind::kCancel:
    case EventKind::kTick:
      return "";
    case EventKind::kLaunch: {
      std::string out = fmt::format("attempt {} pid {} CUDA_VISIBLE_DEVICES={}", Num(d, "attempt"),
                                    Num(d, "pid"), Str(d, "devices"));
      if (d.value("master_port", 0) > 0) out += " MASTER_PORT=" + Num(d, "master_port");
      return out;
    }
    case EventKind::kHold:
      return fmt::format("waiting for GPUs to be released; progress from t={} ms",
                         Num(d, "until_ms"));
    case EventKind::kReject:
    case EventKind::kRequeue:
      return Str(d, "reason");
    case EventKind::kStart:
    case EventKind::kPreempt:
      return fmt::format("GPUs {}: {}",
                         Allocation::Of(GpusFromJson(d.value("gpus", nlohmann::json()))).str(),
                         Str(d, "reason"));
    case EventKind::kExit: {
      std::string out = Str(d, "how");
      if (!Str(d, "after").empty()) out += " after " + Str(d, "after");
      if (Str(d, "after") == "preemption") {
        out += d.value("checkpointed", false)
                   ? " (checkpointed, requeued)"
                   : " (killed at the end of its grace period, requeued)";
      }
      return out;
    }
    case EventKind::kAdopt:
      return fmt::format("process {} survived the restart", Num(d, "pid"));
    case EventKind::kCapacity: {
      const auto mask = MaskFromJson(d.value("usable", nlohmann::json()));
      std::vector<GpuId> gpus;
      for (int i = 0; mask && i < kMaxGpusPerNode; ++i) {
        if (*mask >> i & 1) gpus.push_back({0, i});
      }
      const std::string list = Allocation::Of(gpus).str();  // "n0:0-3"
      return fmt::format("node {}: {} GPUs usable{}{}", Num(d, "node"), gpus.size(),
                         gpus.empty() ? "" : " (" + list.substr(list.find(':') + 1) + ")",
                         Str(d, "reason").empty() ? "" : ": " + Str(d, "reason"));
    }
    case EventKind::kEvict:
      return fmt::format("GPUs {}: {}",
                         Allocation::Of(GpusFromJson(d.value("gpus", nlohmann::json()))).str(),
                         Str(d, "reason"));
    case EventKind::kInterrupt:
      return fmt::format("{}; service kept up to t={} ms", Str(d, "reason"),
                         Num(d, "last_alive_ms"));
  }
  return "";
}

}  // namespace tiresias
