// LiveScheduler::Open: builds the core, replays the journal into it, then reconciles with the
// processes that survived a crash (see live_scheduler.h).
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "common/strings.h"
#include "engine/core_builder.h"
#include "engine/file_data_source.h"
#include "engine/tenant_config.h"
#include "live/journal_replay.h"
#include "live/live_scheduler.h"

namespace tiresias {

Status LiveScheduler::Open() {
  std::lock_guard lk(mu_);
  const std::vector<NodeSpec> nodes = ClusterNodes();
  int n = 0, most = 0;
  std::vector<int> node_gpus;
  for (const NodeSpec& node : nodes) {
    n += node.gpus;
    most = std::max(most, node.gpus);
    node_gpus.push_back(node.gpus);
  }
  auto topo = Topology::Create(1, static_cast<int>(nodes.size()), most);
  if (!topo.ok()) return topo.status();
  // The journal only replays into the core that wrote it. The policy options are recorded as
  // given, with the version of their defaults; state from before versions were recorded was
  // written under version 1 and replays under it (PinDefaults), whatever the defaults now are.
  nlohmann::json conf = {{"policy", cfg_.policy},
                         {"policy_options", cfg_.policy_opts},
                         {"placement", cfg_.placement},
                         {"placement_options", cfg_.placement_opts},
                         {"gpus", n}};
  if (cfg_.executor != "local") {  // (a local state's settings read as they always did)
    nlohmann::json names = nlohmann::json::array();
    for (const NodeSpec& node : nodes) names.push_back({node.name, node.gpus});
    conf["executor"] = cfg_.executor;
    conf["nodes"] = names;
  }
  int defaults_version = PolicyDefaultsVersion();
  // Checkpoint-aware victims: on for a new state unless --checkpoint-aware=false; state from
  // before the option was recorded replays without it (its journal has no checkpoints).
  bool ckpt_aware = cfg_.checkpoint_aware.value_or(true);
  // Even splits of multi-node jobs: Slurm gives every node of a job the same number of GPUs.
  // On for a new Slurm state; state from before it was recorded replays without it.
  bool even_split = cfg_.executor == "slurm";
  const auto old = store_->GetMeta("config");
  if (old) {
    auto recorded = nlohmann::json::parse(*old, nullptr, /*allow_exceptions=*/false);
    if (recorded.is_object()) {
      defaults_version = recorded.contains("defaults") && recorded["defaults"].is_number_integer()
                             ? recorded["defaults"].get<int>()
                             : 1;
      recorded.erase("defaults");
      ckpt_aware = recorded.value("checkpoint_aware", false);
      recorded.erase("checkpoint_aware");
      even_split = recorded.value("even_split", false);
      recorded.erase("even_split");
      if (cfg_.checkpoint_aware && *cfg_.checkpoint_aware != ckpt_aware) {
        return FailedPrecondition(fmt::format(
            "{}: this state was written with --checkpoint-aware={}; start without the option "
            "or with the same value, or use another --state-dir",
            cfg_.state_dir, ckpt_aware));
      }
    }
    if (recorded != conf) {
      return FailedPrecondition(fmt::format(
          "{}: this state was written with settings {}, not {}; start with the same "
          "--policy/--opt/--placement/--gpus (or --executor and the same Slurm nodes), or use "
          "another --state-dir",
          cfg_.state_dir, *old, conf.dump()));
    }
  }
  auto core =
      BuildCore(CoreConfig{.topo = *topo,
                           .policy = cfg_.policy,
                           .policy_opts = cfg_.policy_opts,
                           .placement = cfg_.placement,
                           .placement_opts = cfg_.placement_opts,
                           .options = {.record_transitions = true, .checkpoint_aware = ckpt_aware},
                           .defaults_version = defaults_version,
                           .even_split = even_split,
                           .node_gpus = node_gpus},
                FileDataSource());
  if (!core.ok()) return core.status();  // a bad configuration is not recorded
  if (!old) {
    conf["defaults"] = defaults_version;
    conf["checkpoint_aware"] = ckpt_aware;
    if (even_split) conf["even_split"] = true;
    if (Status s = store_->SetMeta("config", conf.dump()); !s.ok()) return s;
  }
  sched_ = std::move(*core);
  // A node with fewer GPUs than the largest never has the others (not journalled: it follows
  // from the configuration, which the journal is checked against).
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].gpus < most) {
      auto s =
          sched_->SetNodeAvailability(static_cast<int>(i), (uint64_t{1} << nodes[i].gpus) - 1, 0);
      if (!s.ok()) return s.status();
    }
  }

  // Never give out the id of a job whose directory exists, even if the journal forgot it.
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(JobsDir(), ec)) {
    if (auto id = ParseInt(d.path().filename().string())) store_->ReserveJobIds(*id);
  }
  auto jobs = store_->LoadJobs();
  if (!jobs.ok()) return jobs.status();
  for (auto& r : *jobs) AddRecord(std::move(r));
  auto events = store_->LoadEvents(0, 0, /*inputs_only=*/true);
  if (!events.ok()) return events.status();
  for (const EventRow& row : *events) {
    last_now_ = std::max(last_now_, row.event.t);
    last_replayed_ = last_now_;
    if (Status s = Replay(row); !s.ok()) return s;
  }
  (void)sched_->TakeTransitions();  // journalled when they happened
  // The last moment the previous daemon knew its processes alive: its last journalled input
  // or its last liveness stamp, whichever is later.
  last_alive_ = last_now_;
  if (auto stamp = store_->GetMeta(kAliveKey)) {
    if (auto v = ParseInt(*stamp)) last_alive_ = std::max(last_alive_, *v);
  }
  // The grace that a build before schema 7 gave its stops (it kept no deadline per stop): a
  // stop it began ends at that deadline, whatever this one's --grace. (Each stop since keeps
  // its own, JobRecord::stop_deadline.)
  grace_before_ = cfg_.grace;
  if (auto saved = store_->GetMeta(kGraceKey); auto v = saved ? ParseInt(*saved) : std::nullopt) {
    if (*v >= 0) grace_before_ = *v;
  }
  // The forecasts' margins as the last daemon left them (none saved: the defaults). A value
  // that cannot be read costs only what they had learned: a warning.
  if (auto saved = store_->GetMeta(kMarginsKey)) {
    const auto j = nlohmann::json::parse(*saved, nullptr, /*allow_exceptions=*/false);
    if (Status s = margins_.Restore(j); !s.ok()) {
      Warn(fmt::format("{} (meta {}): starting from the defaults", s.message(), kMarginsKey));
    } else {
      margins_saved_ = *saved;
    }
  }
  // (Now() advances the core's time: only after last_alive_ was read.)
  if (Status s = ApplyTenants(Now()); !s.ok()) return s;
  StartRetention();
  return Reconcile(Now());
}

Status LiveScheduler::ApplyTenants(Time now) {
  if (!cfg_.tenants) return Status::Ok();
  if (const auto& vcs = cfg_.tenants->vcs; vcs.size() == 1 && vcs[0].quota >= 0) {
    Warn(
        fmt::format("--tenants {}: a single VC: the tenant level needs two or more, so `{}` has "
                    "the whole cluster ({} GPUs), not its quota of {} (it still decides who "
                    "may submit)",
                    cfg_.tenants_file, vcs[0].name, sched_->topology().total_gpus(), vcs[0].quota));
  }
  const nlohmann::json want = TenantConfigToJson(*cfg_.tenants);
  const TenantConfig& had = sched_->tenants();
  if (want == TenantConfigToJson(had)) return Status::Ok();
  Status s = cfg_.tenants->vcs.size() == 1 ? sched_->EveryJobHasAVc(*cfg_.tenants) : Status::Ok();
  if (s.ok()) s = sched_->SetTenants(*cfg_.tenants, now);
  if (!s.ok()) {
    return Status(s.code(), fmt::format("--tenants {}: {}", cfg_.tenants_file, s.message()));
  }
  return Note({.t = now,
               .kind = EventKind::kTenants,
               .detail = {{"config", want}, {"file", cfg_.tenants_file}}});
}

Status LiveScheduler::Replay(const EventRow& row) {
  Status refused;
  Status s = ReplayInput(
      *sched_, row,
      [&](JobId id) -> const JobRecord* {
        auto it = records_.find(id);
        return it == records_.end() ? nullptr : &it->second;
      },
      &refused);
  if (!s.ok()) return s;
  // A refusal by the core replays the refusal it gave then (e.g. a submission it rejected).
  if (!refused.ok()) {
    Warn(fmt::format("journal event {} ({}): {}", row.seq, ToString(row.event.kind),
                     refused.message()));
  }
  return Status::Ok();
}

bool LiveScheduler::InTimeLimitGrace(const JobRecord& rec) const {
  const Job* cj = sched_->Find(rec.id);
  return rec.state == LiveState::kPreempting && rec.time_limit && cj && cj->ended();
}

Status LiveScheduler::Reconcile(Time now) {
  // A job whose directory exists but that the journal no longer knows (serve was started with
  // --accept-journal-loss) may still be running: its GPUs would be handed out again under it
  // (found by a review). Its attempts that are alive, as the executor can prove, are killed.
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(JobsDir(), ec)) {
    const auto id = ParseInt(d.path().filename().string());
    if (!id || *id <= 0 || records_.contains(JobId(*id))) continue;
    for (int attempt = 0, misses = 0; attempt < 10000 && misses < 3; ++attempt) {
      const auto ref = executor_->FindLaunched(JobId(*id), attempt, JobDir(JobId(*id)));
      if (!ref) {
        ++misses;
        continue;
      }
      misses = 0;
      if (executor_->Signal(*ref, SIGKILL).ok()) {
        // (A cluster engine's run is its job: Slurm's id, not a pid.)
        const std::string engine_job = executor_->EngineJob(JobId(*id));
        Warn(fmt::format(
            "job {} (attempt {}, {}) was running but the journal lost it: "
            "killed, so that its GPUs are not given out twice",
            *id, attempt,
            engine_job.empty() ? fmt::format("pid {}", ref->pid) : "Slurm job " + engine_job));
      }
    }
  }
  Store::Txn txn(*store_);
  std::vector<JobId> changed, stop;
  // A journal from before session 43 ran a job past its time limit in the core until its
  // process exited (`preempting` while the core still runs it on those GPUs: a preempted
  // or requeued job's run the core stopped, or started again, `starting`). Its run ends now,
  // as such a run ends today at the signal.
  for (JobRecord* open : OpenRecords()) {
    const Job* cj = sched_->Find(open->id);
    if (open->state != LiveState::kPreempting || !open->time_limit || !cj || !cj->running() ||
        cj->alloc.Gpus() != open->gpus_held) {
      continue;
    }
    // (At the journal's last time: exits read below come no earlier, and its service is not
    // counted through the time serve was down.)
    Journal({.t = last_replayed_,
             .kind = EventKind::kFinish,
             .job = open->id,
             .detail = {{"how",
                         "timeout: its run ends at its time limit; its process is "
                         "stopping (at a restart, from a journal of an older version)"}}});
    MustOk(sched_->Finish(open->id, last_replayed_));
  }
  // First the attempts that ended while the daemon was down, at the times their exit records
  // say (in that order, each no earlier than the journal's last time): a job's end, and the
  // service it attained, are not moved to the restart.
  std::vector<std::pair<Time, ExitInfo>> ended;
  for (const auto& [id, rec] : records_) {
    if (rec.pid <= 0 || rec.start_ticks == kLaunchInFlight) continue;
    const ProcessRef ref{.pid = rec.pid, .start_ticks = rec.start_ticks};
    if (executor_->Adopt(id, rec.attempt, ref, JobDir(id))) continue;  // alive: below
    if (auto ex = executor_->ReadExit(id, rec.attempt, JobDir(id))) {
      const Time at = ex->ended_wall_ms ? *ex->ended_wall_ms - store_->epoch_ms() : now;
      ended.emplace_back(std::clamp(at, last_replayed_, now), *ex);
    }
  }
  std::stable_sort(ended.begin(), ended.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [at, ex] : ended) {
    JobRecord& rec = records_.at(ex.job);
    // A stop in its grace when the daemon went down: past its time limit, the job ends with
    // this exit (it was relaunched, its run's time erased); killed at the deadline, it did
    // not checkpoint.
    rec.timing_out = InTimeLimitGrace(rec);
    const bool stopping = rec.state != LiveState::kRunning;
    Proc p{
        .ref = {.pid = rec.pid, .start_ticks = rec.start_ticks},
        .attempt = rec.attempt,
        .gpus = rec.gpus_held,
        .stopping = stopping,
        .killed = stopping && ex.signal == SIGKILL,
        .loss = LossOfStop(ex.job),
    };
    procs_[ex.job] = p;
    HandleExit(ex, at, changed);
  }
  for (auto& [id, rec] : records_) {
    const Job* cj = sched_->Find(id);
    const bool core_running = cj && cj->running();
    const std::vector<GpuId> core_gpus = core_running ? cj->alloc.Gpus() : std::vector<GpuId>{};
    // A launch in flight at the crash (attempt committed, pid not yet): the executor and
    // the shim record the process in the attempt's pid file; give the shim a moment.
    if (rec.pid == 0 && rec.start_ticks == kLaunchInFlight) {
      rec.start_ticks = 0;
      std::optional<ProcessRef> ref = executor_->FindLaunched(id, rec.attempt, JobDir(id));
      for (int waited = 0; !ref && waited < cfg_.launch_probe_ms; waited += 20) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ref = executor_->FindLaunched(id, rec.attempt, JobDir(id));
      }
      if (ref && core_running) {
        rec.pid = ref->pid;
        rec.start_ticks = ref->start_ticks;
        rec.gpus_held = core_gpus;
        rec.state = LiveState::kRunning;
        if (rec.first_start < 0) rec.first_start = now;
        rec.last_start = now;
      } else if (ref) {  // the core no longer runs it: stop it below
        rec.pid = ref->pid;
        rec.start_ticks = ref->start_ticks;
        rec.gpus_held.clear();  // not expected: the launch followed the last committed tick
      } else {
        --rec.attempt;  // that attempt never started: the next launch reuses its number
      }
    }
    if (rec.pid <= 0) {
      if (core_running) {
        to_launch_[id] = core_gpus;
        rec.state = LiveState::kStarting;
        changed.push_back(id);
      }
      continue;
    }
    const ProcessRef ref{.pid = rec.pid, .start_ticks = rec.start_ticks};
    Proc p{.ref = ref, .attempt = rec.attempt, .gpus = rec.gpus_held};
    changed.push_back(id);
    if (executor_->Adopt(id, rec.attempt, ref, JobDir(id))) {
      for (const GpuId& g : p.gpus) gpu_owner_[g] = id;
      procs_[id] = p;
      // A cluster engine's run is its job (the "pid" is Slurm's job id): named so.
      const nlohmann::json adopted = rec.engine_job.empty()
                                         ? nlohmann::json{{"pid", rec.pid}}
                                         : nlohmann::json{{"engine_job", rec.engine_job}};
      if (core_running && p.gpus == core_gpus && rec.state == LiveState::kRunning) {
        Journal({.t = now, .kind = EventKind::kAdopt, .job = id, .detail = adopted});
        continue;
      }
      if (InTimeLimitGrace(rec)) {
        // Its time limit's grace: it is told to stop again, and its exit ends it. (Taken for
        // a preempted one, it was relaunched, its run's time erased by the wait for its own
        // process.)
        Journal({.t = now, .kind = EventKind::kAdopt, .job = id, .detail = adopted});
        rec.timing_out = true;
        rec.stop_preempted = false;
        stop.push_back(id);
        continue;
      }
      // The core no longer runs it here: stop it, and start the core's run after it exits.
      stop.push_back(id);
      if (core_running) to_launch_[id] = core_gpus;
      if (!IsTerminal(rec.state)) {
        rec.state = core_running ? LiveState::kStarting : LiveState::kPreempting;
      }
      continue;
    }
    // The process ended while the daemon was down (after the first look at exits above).
    if (auto ex = executor_->ReadExit(id, rec.attempt, JobDir(id))) {
      rec.timing_out = InTimeLimitGrace(rec);  // (its end, as above: a review)
      p.stopping = rec.state != LiveState::kRunning;
      procs_[id] = p;
      HandleExit(*ex, now, changed);
    } else {
      rec.pid = 0;
      rec.stop_preempted = false;
      rec.stop_sent = -1;  // (no process left to stop)
      rec.stop_deadline = -1;
      if (InTimeLimitGrace(rec)) {  // gone with no exit record: its end all the same
        EndAsTimeout(rec, now, "its process vanished while the daemon was down");
        continue;
      }
      if (core_running && p.gpus == core_gpus && rec.state == LiveState::kRunning) {
        // The core's current run vanished: it keeps the service it attained while the daemon
        // could see it alive; the time it was down is not service.
        const std::string why = "processes vanished while the daemon was down; relaunching";
        Journal({.t = now,
                 .kind = EventKind::kInterrupt,
                 .job = id,
                 .detail = {{"last_alive_ms", last_alive_}, {"reason", why}}});
        MustOk(sched_->Interrupted(id, last_alive_, now));
        rec.message =
            "processes vanished while the daemon was down; relaunched from its checkpoint";
      } else if (core_running) {
        Journal(
            {.t = now,
             .kind = EventKind::kRelaunch,
             .job = id,
             .detail = {{"reason", "process vanished while the daemon was down; relaunching"}}});
        rec.message = "process vanished while the daemon was down; relaunched from its checkpoint";
      }
    }
    if (core_running && !procs_.contains(id) && sched_->Find(id)->running()) {
      to_launch_[id] = core_gpus;
      rec.state = LiveState::kStarting;
    } else if (!IsTerminal(rec.state) && !sched_->Find(id)->running()) {
      rec.state = LiveState::kPending;
    }
  }
  // (A process of a job's current run is never in to_launch_: one in its time limit's grace
  // is adopted and stopped above.)
  DrainWaitingToNow(now, 0, "serve was down");
  dirty_ = true;
  if (Status s = SaveRows(changed); !s.ok()) return s;
  if (Status s = txn.Commit(); !s.ok()) return s;
  for (JobId id : stop) {
    if (!procs_.at(id).stopping) StopProcess(id, now, cfg_.preempt_signal);
  }
  // A cluster engine learns the jobs again: those still to run get ready (a held Slurm job,
  // unless it has one), those that ended let go of theirs.
  std::vector<JobId> over;
  for (const auto& [id, rec] : records_) {
    if (IsTerminal(rec.state)) {
      over.push_back(id);
    } else {
      executor_->Prepare(PrepareSpec(rec));
    }
  }
  RetireEnded(over);
  return Status::Ok();
}

void LiveScheduler::DrainWaitingToNow(Time now, Time pinned_from, const std::string& why) {
  // A job the core runs but still has to launch did not run while serve was down or paused
  // (its progress pinned to a preempted process's kill deadline or ahead of an engine's wait,
  // long past): its progress starts now at the earliest, or that time would count as its
  // service (and demote it, or end it by its time limit).
  for (const auto& [id, gpus] : to_launch_) {
    const Time pinned = sched_->Find(id)->progress_start;
    if (pinned < pinned_from || pinned >= now) continue;
    Journal({.t = now,
             .kind = EventKind::kDrain,
             .job = id,
             .detail = {{"until_ms", now}, {"why", why}}});
    MustOk(sched_->SetProgressStart(id, now, now));
  }
}

}  // namespace tiresias
