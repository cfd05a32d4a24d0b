// The event vocabulary: the kind table, JSON forms and sentences (see event_log.h).
#include "core/event_log.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

#include "core/tenants.h"

namespace tiresias {

const std::vector<EventKindInfo>& EventKinds() {
  static const std::vector<EventKindInfo> kAll = {
      {EventKind::kSubmit, "submit", true},        {EventKind::kFinish, "finish", true},
      {EventKind::kCancel, "cancel", true},        {EventKind::kTick, "tick", true},
      {EventKind::kLaunch, "launch", true},        {EventKind::kDrain, "drain", true},
      {EventKind::kReject, "reject", false},       {EventKind::kStart, "start", false},
      {EventKind::kPreempt, "preempt", false},     {EventKind::kExit, "exit", false},
      {EventKind::kAdopt, "adopt", false},         {EventKind::kRelaunch, "relaunch", false},
      {EventKind::kInterrupt, "interrupt", true},  {EventKind::kDemote, "demote", false},
      {EventKind::kPromote, "promote", false},     {EventKind::kEligible, "eligible", true},
      {EventKind::kRequeue, "requeue", true},      {EventKind::kCapacity, "capacity", true},
      {EventKind::kEvict, "evict", false},         {EventKind::kCheckpoint, "checkpoint", true},
      {EventKind::kTenants, "tenants", true},      {EventKind::kCleanup, "cleanup", false},
      {EventKind::kTimeLimit, "timelimit", false}, {EventKind::kRelocate, "relocate", true},
      {EventKind::kHold, "hold", false},
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
               .detail = {{"gpus", GpusToJson(a.alloc.Gpus())}, {"reason", a.reason()}}};
}

std::string QueueName(int queue) {
  return fmt::format("Q{}", queue + 1);
}

Event EventOf(JobId job, Time at, int from_queue, int to_queue) {
  return Event{.t = at,
               .kind = to_queue > from_queue ? EventKind::kDemote : EventKind::kPromote,
               .job = job,
               .detail = {{"from", QueueName(from_queue)}, {"to", QueueName(to_queue)}}};
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

Event CapacityEvent(Time t, int node, uint64_t mask, const std::string& reason, uint64_t stopping) {
  Event e{.t = t,
          .kind = EventKind::kCapacity,
          .detail = {{"node", node}, {"usable", MaskToJson(mask)}, {"reason", reason}}};
  if (stopping != 0) e.detail["stopping"] = MaskToJson(stopping);
  return e;
}

std::string ToJsonLine(const Event& e) {
  nlohmann::json j = {{"t_ms", e.t}, {"kind", ToString(e.kind)}, {"detail", e.detail}};
  j["job"] = e.job == JobId() ? nlohmann::json(nullptr) : nlohmann::json(e.job.value());
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

StatusOr<Event> EventFromJsonLine(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("not a JSON object");
  const auto t = IntField(j, "t_ms");
  if (!t || *t < 0) {
    return InvalidArgument("field 't_ms': missing or not a non-negative integer");
  }
  if (!j.contains("kind") || !j["kind"].is_string()) {
    return InvalidArgument("field 'kind': missing or not a string");
  }
  auto kind = ParseEventKind(j["kind"].get<std::string>());
  if (!kind) {
    return InvalidArgument(
        fmt::format("field 'kind': unknown kind '{}'", j["kind"].get<std::string>()));
  }
  Event e{.t = *t, .kind = *kind};
  if (j.contains("job") && !j["job"].is_null()) {
    const auto job = IntField(j, "job");
    if (!job || *job < 0) return InvalidArgument("field 'job': not null or a non-negative integer");
    e.job = JobId(*job);
  }
  if (j.contains("detail")) {
    if (!j["detail"].is_object()) return InvalidArgument("field 'detail': not a JSON object");
    e.detail = j["detail"];
  }
  return e;
}

namespace {

// Fields of a detail for a sentence; a field of another type reads as absent.
std::string Str(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Num(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_number() ? it->dump() : "?";
}

// A list of node names ("node1,node2"); the strings of the array only.
std::string NodeList(const nlohmann::json& d) {
  auto it = d.find("nodes");
  std::string out;
  if (it == d.end() || !it->is_array()) return out;
  for (const auto& n : *it) {
    if (!n.is_string()) continue;
    if (!out.empty()) out += ",";
    out += n.get<std::string>();
  }
  return out;
}

}  // namespace

// An integer field of a JSON object, if it is one that fits int64 (never a conversion of a
// float or of a larger unsigned value, which would be undefined or wrap).
std::optional<int64_t> IntField(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  if (it == d.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() && it->get<uint64_t>() > uint64_t{INT64_MAX}) return std::nullopt;
  return it->get<int64_t>();
}

// A boolean field, false when absent or of another type.
bool BoolField(const nlohmann::json& d, const char* key) {
  auto it = d.find(key);
  return it != d.end() && it->is_boolean() && it->get<bool>();
}

std::string Describe(const Event& e, std::optional<int64_t> epoch_ms) {
  const nlohmann::json& d = e.detail;
  // A core time in a detail: an ISO-8601 wall time when the epoch is known.
  auto when = [&](const char* key) {
    const auto t = IntField(d, key);
    if (!t) return std::string("?");
    if (!epoch_ms) return fmt::format("t={} ms", *t);
    const auto wall =
        std::chrono::system_clock::time_point(std::chrono::milliseconds(*t + *epoch_ms));
    return fmt::format("{:%FT%T}Z", std::chrono::floor<std::chrono::seconds>(wall));
  };
  switch (e.kind) {
    case EventKind::kSubmit:
      return fmt::format("{} ({} GPUs)", Str(d, "name"), Num(d, "gpus"));
    case EventKind::kFinish:
      return Str(d, "how");
    case EventKind::kCancel:  // (a daemon's end of a job the core did not run: `how`)
      return !Str(d, "why").empty()   ? Str(d, "why")
             : !Str(d, "how").empty() ? Str(d, "how")
                                      : "by request";
    case EventKind::kTick:
      return "";
    case EventKind::kLaunch: {
      std::string out = Str(d, "engine_job").empty()
                            ? fmt::format("attempt {} pid {} CUDA_VISIBLE_DEVICES={}",
                                          Num(d, "attempt"), Num(d, "pid"), Str(d, "devices"))
                            : fmt::format("attempt {} Slurm job {} on {}", Num(d, "attempt"),
                                          Str(d, "engine_job"), NodeList(d));
      if (IntField(d, "master_port").value_or(0) > 0)
        out += " MASTER_PORT=" + Num(d, "master_port");
      return out;
    }
    case EventKind::kDrain:
      if (!Str(d, "why").empty()) {  // not launched: a wait for the engine, a pause, a restart
        return IntField(d, "until_ms") == e.t
                   ? fmt::format(
                         "not launched yet; its service counts from now at the earliest: {}",
                         Str(d, "why"))
                   : fmt::format("not launched yet, no service counted until {} at least: {}",
                                 when("until_ms"), Str(d, "why"));
      }
      return fmt::format(
          "waiting for processes told to stop to release its GPUs (at the latest {})",
          when("until_ms"));
    case EventKind::kReject:
    case EventKind::kRelaunch:
      return Str(d, "reason");
    case EventKind::kEligible:
      return BoolField(d, "eligible") ? "released: eligible to run" : "held: " + Str(d, "why");
    case EventKind::kRequeue:
      return "requeued by " + Str(d, "by") + (BoolField(d, "hold") ? ", and held" : "");
    case EventKind::kHold:
      if (BoolField(d, "engine")) {  // an admin's hold in the cluster's engine
        return BoolField(d, "held") ? "held by an admin in " + Str(d, "by") +
                                          (d.contains("why") ? ": " + Str(d, "why") : "")
                                    : "released in " + Str(d, "by") + " (its admin's hold ended)";
      }
      return fmt::format(
          "{} by {}{}", BoolField(d, "held") ? "held" : "released", Str(d, "by"),
          BoolField(d, "admin") ? " (an admin's hold: only an admin releases it)" : "");
    case EventKind::kStart:
    case EventKind::kPreempt:
      return fmt::format("GPUs {}: {}",
                         Allocation::Of(GpusFromJson(d.value("gpus", nlohmann::json()))).str(),
                         Str(d, "reason"));
    case EventKind::kExit: {
      std::string out = Str(d, "how");
      if (!Str(d, "after").empty()) out += " after " + Str(d, "after");
      if (BoolField(d, "completed")) {
        out += " (its work complete: done file)";
      } else if (BoolField(d, "lost")) {  // its node failed (or the engine requeued it)
        const int64_t lost_ms = IntField(d, "lost_gpu_ms").value_or(0);
        out += lost_ms > 0 ? fmt::format(
                                 " (lost with its node: its work since its last "
                                 "checkpoint, {:.1f} GPU-s, is lost; requeued)",
                                 static_cast<double>(lost_ms) / 1000.0)
                           : " (lost with its node: no work since its last checkpoint; requeued)";
      } else if (Str(d, "after") == "preemption" || Str(d, "after") == "requeue") {
        out += BoolField(d, "checkpointed") ? " (checkpointed, requeued)"
                                            : " (killed at the end of its grace period, requeued)";
      }
      return out;
    }
    case EventKind::kAdopt:  // (a cluster engine's run: its job, whose id is no pid)
      return Str(d, "engine_job").empty()
                 ? fmt::format("process {} survived the restart", Num(d, "pid"))
                 : fmt::format("Slurm job {} survived the restart", Str(d, "engine_job"));
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
    case EventKind::kCheckpoint:
      return fmt::format("checkpoint complete at {}", when("at_ms"));
    case EventKind::kTenants: {
      const auto c = d.value("config", nlohmann::json());
      if (!c.is_object()) return "no tenants: one cluster, no quotas";
      std::string vcs;
      for (const auto& v : c.value("vcs", nlohmann::json::array())) {
        vcs += fmt::format("{}{}", vcs.empty() ? "" : ", ", v.value("name", "?"));
        if (v.contains("quota")) vcs += fmt::format(" ({} GPUs)", v["quota"].dump());
      }
      const std::string rules = TenantRules(c.value("quota_lead", 0),
                                            ParseProtect(c.value("protect", std::string("none")))
                                                .value_or(TenantConfig::Protect::kNone));
      return fmt::format("tenants{}: {}{}", Str(d, "file").empty() ? "" : " from " + Str(d, "file"),
                         vcs, rules.empty() ? "" : "; " + rules);
    }
    case EventKind::kInterrupt:
      return fmt::format("{}; service kept up to {}", Str(d, "reason"), when("last_alive_ms"));
    case EventKind::kRelocate:
      return fmt::format(
          "on GPUs {} that another job's stopping process still holds: asked to move to GPUs "
          "freed elsewhere (a start follows if it moved)",
          Allocation::Of(GpusFromJson(d.value("gpus", nlohmann::json()))).str());
    case EventKind::kTimeLimit:
      if (!Str(d, "cancel").empty()) {
        return fmt::format("cancelled ({}) in its time limit's grace period: it ends timed out",
                           Str(d, "cancel"));
      }
      return fmt::format(
          "time limit {} reached: told to stop (the checkpoint signal), killed "
          "after its grace",
          Str(d, "limit"));
    case EventKind::kCleanup:
      return fmt::format("its directory {} removed {} after it ended (serve --keep-finished)",
                         Str(d, "dir"), Str(d, "after"));
    case EventKind::kDemote:
      return fmt::format("demoted from {} to {}", Str(d, "from"), Str(d, "to"));
    case EventKind::kPromote:
      return fmt::format("promoted from {} to {} (waited long enough)", Str(d, "from"),
                         Str(d, "to"));
  }
  return "";
}

}  // namespace tiresias
