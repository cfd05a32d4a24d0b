// LiveScheduler's read-only views for the API: jobs, explain, nodes, events and logs.
#include <fmt/format.h>

#include <bit>
#include <filesystem>
#include <fstream>

#include "common/strings.h"
#include "live/live_scheduler.h"

namespace tiresias {
namespace {

std::vector<int64_t> Ids(const std::vector<JobId>& ids) {
  std::vector<int64_t> out;
  for (JobId id : ids) out.push_back(id.value());
  return out;
}

}  // namespace

nlohmann::json LiveScheduler::ToJson(const JobRecord& r, Time now) const {
  const int64_t epoch = store_->epoch_ms();
  auto wall = [&](Time t) -> nlohmann::json {
    if (t < 0) return nullptr;
    return t + epoch;
  };
  nlohmann::json j = RequestToJson(r);
  j["id"] = r.id.value();
  j["state"] = ToString(r.state);
  j["submitted_at_ms"] = wall(r.submit);
  j["first_start_ms"] = wall(r.first_start);
  j["last_start_ms"] = wall(r.last_start);
  j["end_ms"] = wall(r.end);
  j["attempt"] = r.attempt;
  j["pid"] = r.pid;
  j["devices"] = r.devices;
  j["engine_job"] = r.engine_job;  // the Slurm job id ("" locally)
  j["nodes"] = r.nodes;
  if (const std::string es = executor_->EngineState(r.id); !es.empty()) j["engine_state"] = es;
  j["preemptions"] = r.preemptions;
  j["message"] = r.message;
  if (r.exit_code >= 0 || r.signal > 0) {
    j["exit_code"] = r.exit_code;
    j["signal"] = r.signal;
  }
  const Time waited_until = r.first_start >= 0 ? r.first_start : (r.end >= 0 ? r.end : now);
  j["wait_s"] = ToSeconds(waited_until - r.submit);
  if (const Job* cj = sched_->Find(r.id)) {
    const Time at = r.end >= 0 ? std::min(r.end, now) : now;
    j["attained_gpu_s"] = ToSeconds(cj->AttainedAt(std::max(at, cj->last_stop)));
    j["queue"] = cj->queue;
  }
  return j;
}

nlohmann::json LiveScheduler::List(std::optional<LiveState> only) {
  std::lock_guard lk(mu_);
  const Time now = Now();
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [id, r] : records_) {
    if (!only || r.state == *only) out.push_back(ToJson(r, now));
  }
  return out;
}

StatusOr<nlohmann::json> LiveScheduler::Get(JobId id) {
  std::lock_guard lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  return ToJson(it->second, Now());
}

StatusOr<nlohmann::json> LiveScheduler::Explain(JobId id) {
  std::lock_guard lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  const Time now = Now();
  const JobRecord& r = it->second;
  Explanation e = sched_->Explain(id, now);
  nlohmann::json j = {{"id", id.value()},
                      {"state", ToString(r.state)},
                      {"where", e.where},
                      {"rank", e.rank},
                      {"waiting_ahead", e.waiting_ahead},
                      {"running_ahead", e.running_ahead},
                      {"waiting_ahead_ids", Ids(e.waiting_ahead_ids)},
                      {"running_ahead_ids", Ids(e.running_ahead_ids)},
                      {"gpus_needed", e.gpus_needed},
                      {"gpus_free", e.gpus_free}};
  std::vector<std::string> reasons = e.reasons;
  if (r.state == LiveState::kStarting) {
    std::vector<std::string> holders;
    if (auto t = to_launch_.find(id); t != to_launch_.end()) {
      for (const GpuId& g : t->second) {
        auto owner = gpu_owner_.find(g);
        if (owner != gpu_owner_.end() && owner->second != id) {
          holders.push_back(
              cfg_.nodes.empty()
                  ? fmt::format("GPU {} (job {})", g.index, owner->second.value())
                  : fmt::format("GPU n{}:{} (job {})", g.node, g.index, owner->second.value()));
        }
      }
    }
    if (procs_.contains(id)) holders.push_back("its own previous attempt");
    reasons.insert(reasons.begin(),
                   fmt::format("scheduled to start; waiting for preempted processes to "
                               "checkpoint and exit: {}",
                               Join(holders, ", ")));
  } else if (r.state == LiveState::kPreempting) {
    reasons.insert(reasons.begin(), "preempted; its process is checkpointing (grace period)");
  }
  j["reasons"] = reasons;
  if (e.next_transition) {
    j["next_transition_in_s"] = ToSeconds(*e.next_transition - now);
  }
  return j;
}

nlohmann::json LiveScheduler::Nodes() {
  std::lock_guard lk(mu_);
  const std::vector<NodeSpec> cluster = ClusterNodes();
  const bool local = cfg_.nodes.empty();
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < cluster.size(); ++i) {
    const int node = static_cast<int>(i);
    const uint64_t usable = sched_->cluster().usable_mask(node);
    nlohmann::json gpus = nlohmann::json::array();
    int busy = 0;
    for (int g = 0; g < cluster[i].gpus; ++g) {
      nlohmann::json x = {{"index", g}, {"usable", (usable >> g & 1) != 0}};
      if (local) {
        const size_t k = static_cast<size_t>(g);
        x["device"] = k < cfg_.gpu_devices.size() ? cfg_.gpu_devices[k] : "";
        x["name"] = k < cfg_.gpu_names.size() ? cfg_.gpu_names[k] : "";
      }
      auto owner = gpu_owner_.find(GpuId{node, g});
      if (owner != gpu_owner_.end()) {
        x["job"] = owner->second.value();
        ++busy;
      } else {
        x["job"] = nullptr;
      }
      gpus.push_back(x);
    }
    nlohmann::json n = {{"name", cluster[i].name},
                        {"emulated", local && cfg_.emulated},
                        {"containment", executor_->Containment()},
                        {"gpus_total", cluster[i].gpus},
                        {"gpus_busy", busy},
                        {"gpus_usable", std::popcount(usable)},
                        {"gpus", gpus}};
    if (i < node_reports_.size()) {
      const NodeReport& r = node_reports_[i];
      n["state"] = r.state;
      n["reason"] = r.reason;
      n["gpus_outside"] = r.gpus_outside;
      n["outside_jobs"] = r.outside_jobs;
    }
    list.push_back(n);
  }
  nlohmann::json out = {{"policy", cfg_.policy},
                        {"placement", cfg_.placement},
                        {"executor", cfg_.executor},
                        {"nodes", list}};
  if (auto lost = executor_->ContactLost()) {
    out["engine_unreachable"] = {{"since_ms", lost->first}, {"why", lost->second}};
  }
  return out;
}

StatusOr<nlohmann::json> LiveScheduler::Events(int64_t after, int limit) {
  std::lock_guard lk(mu_);
  auto ev = store_->LoadEvents(after, limit, /*inputs_only=*/false, /*skip_ticks=*/true);
  if (!ev.ok()) return ev.status();
  nlohmann::json out = nlohmann::json::array();
  for (const EventRow& row : *ev) {
    const Event& e = row.event;
    nlohmann::json x = {{"seq", row.seq},     {"time_ms", e.t + store_->epoch_ms()},
                        {"t_ms", e.t},        {"kind", ToString(e.kind)},
                        {"detail", e.detail}, {"text", Describe(e)}};
    x["job"] = e.job.value() >= 0 ? nlohmann::json(e.job.value()) : nlohmann::json(nullptr);
    out.push_back(x);
  }
  return out;
}

StatusOr<std::string> LiveScheduler::Logs(JobId id, int64_t offset, size_t max, int64_t& next) {
  {
    std::lock_guard lk(mu_);
    if (!records_.contains(id)) return NotFound(fmt::format("job {}: no such job", id.value()));
  }
  next = offset;
  std::ifstream in(std::filesystem::path(JobDir(id)) / "output.log", std::ios::binary);
  if (!in) return std::string();
  in.seekg(offset);
  std::string buf(max, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(max));
  buf.resize(static_cast<size_t>(in.gcount()));
  next = offset + static_cast<int64_t>(buf.size());
  return buf;
}

}  // namespace tiresias
