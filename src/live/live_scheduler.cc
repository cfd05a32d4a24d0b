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

#include "common/remove_tree.h"
#include "common/strings.h"
#include "exec/exit_file.h"
#include "live/journal_replay.h"

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
                  .job_dir = JobDir(r.id),
                  .tasks_per_gpu = r.tasks_per_gpu};
  if (r.uid >= 0 && r.gid >= 0) {
    spec.uid = static_cast<uint32_t>(r.uid);
    spec.gid = static_cast<uint32_t>(r.gid);
  }
  if (r.array_id != JobId()) {  // a task of an array (names reserved: Validate refuses them)
    spec.env.emplace_back("TIRESIAS_ARRAY_JOB_ID", r.array_id.str());
    spec.env.emplace_back("TIRESIAS_ARRAY_TASK_ID", std::to_string(r.array_index));
  }
  if (!r.output.empty()) spec.stdout_path = OutputPath(r, false);
  if (!r.error.empty()) spec.stderr_path = OutputPath(r, true);
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

Status LiveScheduler::ResolveVc(const std::string& requested, JobRecord& rec) const {
  const TenantConfig& tenants = sched_->tenants();
  if (tenants.vcs.empty()) {
    if (requested.empty()) return Status::Ok();
    return InvalidArgument(
        fmt::format("field 'vc': this cluster has no tenants, so no VC `{}` (serve --tenants "
                    "FILE declares them)",
                    requested));
  }
  auto vc = tenants.VcFor(rec.user, requested);
  if (!vc.ok()) {
    std::string known;
    for (const Tenant& t : tenants.vcs) known += (known.empty() ? "" : ", ") + t.name;
    return Status(vc.status().code(),
                  fmt::format("field 'vc': {} (VCs: {})", vc.status().message(), known));
  }
  rec.vc = *vc;
  const auto v = static_cast<size_t>(*tenants.IndexOf(rec.vc));
  const auto usage = sched_->VcUsages(0);
  if (!tenants.borrow && v < usage.size() && rec.gpus > usage[v].quota) {
    return InvalidArgument(
        fmt::format("submit: needs {} GPUs, more than VC `{}`'s quota of {}, and borrowing is "
                    "off: it could never run",
                    rec.gpus, rec.vc, usage[v].quota));
  }
  return Status::Ok();
}

JobSpec LiveScheduler::SpecOf(const JobRecord& r) const {
  return SpecOfRecord(r);
}

Status LiveScheduler::Note(const Event& e) {
  if (cfg_.log_events && e.kind != EventKind::kTick) {
    const auto wall =
        std::chrono::system_clock::time_point(std::chrono::milliseconds(e.t + store_->epoch_ms()));
    std::cout << fmt::format("{:%FT%T}Z {:<8} {:<9} {}\n",
                             std::chrono::floor<std::chrono::milliseconds>(wall), ToString(e.kind),
                             e.job == JobId() ? "" : fmt::format("job {}", e.job.value()),
                             Describe(e, store_->epoch_ms()))
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

StatusOr<JobId> LiveScheduler::Submit(const SubmitRequest& req, std::vector<JobId>* ids) {
  std::unique_lock lk(mu_);
  auto plan = Plan(req);
  if (!plan.ok()) return plan.status();
  for (const Dependency& d : plan->dependencies) {
    if (!records_.contains(d.job)) {
      return InvalidArgument(
          fmt::format("field 'dependency': job {} does not exist", d.job.value()));
    }
  }
  JobRecord base;
  base.name = req.name.empty() ? std::filesystem::path(req.argv[0]).filename().string() : req.name;
  base.user = req.user.empty() ? "unknown" : req.user;
  if (req.uid) base.uid = *req.uid;
  if (req.gid) base.gid = *req.gid;
  base.model = req.model;
  base.gpus = static_cast<int>(req.gpus);
  base.argv = req.argv;
  base.cwd = req.cwd;
  base.env = req.env;
  base.duration = req.duration();
  base.time_limit = plan->time_limit;
  base.dependencies = plan->dependencies;
  base.array_limit = plan->array_limit;
  base.output = req.output;
  base.error = req.error;
  base.held = req.hold;
  base.tasks_per_gpu = static_cast<int>(req.tasks_per_gpu);
  base.keep_checkpoints = req.keep_checkpoints;
  base.stop_at_checkpoint = static_cast<Duration>(req.stop_at_checkpoint_s * kMsPerSecond);
  if (base.tasks_per_gpu > 0 && cfg_.executor == "slurm") {
    return InvalidArgument(
        "field 'tasks_per_gpu': not supported with --executor slurm yet (its batch script "
        "starts one task per node); start one process per GPU from the job, e.g. with torchrun");
  }
  if (Status s = ResolveVc(req.vc, base); !s.ok()) return s;
  if (sched_->policy().needs_durations() && !base.duration) {
    return InvalidArgument(fmt::format(
        "submit: policy {} orders jobs by their run time; give --duration", cfg_.policy));
  }
  if (auto why = sched_->placement().NeverFitsReason(SpecOf(base), sched_->topology())) {
    return InvalidArgument(fmt::format("submit: job can never run on this cluster ({} GPUs): {}",
                                       sched_->topology().total_gpus(), *why));
  }
  const Time now = Now();
  // One job, or one per array task (the array's id is its first task's).
  std::vector<int> tasks = plan->array_indices;
  if (tasks.empty()) tasks.push_back(-1);
  std::vector<JobRecord> made;
  {
    Store::Txn txn(*store_);
    const JobId array_id = plan->array_indices.empty() ? JobId() : JobId(store_->NextJobId());
    for (int index : tasks) {
      JobRecord rec = base;
      rec.submit = now;
      if (index >= 0) {
        rec.array_id = array_id;
        rec.array_index = index;
      }
      if (Status s = store_->InsertJob(rec); !s.ok()) return s;
      nlohmann::json detail = {{"name", rec.name}, {"gpus", rec.gpus}};
      if (index >= 0) detail["array"] = fmt::format("{}_{}", array_id.value(), index);
      if (Status s = Note({.t = now, .kind = EventKind::kSubmit, .job = rec.id, .detail = detail});
          !s.ok()) {
        return s;
      }
      made.push_back(std::move(rec));
    }
    if (Status s = txn.Commit(); !s.ok()) return s;
  }
  const JobId first = made.front().id;
  for (JobRecord& rec : made) {
    if (Status s = sched_->Submit(SpecOf(rec), rec.submit); !s.ok()) Warn(s.message());
    executor_->Prepare(PrepareSpec(rec));  // e.g. a held Slurm job; never blocks
    if (ids) ids->push_back(rec.id);
    records_.emplace(rec.id, std::move(rec));
  }
  eligibility_dirty_ = true;  // holds, dependencies and array limits apply before any pass
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return first;
}

std::string LiveScheduler::WhyIneligible(const JobRecord& rec, std::string* never) const {
  for (const Dependency& d : rec.dependencies) {
    auto t = records_.find(d.job);
    if (t == records_.end()) continue;  // checked at submit; a job is never removed
    const LiveState st = t->second.state;
    const bool ended = IsTerminal(st), ok = st == LiveState::kFinished;
    const bool met = d.kind == Dependency::Kind::kAfterAny  ? ended
                     : d.kind == Dependency::Kind::kAfterOk ? ok
                                                            : ended && !ok;
    if (met) continue;
    if (ended && never) {  // afterok on a job that did not finish, afternotok on one that did
      *never = fmt::format("dependency {} can never be met: job {} ended {}", ToString(d),
                           d.job.value(), ToString(st));
    }
    return "dependency";
  }
  return rec.held ? "held" : "";
}

void LiveScheduler::UpdateEligibility(Time now, std::vector<JobId>& changed) {
  if (!eligibility_dirty_) return;
  eligibility_dirty_ = false;
  // An array's limit bounds its tasks that run or may start: the running ones count first,
  // then waiting ones are made eligible in index order (records_ is in id order) while the
  // count is under the limit; the rest are held with reason "array limit".
  std::map<JobId, int> active;
  for (const auto& [id, rec] : records_) {
    if (rec.array_limit <= 0 || IsTerminal(rec.state)) continue;
    if (const Job* cj = sched_->Find(id); cj && cj->running()) ++active[rec.array_id];
  }
  for (auto& [id, rec] : records_) {
    if (IsTerminal(rec.state)) continue;
    const Job* cj = sched_->Find(id);
    if (!cj || (cj->state != JobState::kPending && cj->state != JobState::kHeld)) continue;
    std::string never;
    std::string why = WhyIneligible(rec, &never);
    if (!never.empty()) {  // ends the job, which may settle the dependencies of others
      Journal({.t = now, .kind = EventKind::kCancel, .job = id, .detail = {{"why", never}}});
      MustOk(sched_->Cancel(id, now));
      to_launch_.erase(id);
      rec.state = LiveState::kCancelled;
      rec.end = now;
      rec.message = never;
      CountEnded(rec);
      changed.push_back(id);
      eligibility_dirty_ = true;
      continue;
    }
    const bool have = cj->state == JobState::kPending;
    bool want = why.empty();
    if (want && rec.array_limit > 0) {
      if (active[rec.array_id] >= rec.array_limit) {
        want = false;
        why = "array limit";
      } else {
        ++active[rec.array_id];
      }
    }
    if (want == have) continue;
    Journal({.t = now,
             .kind = EventKind::kEligible,
             .job = id,
             .detail = {{"eligible", want}, {"why", want ? "" : why}}});
    MustOk(sched_->SetEligible(id, want, now));
    changed.push_back(id);
  }
}

Status LiveScheduler::Cancel(JobId id) {
  return Cancel(std::vector<JobId>{id}).front();
}

std::vector<Status> LiveScheduler::Cancel(const std::vector<JobId>& ids) {
  std::unique_lock lk(mu_);
  std::vector<Status> out;
  for (JobId id : ids) out.push_back(CancelLocked(id));
  eligibility_dirty_ = true;
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return out;
}

Status LiveScheduler::CancelLocked(JobId id) {
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  JobRecord& rec = it->second;
  if (IsTerminal(rec.state)) {
    return FailedPrecondition(fmt::format("job {}: already {}", id.value(), ToString(rec.state)));
  }
  const Time now = Now();
  JobRecord ended = rec;
  ended.state = LiveState::kCancelled;
  ended.end = now;
  ended.message = "cancelled by request";
  {
    Store::Txn txn(*store_);
    if (Status s = Note({.t = now, .kind = EventKind::kCancel, .job = id}); !s.ok()) return s;
    if (Status s = store_->UpdateJob(ended); !s.ok()) return s;
    if (Status s = txn.Commit(); !s.ok()) return s;
  }
  rec = std::move(ended);  // only once it is on disk
  CountEnded(rec);
  if (Status s = sched_->Cancel(id, now); !s.ok()) Warn(s.message());
  to_launch_.erase(id);
  if (procs_.contains(id)) StopProcess(id, now, cfg_.preempt_signal);
  RetireEnded({id});  // nothing running: the engine may drop it now (else after the exit)
  return Status::Ok();
}

Status LiveScheduler::Hold(JobId id, bool hold) {
  std::unique_lock lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  JobRecord& rec = it->second;
  if (IsTerminal(rec.state)) {
    return FailedPrecondition(fmt::format("job {}: already {}", id.value(), ToString(rec.state)));
  }
  if (hold && rec.state != LiveState::kPending) {
    return FailedPrecondition(
        fmt::format("job {}: {}; only a waiting job can be held (requeue it first)", id.value(),
                    ToString(rec.state)));
  }
  if (rec.held == hold) return Status::Ok();
  rec.held = hold;
  if (Status s = store_->UpdateJob(rec); !s.ok()) return s;
  eligibility_dirty_ = true;
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return Status::Ok();
}

Status LiveScheduler::Requeue(JobId id, const std::string& by) {
  std::unique_lock lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  JobRecord& rec = it->second;
  const Job* cj = sched_->Find(id);
  if (!cj || !cj->running() || rec.state == LiveState::kPreempting) {
    return FailedPrecondition(fmt::format("job {}: {}; only a running job can be requeued",
                                          id.value(), ToString(rec.state)));
  }
  const Time now = Now();
  {
    Store::Txn txn(*store_);
    if (Status s = Note({.t = now, .kind = EventKind::kRequeue, .job = id, .detail = {{"by", by}}});
        !s.ok()) {
      return s;
    }
    if (Status s = txn.Commit(); !s.ok()) return s;
  }
  MustOk(sched_->Requeue(id, now));
  rec.message = "requeued by " + by;
  if (to_launch_.erase(id) || !procs_.contains(id)) {
    rec.state = LiveState::kPending;  // never launched: nothing to stop
  } else {
    rec.state = LiveState::kPreempting;
    StopProcess(id, now, cfg_.preempt_signal);
  }
  MustOk(store_->UpdateJob(rec));
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
    if (e.completed && e.exit_code == 0 && e.signal == 0 && !e.lost) {
      // It completed its work during the grace period and said so (its done file): the
      // job's end, not a checkpoint; it is not run again.
      FinishCompleted(rec, what, now);
      return;
    }
    if (rec.timing_out) {  // it ran out of time: it ends, whatever the core thought of it
      EndAsTimeout(rec, now, what);
      return;
    }
    // Checkpointed: it exited by itself after the signal, or was stopped at once at a fresh
    // checkpoint (it opted in); killed when its grace ran out (or its run was lost meanwhile,
    // e.g. its node failed): then its work since its last reported checkpoint is lost.
    const bool checkpointed = (p.at_checkpoint || !p.killed) && !e.lost;
    const Service lost = checkpointed && !p.at_checkpoint ? 0 : p.loss;
    nlohmann::json detail = {
        {"how", what}, {"after", "preemption"}, {"checkpointed", checkpointed}};
    if (lost > 0) detail["lost_gpu_ms"] = lost;
    Journal({.t = now, .kind = EventKind::kExit, .job = e.job, .detail = detail});
    if (p.killed && !p.at_checkpoint) ++rec.kills;
    rec.lost += lost;
    metrics_.CountLost(ToSeconds(lost));
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
    Journal({.t = now, .kind = EventKind::kRelaunch, .job = e.job, .detail = {{"reason", what}}});
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
  eligibility_dirty_ = true;  // jobs that depend on it
  CountEnded(rec);
  if (ok) DropCheckpoints(rec);
}

void LiveScheduler::PollCheckpoints(Time now) {
  // A job reports a checkpoint by touching its marker (TIRESIAS_CHECKPOINT_FILE); a marker
  // older than the run's progress start is from an earlier attempt (the run resumed from it).
  for (const auto& [id, p] : procs_) {
    if (p.stopping) continue;
    const Job* cj = sched_->Find(id);
    if (!cj || !cj->running()) continue;
    const auto mtime = CheckpointMarkerTime(JobDir(id));
    if (!mtime) continue;
    const Time at = std::min(*mtime - store_->epoch_ms(), now);
    if (at < cj->progress_start || at <= cj->ckpt_at) continue;
    Journal({.t = now, .kind = EventKind::kCheckpoint, .job = id, .detail = {{"at_ms", at}}});
    MustOk(sched_->Checkpointed(id, at, now));
  }
}

void LiveScheduler::DropCheckpoints(JobRecord& rec) {
  if (rec.keep_checkpoints) return;
  const std::string dir = (std::filesystem::path(JobDir(rec.id)) / "checkpoint").string();
  if (Status s = RemoveTree(dir); !s.ok()) {
    Warn(fmt::format("job {}: {}", rec.id.value(), s.message()));
    rec.message += "; its checkpoint directory could not be removed: " + s.message();
  }
}

void LiveScheduler::FinishCompleted(JobRecord& rec, const std::string& how, Time now) {
  const std::string after = rec.timing_out ? "time limit" : "preemption";
  Journal({.t = now,
           .kind = EventKind::kExit,
           .job = rec.id,
           .detail = {{"how", how}, {"after", after}, {"completed", true}}});
  // The core stopped it (or already started it again): it ends wherever it is.
  Journal({.t = now,
           .kind = EventKind::kFinish,
           .job = rec.id,
           .detail = {{"how", how + ", work complete (done file) after " + after}}});
  MustOk(sched_->Finish(rec.id, now));
  to_launch_.erase(rec.id);
  rec.state = LiveState::kFinished;
  rec.end = now;
  rec.timing_out = false;
  rec.message = "completed: its work was done when it was stopped (done file)";
  dirty_ = true;
  eligibility_dirty_ = true;  // jobs that depend on it
  CountEnded(rec);
  DropCheckpoints(rec);
}

Time LiveScheduler::EnforceTimeLimits(Time now, std::vector<JobId>& changed) {
  Time next = kNever;
  for (auto& [id, rec] : records_) {
    if (!rec.time_limit || rec.timing_out || IsTerminal(rec.state)) continue;
    const Job* cj = sched_->Find(id);
    if (!cj || !cj->running()) continue;
    // Only running time counts: progress since its last (re)start plus what it ran before.
    const Duration left = *rec.time_limit - cj->ExecutedAt(std::max(now, cj->progress_start));
    if (left > 0) {
      next = std::min(next, std::max(now, cj->progress_start) + left);
      continue;
    }
    rec.timing_out = true;
    rec.message = fmt::format("time limit {} reached; stopping", SlurmTime(*rec.time_limit));
    changed.push_back(id);
    if (procs_.contains(id)) {
      StopProcess(id, now, cfg_.preempt_signal);  // the checkpoint signal, then the grace
    } else {  // not launched yet (waiting for its GPUs): it simply ends
      EndAsTimeout(rec, now, "not running");
    }
  }
  return next;
}

void LiveScheduler::EndAsTimeout(JobRecord& rec, Time now, const std::string& how) {
  const Job* cj = sched_->Find(rec.id);
  const bool running = cj && cj->running();
  Journal({.t = now,
           .kind = running ? EventKind::kFinish : EventKind::kCancel,
           .job = rec.id,
           .detail = {{"how", "timeout (" + how + ")"}}});
  MustOk(running ? sched_->Finish(rec.id, now) : sched_->Cancel(rec.id, now));
  to_launch_.erase(rec.id);
  rec.state = LiveState::kTimeout;
  rec.end = now;
  rec.message = fmt::format("time limit {} reached ({})", SlurmTime(*rec.time_limit), how);
  rec.timing_out = false;
  CountEnded(rec);
  eligibility_dirty_ = true;
  dirty_ = true;
}

void LiveScheduler::CountEnded(const JobRecord& rec) {
  metrics_.JobEnded(ToString(rec.state), ToSeconds(rec.end - rec.submit),
                    rec.first_start >= 0 ? ToSeconds(rec.first_start - rec.submit) : -1);
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
  metrics_.CountPreemption();
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
  if (const Job* cj = sched_->Find(id)) p.loss = cj->RunLossAt(now);
  (void)executor_->Signal(p.ref, sig);  // NotFound: already gone, Poll reports it
}

void LiveScheduler::PreemptProcess(JobId id, Time now) {
  auto it = procs_.find(id);
  const Job* cj = sched_->Find(id);
  const auto rec = records_.find(id);
  if (it == procs_.end() || it->second.stopping || !cj || rec == records_.end() ||
      rec->second.stop_at_checkpoint <= 0 || cj->ckpt_at < cj->progress_start ||
      now - cj->ckpt_at > rec->second.stop_at_checkpoint) {
    StopProcess(id, now, cfg_.preempt_signal);
    return;
  }
  // It opted in and checkpointed moments ago: its GPUs are free as soon as it is gone.
  Proc& p = it->second;
  p.stopping = p.killed = p.at_checkpoint = true;
  p.kill_at = kNever;
  p.gone_by = now + Seconds(1);
  p.loss = cj->RunLossAt(now);
  (void)executor_->Signal(p.ref, SIGKILL);
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
        Time release = ExpectedRelease(gpus, id, now);
        const Time pinned = sched_->Find(id)->progress_start;
        if (release <= now) {
          // Overdue: a killed process outlived its second (a cluster engine can take longer
          // to report a stop). Expect it within another second, and pin again only when that
          // has passed: not a drain event on every round while it lingers.
          if (now < pinned) continue;
          release = now + kOverdueMs;
        }
        if (release > pinned) {
          Journal(
              {.t = now, .kind = EventKind::kDrain, .job = id, .detail = {{"until_ms", release}}});
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
    LaunchSpec spec = PrepareSpec(rec);
    spec.gpus = gpus;
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
    if (rec.message.starts_with("waiting for the cluster engine")) rec.message.clear();
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
    PollCheckpoints(now);
    if (!procs_.empty() && now - alive_stamped_ >= kAliveStampMs) {
      MustOk(store_->SetMeta(kAliveKey, std::to_string(now)));  // all tracked ones alive now
      alive_stamped_ = now;
    }
    UpdateEligibility(now, changed);
    time_limit_due_ = EnforceTimeLimits(now, changed);
    if (dirty_ || now >= sched_->NextWakeup()) {
      MustOk(Note({.t = now, .kind = EventKind::kTick}));
      const auto pass_start = std::chrono::steady_clock::now();
      const std::vector<Action> actions = sched_->Schedule(now);
      metrics_.ObservePass(SecondsSince(pass_start));
      for (const Transition& t : sched_->TakeTransitions()) {
        Journal(EventOf(t.job, t.at, t.from_queue, t.to_queue));
        metrics_.CountTransition(/*promotion=*/t.to_queue < t.from_queue);
      }
      for (const Action& a : actions) {
        ApplyAction(a, now, changed);
        if (a.kind == Action::Kind::kPreempt &&
            records_.at(a.job).state == LiveState::kPreempting) {
          stop.push_back(a.job);
        }
      }
      dirty_ = false;
    }
    MustOk(SaveRows(changed));
    const auto commit_start = std::chrono::steady_clock::now();
    MustOk(txn.Commit());
    metrics_.ObserveCommit(SecondsSince(commit_start));
  }
  for (JobId id : stop) PreemptProcess(id, now);
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
  SampleCluster(now);
  Time next = std::min(sched_->NextWakeup(), time_limit_due_);
  for (const auto& [id, p] : procs_) next = std::min(next, p.kill_at);
  if (dirty_ || eligibility_dirty_) next = now;
  return next == kNever ? kNever : next + store_->epoch_ms();
}

double LiveScheduler::SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void LiveScheduler::SampleCluster(Time now) {
  const int64_t wall = now + store_->epoch_ms();
  if (!metrics_.SampleDue(wall)) return;
  ClusterSample s{.wall_ms = wall, .gpus_total = sched_->topology().total_gpus()};
  s.gpus_busy = s.gpus_total - sched_->cluster().total_free();
  s.gpus_fragmented = FragmentedGpus();
  s.running = static_cast<int>(sched_->num_running());
  s.waiting_by_queue.assign(static_cast<size_t>(sched_->policy().num_queues()), 0);
  for (const Job& j : sched_->jobs()) {
    if (j.state != JobState::kPending) continue;
    const size_t q = static_cast<size_t>(std::max(0, j.queue));
    if (q >= s.waiting_by_queue.size()) s.waiting_by_queue.resize(q + 1, 0);
    ++s.waiting_by_queue[q];
  }
  for (const auto& [id, r] : records_) s.preemptions += r.preemptions;
  metrics_.Sample(std::move(s));
}

int LiveScheduler::FragmentedGpus() const {
  // Free while the first waiting job (policy order) fits them in count but has no slot.
  const Job* head = sched_->FirstWaiting();
  const int free = sched_->cluster().total_free();
  return head && free > 0 && head->gpus() <= free ? free : 0;
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
