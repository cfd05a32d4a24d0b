// LiveScheduler's read-only views for the API: jobs, explain, nodes, events (logs:
// live_scheduler_logs.cc).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <filesystem>

#include "common/strings.h"
#include "core/event_log.h"
#include "live/live_scheduler.h"

namespace tiresias {
namespace {

std::vector<int64_t> Ids(const std::vector<JobId>& ids) {
  std::vector<int64_t> out;
  for (JobId id : ids) out.push_back(id.value());
  return out;
}

}  // namespace

std::string LiveScheduler::VcOf(const JobRecord& r) const {
  if (IsTerminal(r.state)) return r.vc;
  // As the core assigns it (tenant_pass.cc VcIndexOf), also with a single VC.
  const TenantConfig& tenants = sched_->tenants();
  if (tenants.vcs.empty()) return "";
  if (tenants.IndexOf(r.vc)) return r.vc;
  auto vc = tenants.VcFor(r.user, "");
  return vc.ok() ? *vc : "";
}

LiveState LiveScheduler::ShownState(const JobRecord& r, Time now) const {
  if (r.state != LiveState::kRunning || now - r.last_start < kEngineStartGraceMs) return r.state;
  auto p = procs_.find(r.id);
  if (p == procs_.end() || p->second.stopping) return r.state;
  // Launched, and the engine has not started it in its first seconds (Slurm keeps its released
  // job PENDING; pinned then, PinEngineWaits): it is starting, as a launch not yet begun (it
  // showed `running`).
  return executor_->NotStarted(r.id).empty() ? r.state : LiveState::kStarting;
}

nlohmann::json LiveScheduler::ToJson(const JobRecord& r, Time now) const {
  const int64_t epoch = store_->epoch_ms();
  auto wall = [&](Time t) -> nlohmann::json {
    if (t < 0) return nullptr;
    return t + epoch;
  };
  nlohmann::json j = RequestToJson(r);
  j["id"] = r.id.value();
  if (const std::string vc = VcOf(r); vc.empty()) {
    j.erase("vc");
  } else {
    j["vc"] = vc;
  }
  const LiveState shown = ShownState(r, now);
  j["state"] = ToString(shown);
  j["submitted_at_ms"] = wall(r.submit);
  j["first_start_ms"] = wall(r.first_start);
  j["last_start_ms"] = wall(r.last_start);
  j["end_ms"] = wall(r.end);
  j["attempt"] = r.attempt;
  j["pid"] = r.pid;
  // (Its last run's, kept after it ended; none while it waits or is starting: that run's
  // devices were shown for a run placed elsewhere.)
  j["devices"] = shown == LiveState::kPending || shown == LiveState::kStarting ? "" : r.devices;
  if (auto placed = to_launch_.find(r.id); placed != to_launch_.end() && cfg_.nodes.empty()) {
    // Starting, here: the devices it is placed on, as its run will see them (ls wrote the
    // core's GPU range, "local:0-1", and "local:0,1" once it ran).
    std::vector<std::string> devices;
    for (const GpuId& g : placed->second) {
      const size_t k = static_cast<size_t>(g.index);
      devices.push_back(k < cfg_.gpu_devices.size() ? cfg_.gpu_devices[k] : std::to_string(k));
    }
    j["devices"] = Join(devices, ",");
  }
  // The Slurm job id ("" locally): the one that stands for it now (a waiting job's held one,
  // before its first launch too), else its last run's.
  const std::string engine_job = executor_->EngineJob(r.id);
  j["engine_job"] = engine_job.empty() ? r.engine_job : engine_job;
  // Where it runs (Slurm's names; locally filled in below); none while it waits, as its
  // devices (a preempted Slurm job listed its last run's nodes, not its reason).
  const bool waits = shown == LiveState::kPending || shown == LiveState::kStarting;
  j["nodes"] = waits ? std::vector<std::string>{} : r.nodes;
  j["engine_state"] = executor_->EngineState(r.id);  // "" locally
  j["preemptions"] = r.preemptions;
  j["message"] = r.message;
  // The README's stable fields, always there: null when none (a tester saw exit_code -1).
  j["exit_code"] = r.exit_code >= 0 ? nlohmann::json(r.exit_code) : nlohmann::json();
  j["signal"] = r.signal > 0 ? nlohmann::json(r.signal) : nlohmann::json();
  if (!j.contains("dependencies")) j["dependencies"] = nlohmann::json::array();
  j["allocation"] = nullptr;
  j["kills"] = r.kills;
  // Preemptions whose process left by itself (checkpointed); one being stopped now, in its
  // grace, is neither that nor a kill yet; nor is one whose run was lost with its node.
  const bool stopping = r.stop_preempted && procs_.contains(r.id);
  j["checkpointed"] = std::max(0, r.preemptions - r.kills - r.lost_runs - (stopping ? 1 : 0));
  j["lost_with_node"] = r.lost_runs;
  j["lost_gpu_s"] = ToSeconds(r.lost);  // work lost to its preemptions
  j["held"] = r.Held();
  if (r.Held()) j["held_by"] = r.held_in_engine ? "engine" : r.held_by_admin ? "admin" : "user";
  j["ref"] = RefOf(r);  // how its user names it: ARRAY_INDEX for an array's task, else the id
  const Time until = r.end >= 0 ? std::min(r.end, now) : now;
  if (const Job* cj = sched_->Find(r.id)) {
    const Time at = std::max(until, cj->last_stop);
    // Time its processes ran so far (each run from its launch, as its time limit counts it;
    // not the time `starting`, waiting for a preempted job to leave its GPUs), and all the
    // rest of its life (up to its time limit, past which its process was only stopping).
    const Duration ran = cj->ExecutedAt(at);
    const Time lived = cj->ended() && cj->end >= 0 ? std::min(until, cj->end) : until;
    j["time_s"] = ToSeconds(ran);
    j["wait_s"] = ToSeconds(std::max<Duration>(0, lived - r.submit - ran));
    j["attained_gpu_s"] = ToSeconds(cj->AttainedAt(at));
    j["queue"] = QueueName(cj->queue);
    j["reason"] = ReasonWord(r, *cj, now);
    // Checkpoints it reported (TIRESIAS_CHECKPOINT_FILE): the last, and while it runs the
    // GPU-time it would lose if stopped now; unknown (absent) when it never reported one.
    j["last_checkpoint_ms"] = wall(cj->ckpt_at);
    if (cj->running() && cj->ckpt_at >= 0) j["at_risk_gpu_s"] = ToSeconds(cj->LossAt(now));
    if (cj->running()) {
      j["allocation"] = cj->alloc.str();  // the core's GPUs, e.g. "n0:0-3"
      // Locally: the names of the nodes it holds GPUs on.
      if (r.nodes.empty()) j["nodes"] = NodeNames(cj->alloc.Gpus());
    }
  }
  // Ended, locally: the nodes of its last run, as its devices are (sacct's NodeList; show
  // gave Devices=0 and no node).
  if (IsTerminal(r.state) && r.nodes.empty() && r.first_start >= 0) {
    j["nodes"] = NodeNames(r.gpus_held);
  }
  j["time_limit"] = r.time_limit ? nlohmann::json(SlurmTime(*r.time_limit)) : nlohmann::json();
  j["stdout_path"] = OutputPath(r, false);
  j["stderr_path"] = OutputPath(r, true);
  return j;
}

std::string LiveScheduler::ReasonWord(const JobRecord& r, const Job& cj, Time now) const {
  switch (ShownState(r, now)) {
    case LiveState::kStarting:
      return "Starting";
    case LiveState::kPreempting:
      return r.timing_out ? "TimeLimit" : "Preempted";
    case LiveState::kPending:
      break;
    default:
      return "";
  }
  if (r.Held()) return "Held";
  if (WhyIneligible(r, nullptr) == "dependency") return "Dependency";
  if (cj.state == JobState::kHeld) return "JobArrayTaskLimit";
  // Its VC used its quota and nothing unused was left to borrow (the tenant level).
  if (cj.wait == WaitKind::kOverQuota) return "VcQuota";
  // Jobs ahead of it in the policy's order hold or want the GPUs: priority. Nothing ahead,
  // yet it waits: the GPUs (or a slot of them) are not there.
  return sched_->AnyAhead(r.id, now) ? "Priority" : "Resources";
}

nlohmann::json LiveScheduler::List(const ListFilter& f, size_t* total) {
  std::lock_guard lk(mu_);
  const Time now = Now();
  nlohmann::json out = nlohmann::json::array();
  size_t matched = 0;
  auto take = [&](const JobRecord& r) {
    if (!f.states.empty() && !f.states.contains(ShownState(r, now))) return;
    if (f.states.empty() && f.active_only && IsTerminal(r.state)) return;
    if (!f.user.empty() && r.user != f.user) return;
    if (!f.vc.empty() && VcOf(r) != f.vc) return;
    if (f.array != JobId() && r.array_id != f.array) return;
    if (f.ended_after >= 0 && (r.end < 0 || r.end + store_->epoch_ms() < f.ended_after)) return;
    if (f.ended_before >= 0 && (r.end < 0 || r.end + store_->epoch_ms() >= f.ended_before)) return;
    if (matched++ < f.offset || out.size() >= f.limit) return;
    out.push_back(ToJson(r, now));
  };
  // Only jobs that have not ended can match: walk those alone (open_).
  const bool open_only = f.states.empty()
                             ? f.active_only
                             : std::none_of(f.states.begin(), f.states.end(),
                                            [](LiveState st) { return IsTerminal(st); });
  auto walk = [&](const auto& jobs, auto record) {
    if (f.newest) {  // from the last, then back in order
      for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) take(record(it->second));
      std::reverse(out.begin(), out.end());
    } else {
      for (const auto& [id, r] : jobs) take(record(r));
    }
  };
  if (open_only) {
    walk(open_, [](const JobRecord* r) -> const JobRecord& { return *r; });
  } else {
    walk(records_, [](const JobRecord& r) -> const JobRecord& { return r; });
  }
  if (total) *total = matched;
  return out;
}

StatusOr<std::vector<JobId>> LiveScheduler::Resolve(const std::string& ref, bool whole_array) {
  std::lock_guard lk(mu_);
  const size_t us = ref.find('_');
  auto head = ParseInt(ref.substr(0, us));
  if (!head || *head <= 0) return InvalidArgument(fmt::format("'{}' is not a job id", ref));
  if (us != std::string::npos) {  // ARRAY_INDEX: one task
    auto index = ParseInt(ref.substr(us + 1));
    if (!index || *index < 0)
      return InvalidArgument(fmt::format("'{}' is not a job id (ID or ARRAY_INDEX)", ref));
    // An array's tasks have the ids from the array's on, in a row.
    for (auto it = records_.find(JobId(*head));
         it != records_.end() && it->second.array_id == JobId(*head); ++it) {
      if (it->second.array_index == *index) return std::vector<JobId>{it->first};
    }
    return NotFound(fmt::format("job {}: no such array task", ref));
  }
  std::vector<JobId> ids;
  if (whole_array) {  // an array's id names all its tasks
    for (auto it = records_.find(JobId(*head));
         it != records_.end() && it->second.array_id == JobId(*head); ++it) {
      ids.push_back(it->first);
    }
  }
  if (ids.empty()) {
    if (!records_.contains(JobId(*head))) {
      return NotFound(fmt::format("job {}: no such job", *head));
    }
    ids.push_back(JobId(*head));
  }
  return ids;
}

StatusOr<nlohmann::json> LiveScheduler::Get(JobId id) {
  std::lock_guard lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  return ToJson(it->second, Now());
}

std::string LiveScheduler::HeldReason(const JobRecord& r) const {
  // From the record (the core's state follows at the next step), but for an array's limit,
  // which only the step's count decides.
  if (IsTerminal(r.state)) return "";
  if (r.held_in_engine) {
    return EngineHoldText(r) +
           (r.held ? fmt::format("; and held in tiresias too (tiresias release {})", RefOf(r))
                   : "");
  }
  if (r.held && r.held_by_admin) {
    return fmt::format("held by an admin (only an admin may release it: tiresias release {})",
                       RefOf(r));
  }
  if (r.held) return fmt::format("held by its user (tiresias release {})", RefOf(r));
  if (WhyIneligible(r, nullptr) == "dependency") {
    std::vector<std::string> deps, held;
    for (const Dependency& d : r.dependencies) {
      deps.push_back(ToString(d));
      if (d.kind == Dependency::Kind::kSingleton) {
        if (const JobRecord* on = SingletonBlocker(r)) {
          held.push_back(fmt::format("job {} of the same name and user has not ended{}", RefOf(*on),
                                     !on->Held()          ? ""
                                     : on->held_in_engine ? " and is held by an admin in Slurm"
                                     : on->held_by_admin  ? " and is held by an admin"
                                                          : " and is held by its user"));
        }
        continue;
      }
      // A job (or task) it waits for that waits on its user: what the user must know.
      const JobRecord* on = DependedOn(d);
      const bool array = d.task < 0 && on && on->array_id == d.job;
      if (on && !array && on->Held() && !IsTerminal(on->state)) {
        held.push_back(fmt::format("job {} is held by {}", DependencyTarget(d),
                                   on->held_in_engine  ? "an admin in Slurm"
                                   : on->held_by_admin ? "an admin"
                                                       : "its user"));
      }
    }
    return fmt::format("waiting for its dependency ({}{})", Join(deps, ","),
                       held.empty() ? "" : "; " + Join(held, "; "));
  }
  const Job* cj = sched_->Find(r.id);
  if (r.array_limit > 0 && cj && cj->state == JobState::kHeld) {
    return fmt::format("waiting for a running task of its array to end (at most {} at once)",
                       r.array_limit);
  }
  return "";
}

StatusOr<nlohmann::json> LiveScheduler::Explain(JobId id) {
  std::lock_guard lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  return ExplainLocked(it->second, Now());
}

std::pair<JobId, nlohmann::json> LiveScheduler::ExplainArray(const std::vector<JobId>& tasks) {
  std::lock_guard lk(mu_);
  std::map<std::string, int> by_state;
  // The first task waiting, else the first not ended (it explained a finished task 0 while
  // another ran), else the first.
  const JobRecord *first = nullptr, *waiting = nullptr, *open = nullptr;
  for (JobId t : tasks) {
    auto it = records_.find(t);
    if (it == records_.end()) continue;
    ++by_state[ToString(it->second.state)];
    if (!first) first = &it->second;
    if (!waiting && it->second.state == LiveState::kPending) waiting = &it->second;
    if (!open && !IsTerminal(it->second.state)) open = &it->second;
  }
  const JobRecord* shown = waiting ? waiting : open ? open : first;
  const JobId target = shown ? shown->id : tasks.front();
  const std::string ref = shown ? RefOf(*shown) : std::to_string(target.value());
  return {target,
          {{"tasks", tasks.size()},
           {"by_state", by_state},
           {"explained", ref},
           {"explained_waits", waiting != nullptr}}};
}

nlohmann::json LiveScheduler::ExplainLocked(const JobRecord& r, Time now) const {
  const JobId id = r.id;
  Explanation e = sched_->Explain(id, now);
  const LiveState shown = ShownState(r, now);
  nlohmann::json j = {{"id", id.value()},
                      {"state", ToString(shown)},
                      {"where", e.where},
                      {"rank", e.rank},
                      {"waiting_ahead", e.waiting_ahead},
                      {"running_ahead", e.running_ahead},
                      {"waiting_ahead_ids", Ids(e.waiting_ahead_ids)},
                      {"running_ahead_ids", Ids(e.running_ahead_ids)},
                      {"waiting_ahead_refs", RefsOf(e.waiting_ahead_ids)},
                      {"running_ahead_refs", RefsOf(e.running_ahead_ids)},
                      {"gpus_needed", e.gpus_needed},
                      {"gpus_free", FreeGpusNow()}};  // (not the core's: no process holds them)
  std::vector<std::string> reasons = e.reasons;
  if (const std::string held = HeldReason(r); !held.empty() && !reasons.empty()) {
    reasons.front() = held;  // the core knows only "not eligible"; why is this layer's
  } else if (IsTerminal(r.state) && !reasons.empty()) {  // the core knows only "ended"
    const std::string state = ToString(r.state);
    reasons.front() = r.message.empty()              ? state + "; nothing to wait for"
                      : r.message.starts_with(state) ? r.message  // ("failed: exit 3")
                                                     : state + ": " + r.message;
  }
  if (shown == LiveState::kStarting && r.state == LiveState::kRunning) {
    // Launched; the engine keeps it waiting, and says why.
    reasons.insert(reasons.begin(), "scheduled to start; launched; " + executor_->NotStarted(id));
  } else if (shown == LiveState::kStarting) {
    std::vector<std::string> holders;
    if (auto t = to_launch_.find(id); t != to_launch_.end()) {
      for (const GpuId& g : t->second) {
        auto owner = gpu_owner_.find(g);
        if (owner != gpu_owner_.end() && owner->second != id) {
          holders.push_back(
              cfg_.nodes.empty()
                  ? fmt::format("GPU {} (job {})", g.index, JobRefOf(owner->second))
                  : fmt::format("GPU n{}:{} (job {})", g.node, g.index, JobRefOf(owner->second)));
        }
      }
    }
    if (procs_.contains(id)) holders.push_back("its own previous attempt");
    reasons.insert(reasons.begin(),
                   holders.empty() && r.message.starts_with("waiting for the cluster engine")
                       ? "scheduled to start; " + r.message
                       : fmt::format("scheduled to start; waiting for the processes told to "
                                     "stop to exit: {}",
                                     Join(holders, ", ")));
  } else if (r.state == LiveState::kPreempting && r.timing_out) {
    // (The core ended its run: "finished; nothing to wait for" would say otherwise.)
    reasons = {
        fmt::format("its time limit ({}) is reached; its process is stopping (grace "
                    "period)",
                    r.time_limit ? SlurmTime(*r.time_limit) : "?")};
  } else if (r.state == LiveState::kPreempting) {
    reasons.insert(reasons.begin(), "preempted; its process is checkpointing (grace period)");
  }
  for (std::string& reason : reasons) {  // starting: the core's word, not running yet
    if (shown == LiveState::kStarting && reason.starts_with("running on ")) {
      reason = "placed on " + reason.substr(11);
    }
  }
  j["reasons"] = reasons;
  if (e.next_transition) {
    j["next_transition_in_s"] = ToSeconds(*e.next_transition - now);
  }
  return j;
}

std::string LiveScheduler::OutputPath(const JobRecord& r, bool stderr_stream) const {
  // sbatch's rule: stderr goes with stdout unless --error says otherwise.
  const std::string& pattern = stderr_stream && !r.error.empty() ? r.error : r.output;
  if (pattern.empty()) return (std::filesystem::path(JobDir(r.id)) / "output.log").string();
  std::filesystem::path p = ExpandOutputPattern(
      pattern, r.id.value(), r.array_id == JobId() ? r.id.value() : r.array_id.value(),
      r.array_index, r.user, r.name);
  if (p.is_relative()) p = std::filesystem::path(r.cwd.empty() ? cfg_.state_dir : r.cwd) / p;
  return p.lexically_normal().string();
}

nlohmann::json LiveScheduler::Vcs() {
  std::lock_guard lk(mu_);
  const TenantConfig& t = sched_->tenants();
  nlohmann::json vcs = nlohmann::json::array();
  const auto usage = sched_->VcUsages(Now());
  for (size_t v = 0; v < t.vcs.size(); ++v) {
    nlohmann::json j = {
        {"name", t.vcs[v].name}, {"weight", t.vcs[v].weight}, {"users", t.vcs[v].users}};
    if (v < usage.size()) {  // the tenant level is on (two VCs or more)
      const VcUsage& u = usage[v];
      j.update({{"quota", u.quota},
                {"running_gpus", u.running_gpus},
                {"running_jobs", u.running_jobs},
                {"borrowed_gpus", u.borrowed()},
                {"waiting_gpus", u.waiting_gpus},
                {"waiting_jobs", u.waiting_jobs},
                {"usage_gpu_hours", u.decayed_gpu_hours}});
    } else {
      j["quota"] = sched_->topology().total_gpus();
    }
    vcs.push_back(std::move(j));
  }
  return {{"vcs", std::move(vcs)},
          {"borrow", t.borrow},
          {"half_life_hours", static_cast<double>(t.half_life) / 3.6e6},
          {"quota_lead", t.quota_lead},
          {"protect", ToString(t.protect)},
          {"default_vc", t.default_vc},
          {"gpus", sched_->topology().total_gpus()}};
}

nlohmann::json LiveScheduler::Queues() {
  std::lock_guard lk(mu_);
  const Time now = Now();
  nlohmann::json queues = nlohmann::json::array();
  for (int q = 0; q < sched_->policy().num_queues(); ++q) {
    queues.push_back({{"name", QueueName(q)}, {"jobs", nlohmann::json::array()}});
  }
  auto add = [&](const JobRecord& r) {
    const Job* cj = sched_->Find(r.id);
    if (!cj || static_cast<size_t>(cj->queue) >= queues.size()) return;
    nlohmann::json e = ExplainLocked(r, now);
    nlohmann::json j = {{"id", r.id.value()},
                        {"ref", RefOf(r)},
                        {"name", r.name},
                        {"user", r.user},
                        {"vc", VcOf(r)},
                        {"gpus", r.gpus},
                        {"state", ToString(ShownState(r, now))},  // as ls shows it
                        {"attained_gpu_s", ToSeconds(cj->AttainedAt(std::max(now, cj->last_stop)))},
                        {"wait_s", ToSeconds(std::max<Duration>(
                                       0, now - r.submit - cj->ExecutedAt(now)))},  // as in ls
                        {"reason", e["reasons"].empty() ? "" : e["reasons"][0]}};
    if (e.contains("next_transition_in_s")) j["next_transition_in_s"] = e["next_transition_in_s"];
    queues[static_cast<size_t>(cj->queue)]["jobs"].push_back(std::move(j));
  };
  // Running jobs first, then the waiting ones in the order they would get GPUs.
  for (const auto& [id, r] : open_) {
    if (r->state != LiveState::kPending) add(*r);
  }
  for (JobId id : sched_->WaitingInOrder()) {
    if (auto it = records_.find(id);
        it != records_.end() && it->second.state == LiveState::kPending) {
      add(it->second);
    }
  }
  return {{"policy", cfg_.policy}, {"queues", queues}};
}

nlohmann::json LiveScheduler::Nodes() {
  std::lock_guard lk(mu_);
  const std::vector<NodeSpec> cluster = ClusterNodes();
  const bool local = cfg_.nodes.empty();
  std::map<GpuId, JobId> starting;  // GPUs of jobs placed but not launched
  for (const auto& [id, placed] : to_launch_) {
    for (const GpuId& g : placed) starting.emplace(g, id);
  }
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
        // Its process still holds the GPU while it stops (preempted, requeued, cancelled,
        // past its time limit); it said "job 1" as if the job ran there.
        x["ref"] = JobRefOf(owner->second);
        // (Also when the core started it again elsewhere: its old process still stops here.)
        if (auto p = procs_.find(owner->second); p != procs_.end() && p->second.stopping) {
          x["stopping"] = true;
        }
        ++busy;
      } else if (auto placed = starting.find(GpuId{node, g}); placed != starting.end()) {
        x["job"] = placed->second.value();  // placed there, not launched yet (it said free)
        x["ref"] = JobRefOf(placed->second);
        x["starting"] = true;
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

StatusOr<nlohmann::json> LiveScheduler::Events(int64_t after, int limit, std::optional<JobId> job,
                                               bool latest, int64_t jobs) {
  std::lock_guard lk(mu_);
  auto ev = store_->LoadEvents(after, limit, /*inputs_only=*/false, /*skip_ticks=*/true, job,
                               latest, jobs);
  if (!ev.ok()) return ev.status();
  nlohmann::json out = nlohmann::json::array();
  for (const EventRow& row : *ev) {
    const Event& e = row.event;
    nlohmann::json x = {{"seq", row.seq},     {"time_ms", e.t + store_->epoch_ms()},
                        {"t_ms", e.t},        {"kind", ToString(e.kind)},
                        {"detail", e.detail}, {"text", Describe(e, store_->epoch_ms())}};
    x["job"] = e.job.value() >= 0 ? nlohmann::json(e.job.value()) : nlohmann::json(nullptr);
    // How its user names it: an array's task as ARRAY_INDEX, as ls and show do.
    if (auto it = records_.find(e.job); it != records_.end()) x["ref"] = RefOf(it->second);
    out.push_back(x);
  }
  return out;
}

}  // namespace tiresias

namespace tiresias {

std::string LiveScheduler::MetricsText() {
  {
    std::lock_guard lk(mu_);
    std::map<std::string, int> by_state;
    for (LiveState st :
         {LiveState::kPending, LiveState::kStarting, LiveState::kRunning, LiveState::kPreempting,
          LiveState::kFinished, LiveState::kFailed, LiveState::kCancelled, LiveState::kTimeout}) {
      by_state[ToString(st)] = 0;
    }
    for (const auto& [st, n] : ended_count_) by_state[ToString(st)] += static_cast<int>(n);
    const Time now = Now();
    for (const auto& [id, r] : open_) ++by_state[ToString(ShownState(*r, now))];
    std::vector<int> waiting_by_queue, running_by_queue;
    sched_->CountByQueue(waiting_by_queue, running_by_queue);
    std::map<std::string, int> waiting;
    for (size_t q = 0; q < waiting_by_queue.size(); ++q) {
      waiting[QueueName(static_cast<int>(q))] = waiting_by_queue[q];
    }
    metrics_.SetJobs(by_state, waiting);
    const int total = sched_->topology().total_gpus();
    const int free = FreeGpusNow();
    metrics_.SetGpus(total - free, free, FragmentedGpus(), 0);
    metrics_.SetVcs(sched_->VcUsages(Now()));
    if (cfg_.disk) {
      metrics_.SetStateDisk(cfg_.disk->free_bytes(), cfg_.disk->low() ? 0 : cfg_.disk->bytes(),
                            cfg_.disk->low());
    }
  }
  return metrics_.Text();
}

std::vector<std::string> LiveScheduler::Warnings() {
  std::lock_guard lk(warnings_mu_);  // not mu_: health must answer while a step runs
  return warnings_;
}

nlohmann::json LiveScheduler::Stats(int64_t after_wall_ms) {
  return {{"samples", metrics_.Series(after_wall_ms)}};
}

}  // namespace tiresias
