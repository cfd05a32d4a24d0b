// LiveScheduler: what users ask of it (see live_scheduler.h): submit (with the job's VC),
// cancel, hold and release, requeue. Each checks the request, journals it and wakes the loop.
#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "live/live_scheduler.h"

namespace tiresias {
namespace {

// Whether a hold by `by` is an admin's hold (Slurm's): an admin's of another user's job, which
// only an admin releases (its user could undo it).
bool AdminHolds(const JobRecord& rec, const std::string& by, bool admin) {
  return admin && by != rec.user;
}

}  // namespace

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
  const auto quota = sched_->QuotaOf(static_cast<size_t>(*tenants.IndexOf(rec.vc)));
  if (!tenants.borrow && quota && rec.gpus > *quota) {
    return InvalidArgument(
        fmt::format("submit: needs {} GPUs, more than VC `{}`'s quota of {}, and borrowing is "
                    "off: it could never run",
                    rec.gpus, rec.vc, *quota));
  }
  return Status::Ok();
}

StatusOr<JobId> LiveScheduler::Submit(const SubmitRequest& req, std::vector<JobId>* ids) {
  std::unique_lock lk(mu_);
  if (cfg_.disk && (cfg_.disk->low() || cfg_.disk->full())) {
    return ResourceExhausted(cfg_.disk->LowReason());
  }
  auto plan = Plan(req);
  if (!plan.ok()) return plan.status();
  for (const Dependency& d : plan->dependencies) {
    if (d.kind != Dependency::Kind::kSingleton && !DependedOn(d)) {
      return InvalidArgument(
          fmt::format("field 'dependency': job {} does not exist", DependencyTarget(d)));
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
    if (Status s = Committed(txn); !s.ok()) return s;
  }
  const JobId first = made.front().id;
  for (JobRecord& rec : made) {
    if (Status s = sched_->Submit(SpecOf(rec), rec.submit); !s.ok()) Warn(s.message());
    executor_->Prepare(PrepareSpec(rec));  // e.g. a held Slurm job; never blocks
    if (ids) ids->push_back(rec.id);
    AddRecord(std::move(rec));
  }
  eligibility_dirty_ = true;  // holds, dependencies and array limits apply before any pass
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return first;
}

Status LiveScheduler::Cancel(JobId id) {
  return Cancel(std::vector<JobId>{id}).front();
}

std::vector<Status> LiveScheduler::Cancel(const std::vector<JobId>& ids) {
  std::unique_lock lk(mu_);
  std::vector<Status> out = CancelLocked(ids);
  eligibility_dirty_ = true;
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return out;
}

std::vector<Status> LiveScheduler::CancelLocked(const std::vector<JobId>& ids) {
  // All in one transaction (an array's 10,000 tasks: it was one each, 2.4 s under the lock,
  // and a kill -9 meanwhile left most of them pending), then applied once it is on disk.
  struct Ending {
    JobId id;
    bool timed_out;
    LiveState state;
    std::string why;
  };
  std::vector<Status> out(ids.size());
  std::vector<Ending> ending;
  std::set<JobId> named;
  const Time now = Now();
  for (size_t k = 0; k < ids.size(); ++k) {
    const JobId id = ids[k];
    auto it = records_.find(id);
    if (it == records_.end()) {
      out[k] = NotFound(fmt::format("job {}: no such job", id.value()));
      continue;
    }
    const JobRecord& rec = it->second;
    if (IsTerminal(rec.state)) {
      out[k] =
          FailedPrecondition(fmt::format("job {}: already {}", id.value(), ToString(rec.state)));
      continue;
    }
    if (!named.insert(id).second) continue;  // named twice: cancelled once
    // In its time limit's grace its end is that (as Slurm's TIMEOUT): `wait` says 124.
    const bool timed_out = rec.timing_out && rec.time_limit;
    ending.push_back(
        {.id = id,
         .timed_out = timed_out,
         .state = timed_out ? LiveState::kTimeout : LiveState::kCancelled,
         .why = timed_out ? fmt::format("time limit {} reached (cancelled in its grace period)",
                                        SlurmTime(*rec.time_limit))
                          : "cancelled by request"});
  }
  if (ending.empty()) return out;
  {
    Store::Txn txn(*store_);
    Status written = Status::Ok();
    for (const Ending& e : ending) {
      const JobRecord& rec = records_.at(e.id);
      JobRecord ended = rec;  // as EndRecord leaves it
      ended.timing_out = false;
      Ended(ended, e.state, now, e.why);
      // In its time limit's grace the core ended its run at the limit: the cancel is only
      // noted (no core input), and it ends as its limit's end.
      Event end{.t = now, .kind = EventKind::kCancel, .job = e.id};
      if (e.timed_out) {
        end.kind = EventKind::kTimeLimit;
        end.detail = {{"limit", SlurmTime(*rec.time_limit)}, {"cancel", "by request"}};
      }
      if (written = Note(end); !written.ok()) break;
      if (written = store_->UpdateJob(ended); !written.ok()) break;
    }
    if (written.ok()) written = Committed(txn);
    if (!written.ok()) {  // none of them is cancelled
      for (size_t k = 0; k < ids.size(); ++k) {
        if (out[k].ok()) out[k] = written;
      }
      return out;
    }
  }
  std::vector<JobId> retired;
  for (const Ending& e : ending) {  // only once they are on disk
    JobRecord& rec = records_.at(e.id);
    rec.timing_out = false;
    EndRecord(rec, e.state, now, e.why);
    if (!e.timed_out) {
      if (Status s = sched_->Cancel(e.id, now); !s.ok()) Warn(s.message());
    }
    to_launch_.erase(e.id);
    if (procs_.contains(e.id)) StopProcess(e.id, now, cfg_.preempt_signal);
    retired.push_back(e.id);
  }
  RetireEnded(retired);  // nothing running: the engine may drop them now (else after the exit)
  return out;
}

Status LiveScheduler::Hold(JobId id, bool hold, bool* changed_out, const std::string& by,
                           bool admin) {
  std::unique_lock lk(mu_);
  if (changed_out) *changed_out = false;
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  JobRecord& rec = it->second;
  if (IsTerminal(rec.state)) {
    return FailedPrecondition(fmt::format("job {}: already {}", id.value(), ToString(rec.state)));
  }
  if (hold && rec.timing_out) {
    return FailedPrecondition(
        fmt::format("job {}: past its time limit, stopping: it ends timed out", id.value()));
  }
  if (hold && rec.state != LiveState::kPending) {
    // (`requeue` then `hold` may find it started again: one step does both.) Named as its
    // user names it (an array's task: not the array's id, which would requeue every task).
    const std::string ref = RefOf(rec);
    const bool runs = rec.state == LiveState::kRunning || rec.state == LiveState::kStarting;
    return FailedPrecondition(fmt::format(
        "job {}: {}; only a waiting job can be held{}", id.value(),
        ToString(ShownState(rec, Now())),
        runs ? fmt::format(" (`tiresias requeue --hold {}` stops it and holds it)", ref) : ""));
  }
  if (!hold && !rec.held && rec.held_in_engine) {  // the engine's admin releases it there
    return FailedPrecondition(fmt::format("job {}: {}", id.value(), EngineHoldText(rec)));
  }
  const bool admin_hold = hold && AdminHolds(rec, by, admin);
  if (!hold && rec.held && rec.held_by_admin && !admin) {
    return PermissionDenied(
        fmt::format("job {}: held by an admin; only an admin may release it", id.value()));
  }
  if (rec.held == hold && (!hold || rec.held_by_admin || !admin_hold)) return Status::Ok();
  JobRecord changed = rec;
  changed.held = hold;
  changed.held_by_admin = admin_hold;
  {  // Said in the journal (a job waiting on a dependency had no trace of it: its eligibility,
     // which the step journals, did not change).
    Store::Txn txn(*store_);
    Event said{.t = Now(),
               .kind = EventKind::kHold,
               .job = id,
               .detail = {{"held", hold}, {"by", by.empty() ? rec.user : by}}};
    if (admin_hold) said.detail["admin"] = true;
    if (Status s = Note(said); !s.ok()) return s;
    if (Status s = store_->UpdateJob(changed); !s.ok()) return s;
    if (Status s = Committed(txn); !s.ok()) return s;
  }
  rec = std::move(changed);  // only once it is on disk
  if (changed_out) *changed_out = true;
  eligibility_dirty_ = true;
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return Status::Ok();
}

Status LiveScheduler::RequeueHold(JobId id, const std::string& by, bool* changed, bool admin) {
  bool waiting = false;
  {
    std::lock_guard lk(mu_);
    auto it = records_.find(id);
    waiting = it != records_.end() && it->second.state == LiveState::kPending;
  }
  if (changed) *changed = true;
  return waiting ? Hold(id, true, changed, by, admin) : Requeue(id, by, /*hold=*/true, admin);
}

void LiveScheduler::RequeueInCore(JobId id, Time now, bool launched) {
  MustOk(sched_->Requeue(id, now));
  to_launch_.erase(id);
  if (launched) StopProcess(id, now, cfg_.preempt_signal);
}

Status LiveScheduler::Requeue(JobId id, const std::string& by, bool hold, bool admin) {
  std::unique_lock lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  JobRecord& rec = it->second;
  const Job* cj = sched_->Find(id);
  if (rec.timing_out) {
    return FailedPrecondition(
        fmt::format("job {}: past its time limit, stopping: it ends timed out", id.value()));
  }
  if (!cj || !cj->running() || rec.state == LiveState::kPreempting) {
    return FailedPrecondition(fmt::format("job {}: {}; only a running job can be requeued",
                                          id.value(), ToString(rec.state)));
  }
  const Time now = Now();
  // Never launched: nothing to stop; else its process checkpoints and exits (grace).
  const bool launched = !to_launch_.contains(id) && procs_.contains(id);
  JobRecord changed = rec;
  changed.message = "requeued by " + by + (hold ? ", and held" : "");
  changed.state = launched ? LiveState::kPreempting : LiveState::kPending;
  changed.held = changed.held || hold;
  if (hold && AdminHolds(rec, by, admin)) changed.held_by_admin = true;
  {
    Store::Txn txn(*store_);
    nlohmann::json detail = {{"by", by}};
    if (hold) detail["hold"] = true;
    if (Status s = Note({.t = now, .kind = EventKind::kRequeue, .job = id, .detail = detail});
        !s.ok()) {
      return s;
    }
    if (Status s = store_->UpdateJob(changed); !s.ok()) return s;
    if (Status s = Committed(txn); !s.ok()) return s;
  }
  rec = std::move(changed);  // only once it is on disk
  RequeueInCore(id, now, launched);
  eligibility_dirty_ = eligibility_dirty_ || hold;  // held before the next pass
  dirty_ = true;
  wake_ = true;
  lk.unlock();
  cv_.notify_all();
  return Status::Ok();
}

}  // namespace tiresias
