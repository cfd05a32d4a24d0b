// The live scheduler's loop: exits, scheduling passes, launches, preemption and grace
// (see live_scheduler.h). Recovery is in live_scheduler_recovery.cc, the API views in
// live_scheduler_views.cc.
#include "live/live_scheduler.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "common/strings.h"

namespace tiresias {

LiveScheduler::LiveScheduler(ServeConfig cfg, std::unique_ptr<Store> store,
                             std::unique_ptr<Executor> executor, WallClock clock)
    : cfg_(std::move(cfg)),
      store_(std::move(store)),
      executor_(std::move(executor)),
      clock_(std::move(clock)) {}

Time LiveScheduler::Now() {
  last_now_ = std::max(last_now_, clock_() - store_->epoch_ms());
  return last_now_;
}

void LiveScheduler::Warn(const std::string& m) {
  std::cerr << "tiresias serve: " << m << "\n";
}

std::string LiveScheduler::JobsDir() const {
  return (std::filesystem::path(cfg_.state_dir) / "tiresias-jobs").string();
}

std::string LiveScheduler::JobDir(JobId id) const {
  return (std::filesystem::path(JobsDir()) / id.str()).string();
}

std::vector<NodeSpec> LiveScheduler::ClusterNodes() const {
  if (!cfg_.nodes.empty()) return cfg_.nodes;
  return {NodeSpec{.name = "local", .gpus = static_cast<int>(cfg_.gpu_devices.size())}};
}

LaunchSpec LiveScheduler::PrepareSpec(const JobRecord& r) const {
  LaunchSpec spec{.job = r.id,
                  .name = r.name,
                  .attempt = r.attempt,
                  .argv = r.argv,
                  .cwd = r.cwd,
                  .env = r.env,
                  .job_dir = JobDir(r.id)};
  if (r.uid >= 0 && r.gid >= 0) {
    spec.uid = static_cast<uint32_t>(r.uid);
    spec.gid = static_cast<uint32_t>(r.gid);
  }
  return spec;
}

void LiveScheduler::RetireEnded(const std::vector<JobId>& ids) {
  for (JobId id : ids) {
    auto it = records_.find(id);
    if (it != records_.end() && IsTerminal(it->second.state) && !procs_.contains(id)) {
      executor_->Retire(id);
    }
  }
}

JobSpec LiveScheduler::SpecOf(const JobRecord& r) const {
  return JobSpec{.id = r.id,
                 .gpus = r.gpus,
                 .submit = r.submit,
                 .name = r.name,
                 .user = r.user,
                 .model = r.model,
                 .duration = r.duration};
}

Status LiveScheduler::Note(const Event& e) {
  if (cfg_.log_events && e.kind != EventKind::kTick) {
    const auto wall =
        std::chrono::system_clock::time_point(std::chrono::milliseconds(e.t + store_->epoch_ms()));
    std::cout << fmt::format("{:%FT%T}Z {:<8} job {:<5} {}\n",
                             std::chrono::floor<std::chrono::milliseconds>(wall), ToString(e.kind),
                             e.job.value(), Describe(e))
              << std::flush;
  }
  auto r = store_->AppendEvent(e);
  return r.ok() ? Status::Ok() : r.status();
}

Status LiveScheduler::SaveRows(const std::vector<JobId>& ids) {
  for (JobId id : ids) {
    if (Status s = store_->UpdateJob(records_.at(id)); !s.ok()) return s;
  }
  return Status::Ok();
}

StatusOr<JobId> LiveScheduler::Submit(const SubmitRequest& req) {
  std::unique_lock lk(mu_);
  if (Status s = Validate(req); !s.ok()) return s;
  JobRecord rec;
  rec.name = req.name.empty() ? std::filesystem::path(req.argv[0]).filename().string() : req.name;
  rec.user = req.user.empty() ? "unknown" : req.user;
  if (req.uid) rec.uid = *req.uid;
  if (req.gid) rec.gid = *req.gid;
  rec.model = req.model;
  rec.gpus = static_cast<int>(req.gpus);
  rec.argv = req.argv;
  rec.cwd = req.cwd;
  rec.env = req.env;
  rec.duration = req.duration();
  if (sched_->policy().needs_durations() && !rec.duration) {
    return InvalidArgument(fmt::format(
        "submit: policy {} orders jobs by their run time; give --duration", cfg_.policy));
  }
  if (auto why = sched_->placement().NeverFitsReason(SpecOf(rec), sched_->topology())) {
    return InvalidArgument(fmt::format("submit: job can never run on this cluster ({} GPUs): {}",
                                       sched_->topology().total_gpus(), *why));
  }
  rec.submit = Now();
  {
    Store::Txn txn(*store_);
    if (Status s = store_->InsertJob(rec); !s.ok()) return s;
    if (Status s = Note({.t = rec.submit,
                         .kind = EventKind::kSubmit,
                         .job = rec.id,
                         .detail = {{"name", rec.name}, {"gpus", rec.gpus}}});
        !s.ok()) {
      return s;
    }
    if (Status s = txn.Commit(); !s.ok()) return s;
  }
  if (Status s = sched_->Submit(SpecOf(rec), rec.submit); !s.ok()) Warn(s.message());
  executor_->Prepare(PrepareSpec(rec));  // e.g. a held Slurm job; never blocks
  const JobId id = rec.id;
  records_.emplace(id, std::move(rec));
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return id;
}

Status LiveScheduler::Cancel(JobId id) {
  std::unique_lock lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  JobRecord& rec = it->second;
  if (IsTerminal(rec.state)) {
    return FailedPrecondition(fmt::format("job {}: already {}", id.value(), ToString(rec.state)));
  }
  const Time now = Now();
  rec.state = LiveState::kCancelled;
  rec.end = now;
  rec.message = "cancelled by request";
  {
    Store::Txn txn(*store_);
    if (Status s = Note({.t = now, .kind = EventKind::kCancel, .job = id}); !s.ok()) return s;
    if (Status s = store_->UpdateJob(rec); !s.ok()) return s;
    if (Status s = txn.Commit(); !s.ok()) return s;
  }
  if (Status s = sched_->Cancel(id, now); !s.ok()) Warn(s.message());
  to_launch_.erase(id);
  if (procs_.contains(id)) StopProcess(id, now, cfg_.preempt_signal);
  RetireEnded({id});  // nothing running: the engine may drop it now (else after the exit)
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return Status::Ok();
}

void LiveScheduler::CancelledOutside(JobId id, const std::string& why, Time now,
                                     std::vector<JobId>& changed) {
  auto it = records_.find(id);
  if (it == records_.end() || IsTerminal(it->second.state)) return;
  JobRecord& rec = it->second;
  Journal({.t = now, .kind = EventKind::kCancel, .job = id, .detail = {{"how", why}}});
  if (const Job* cj = sched_->Find(id); cj && (cj->running() || cj->state == JobState::kPending)) {
    MustOk(sched_->Cancel(id, now));
  }
  to_launch_.erase(id);
  rec.state = LiveState::kCancelled;
  rec.end = now;
  rec.message = "cancelled outside tiresias: " + why;
  changed.push_back(id);
  dirty_ = true;
}

void LiveScheduler::HandleExit(const ExitInfo& e, Time now, std::vector<JobId>& changed) {
  auto pit = procs_.find(e.job);
  if (pit == procs_.end() || pit->second.attempt != e.attempt) {
    if (e.cancelled) {  // a job waiting between attempts, cancelled in the engine
      CancelledOutside(e.job, e.reason, now, changed);
      return;
    }
    Warn(fmt::format("exit of job {} attempt {} that is not tracked", e.job.value(), e.attempt));
    return;
  }
  const Proc p = pit->second;
  procs_.erase(pit);
  // Nothing to clean up: the executor reports an attempt once none of its processes is left.
  for (const GpuId& g : p.gpus) {
    if (auto it = gpu_owner_.find(g); it != gpu_owner_.end() && it->second == e.job) {
      gpu_owner_.erase(it);
    }
  }
  JobRecord& rec = records_.at(e.job);
  rec.exit_code = e.exit_code;
  rec.signal = e.signal;
  rec.pid = 0;
  changed.push_back(e.job);
  const std::string what = e.Describe();
  const Job* cj = sched_->Find(e.job);
  if (e.cancelled) {
    Journal({.t = now,
             .kind = EventKind::kExit,
             .job = e.job,
             .detail = {{"how", what}, {"after", "cancel"}}});
    CancelledOutside(e.job, e.reason, now, changed);
    return;
  }
  // An exit after the core stopped the job is not its end, also before it was signalled (an
  // eviction and the exit of the run it evicted can arrive in the same round).
  const bool stopped = p.stopping || IsTerminal(rec.state) || rec.state == LiveState::kPreempting;
  if (stopped) {
    if (IsTerminal(rec.state)) {
      Journal({.t = now,
               .kind = EventKind::kExit,
               .job = e.job,
               .detail = {{"how", what}, {"after", "cancel"}}});
      return;
    }
    // Checkpointed: it exited by itself after the signal; killed when its grace ran out (or
    // its run was lost meanwhile, e.g. its node failed).
    Journal({.t = now,
             .kind = EventKind::kExit,
             .job = e.job,
             .detail = {
                 {"how", what}, {"after", "preemption"}, {"checkpointed", !p.killed && !e.lost}}});
    rec.state = to_launch_.contains(e.job) ? LiveState::kStarting : LiveState::kPending;
    return;
  }
  if (!cj || !cj->running()) {
    Warn(fmt::format("job {}: process exited ({}) while not running", e.job.value(), what));
    return;
  }
  if (e.lost) {
    // Not the job's end: the engine lost the run (its node failed). It keeps the service it
    // attained and is relaunched from its checkpoint, where the core runs it (a capacity
    // change moves it if the node is gone).
    Journal({.t = now, .kind = EventKind::kRequeue, .job = e.job, .detail = {{"reason", what}}});
    Journal({.t = now,
             .kind = EventKind::kInterrupt,
             .job = e.job,
             .detail = {{"last_alive_ms", now}, {"reason", "run lost: " + what}}});
    MustOk(sched_->Interrupted(e.job, now, now));
    to_launch_[e.job] = cj->alloc.Gpus();
    rec.state = LiveState::kStarting;
    rec.message = "run lost (" + what + "); relaunching from its checkpoint";
    return;
  }
  const bool ok = e.exit_code == 0 && e.signal == 0;
  Journal({.t = now, .kind = EventKind::kFinish, .job = e.job, .detail = {{"how", what}}});
  if (Status s = sched_->Finish(e.job, now); !s.ok()) Warn(s.message());
  rec.state = ok ? LiveState::kFinished : LiveState::kFailed;
  rec.end = now;
  rec.message = ok ? "completed" : "failed: " + what;
  dirty_ = true;
}

void LiveScheduler::ApplyAction(const Action& a, Time now, std::vector<JobId>& changed) {
  JobRecord& rec = records_.at(a.job);
  changed.push_back(a.job);
  rec.message = a.reason;
  if (a.kind == Action::Kind::kStart) {
    Journal(EventOf(a, now));
    to_launch_[a.job] = a.alloc.Gpus();
    rec.state = LiveState::kStarting;
    return;
  }
  Journal(EventOf(a, now));
  if (to_launch_.erase(a.job) || !procs_.contains(a.job)) {
    rec.state = LiveState::kPending;  // never launched: nothing to stop, nothing counted
    return;
  }
  ++rec.preemptions;  // the times its process was told to stop
  rec.state = LiveState::kPreempting;
}

void LiveScheduler::ApplyNodes(const std::vector<NodeReport>& nodes, Time now,
                               std::vector<JobId>& changed, std::vector<JobId>& stop) {
  node_reports_ = nodes;
  const std::vector<NodeSpec> cluster = ClusterNodes();
  for (size_t i = 0; i < nodes.size() && i < cluster.size(); ++i) {
    const NodeReport& r = nodes[i];
    const int node = static_cast<int>(i), have = cluster[i].gpus;
    const int want = r.usable ? std::clamp(std::min(r.gpus, have) - r.gpus_outside, 0, have) : 0;
    if (std::popcount(sched_->cluster().usable_mask(node)) == want) continue;
    std::string why;
    if (!r.usable) {
      why =
          fmt::format("node {} is {}{}", r.name, r.state, r.reason.empty() ? "" : ": " + r.reason);
    } else if (r.gpus_outside > 0) {
      why = fmt::format("node {}: {} GPU(s) held outside tiresias ({})", r.name, r.gpus_outside,
                        Join(r.outside_jobs, ", "));
    } else {
      why = fmt::format("node {}: all {} GPUs usable", r.name, want);
    }
    std::map<JobId, std::vector<GpuId>> held;  // for the evict events
    for (const Job& j : sched_->jobs()) {
      if (j.running()) held[j.spec.id] = j.alloc.Gpus();
    }
    const uint64_t mask = sched_->UsableMaskFor(node, want);
    Journal(CapacityEvent(now, node, mask, why));
    auto stopped = sched_->SetNodeAvailability(node, mask, now);
    MustOk(stopped.status());
    for (JobId id : *stopped) {
      JobRecord& rec = records_.at(id);
      changed.push_back(id);
      Journal({.t = now,
               .kind = EventKind::kEvict,
               .job = id,
               .detail = {{"gpus", GpusToJson(held[id])}, {"reason", why}}});
      rec.message = "evicted: " + why;
      if (to_launch_.erase(id) || !procs_.contains(id)) {
        rec.state = LiveState::kPending;  // never launched: nothing to stop
        continue;
      }
      ++rec.preemptions;  // its process is told to stop
      rec.state = LiveState::kPreempting;
      stop.push_back(id);
    }
    dirty_ = true;
  }
}

void LiveScheduler::StopProcess(JobId id, Time now, int sig) {
  auto it = procs_.find(id);
  if (it == procs_.end()) return;  // it ended meanwhile
  Proc& p = it->second;
  if (p.stopping) return;
  p.stopping = true;
  p.kill_at = now + cfg_.grace;
  (void)executor_->Signal(p.ref, sig);  // NotFound: already gone, Poll reports it
}

bool LiveScheduler::HeldBack(const std::vector<GpuId>& gpus, JobId id) const {
  if (procs_.contains(id)) return true;  // its own previous attempt is still checkpointing
  return std::any_of(gpus.begin(), gpus.end(),
                     [&](const GpuId& g) { return gpu_owner_.contains(g); });
}

Time LiveScheduler::ExpectedRelease(const std::vector<GpuId>& gpus, JobId id, Time now) const {
  Time until = now;
  auto expected = [&](const Proc& p) {
    return p.killed ? p.gone_by : p.kill_at != kNever ? p.kill_at : now;
  };
  for (const GpuId& g : gpus) {
    auto owner = gpu_owner_.find(g);
    if (owner == gpu_owner_.end()) continue;
    if (auto it = procs_.find(owner->second); it != procs_.end()) {
      until = std::max(until, expected(it->second));
    }
  }
  if (auto it = procs_.find(id); it != procs_.end()) until = std::max(until, expected(it->second));
  return until;
}

void LiveScheduler::Journal(const Event& e) {
  MustOk(Note(e));
}

void LiveScheduler::MustOk(const Status& s) {
  if (s.ok()) return;
  Warn("cannot journal (" + s.message() +
       "); stopping so that a restart replays a consistent "
       "state");
  std::abort();
}

void LiveScheduler::LaunchReady(Time now) {
  // Phase 1, committed before any fork: holds for starts that must wait, and the attempt
  // number of each launch with its "in flight" mark, so that a crash mid-launch finds it.
  std::vector<JobId> ready, changed;
  {
    Store::Txn txn(*store_);
    for (const auto& [id, gpus] : to_launch_) {
      if (HeldBack(gpus, id)) {
        // Preempted processes still hold its GPUs (or its own previous attempt is still
        // checkpointing): no progress, no service and no demotion until they are gone, at
        // the latest by their kill deadline (pinned, so a lingering process adds no events).
        const Time release = ExpectedRelease(gpus, id, now);
        if (release > sched_->Find(id)->progress_start) {
          Journal(
              {.t = now, .kind = EventKind::kHold, .job = id, .detail = {{"until_ms", release}}});
          MustOk(sched_->SetProgressStart(id, release, now));
        }
        continue;
      }
      JobRecord& rec = records_.at(id);
      ++rec.attempt;
      rec.pid = 0;
      rec.start_ticks = kLaunchInFlight;
      ready.push_back(id);
    }
    MustOk(SaveRows(ready));
    MustOk(txn.Commit());
  }
  // Phase 2: fork and exec. Phase 3: record what happened, in one commit.
  Store::Txn txn(*store_);
  for (JobId id : ready) {
    const std::vector<GpuId> gpus = to_launch_.at(id);
    to_launch_.erase(id);
    JobRecord& rec = records_.at(id);
    LaunchSpec spec{.job = id,
                    .attempt = rec.attempt,
                    .argv = rec.argv,
                    .cwd = rec.cwd,
                    .env = rec.env,
                    .gpus = gpus,
                    .job_dir = JobDir(id)};
    if (rec.uid >= 0 && rec.gid >= 0) {
      spec.uid = static_cast<uint32_t>(rec.uid);
      spec.gid = static_cast<uint32_t>(rec.gid);
    }
    spec.name = rec.name;
    changed.push_back(id);
    auto ref = executor_->Launch(spec);
    rec.start_ticks = 0;
    if (!ref.ok() && ref.status().code() == StatusCode::kUnavailable) {
      // The engine cannot be reached now (slurmctld down): nothing was started; the same
      // attempt is tried again on a later round.
      --rec.attempt;
      to_launch_[id] = gpus;
      rec.message = "waiting for the cluster engine: " + ref.status().message();
      continue;
    }
    if (!ref.ok()) {
      Journal({.t = now,
               .kind = EventKind::kFinish,
               .job = id,
               .detail = {{"how", "launch failed: " + ref.status().message()}}});
      MustOk(sched_->Finish(id, now));
      rec.state = LiveState::kFailed;
      rec.end = now;
      rec.message = "launch failed: " + ref.status().message();
      dirty_ = true;
      continue;
    }
    procs_[id] = Proc{.ref = ref->ref, .attempt = rec.attempt, .gpus = gpus};
    for (const GpuId& g : gpus) gpu_owner_[g] = id;
    rec.state = LiveState::kRunning;
    rec.pid = ref->ref.pid;
    rec.start_ticks = ref->ref.start_ticks;
    rec.gpus_held = gpus;
    rec.devices = ref->visible_devices;
    if (!ref->engine_job.empty()) rec.engine_job = ref->engine_job;
    rec.nodes = ref->nodes;
    rec.last_start = now;
    if (rec.first_start < 0) rec.first_start = now;
    // Progress (and service) counts from the real start, not from the core's decision when
    // a preempted process held the GPUs meanwhile.
    nlohmann::json launch = {{"attempt", rec.attempt},
                             {"pid", ref->ref.pid},
                             {"devices", ref->visible_devices},
                             {"master_port", ref->master_port}};
    if (!ref->engine_job.empty()) {
      launch["engine_job"] = ref->engine_job;
      launch["nodes"] = ref->nodes;
    }
    Journal({.t = now, .kind = EventKind::kLaunch, .job = id, .detail = launch});
    MustOk(sched_->SetProgressStart(id, now, now));
  }
  MustOk(SaveRows(changed));
  MustOk(txn.Commit());
  RetireEnded(changed);
}

int64_t LiveScheduler::Step() {
  std::lock_guard lk(mu_);
  const Time now = Now();
  std::vector<JobId> changed, stop;
  {
    Store::Txn txn(*store_);
    // Capacity before exits: a run lost with its node is then already an eviction.
    if (auto nodes = executor_->PollNodes()) ApplyNodes(*nodes, now, changed, stop);
    for (const ExitInfo& e : executor_->Poll()) HandleExit(e, now, changed);
    if (!procs_.empty() && now - alive_stamped_ >= kAliveStampMs) {
      MustOk(store_->SetMeta(kAliveKey, std::to_string(now)));  // all tracked ones alive now
      alive_stamped_ = now;
    }
    if (dirty_ || now >= sched_->NextWakeup()) {
      MustOk(Note({.t = now, .kind = EventKind::kTick}));
      for (const Action& a : sched_->Schedule(now)) {
        ApplyAction(a, now, changed);
        if (a.kind == Action::Kind::kPreempt &&
            records_.at(a.job).state == LiveState::kPreempting) {
          stop.push_back(a.job);
        }
      }
      dirty_ = false;
    }
    MustOk(SaveRows(changed));
    MustOk(txn.Commit());
  }
  for (JobId id : stop) StopProcess(id, now, cfg_.preempt_signal);
  RetireEnded(changed);
  // Kill what overstayed its grace before deciding what can launch.
  for (auto& [id, p] : procs_) {
    if (p.stopping && !p.killed && p.kill_at <= now) {
      (void)executor_->Signal(p.ref, SIGKILL);
      p.killed = true;
      p.gone_by = now + Seconds(1);
      p.kill_at = kNever;
    }
  }
  LaunchReady(now);
  Time next = sched_->NextWakeup();
  for (const auto& [id, p] : procs_) next = std::min(next, p.kill_at);
  if (dirty_) next = now;
  return next == kNever ? kNever : next + store_->epoch_ms();
}

void LiveScheduler::Wake() {
  {
    std::lock_guard lk(mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

void LiveScheduler::Run(const std::atomic<bool>& stop, int poll_ms) {
  while (!stop) {
    const int64_t next = Step();
    const int64_t wait =
        std::clamp<int64_t>(next == kNever ? poll_ms : next - clock_(), 0, poll_ms);
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, std::chrono::milliseconds(wait), [&] { return wake_; });
    wake_ = false;
  }
}

}  // namespace tiresias
