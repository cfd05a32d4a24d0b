// LiveScheduler: what happens when a job's process ends or must end (see live_scheduler.h):
// exits (finished, failed, preempted and checkpointed, killed at the grace deadline, lost with
// its node), jobs cancelled outside, completion markers, checkpoint markers and time limits.
#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "common/remove_tree.h"
#include "common/strings.h"
#include "exec/exit_file.h"
#include "live/live_scheduler.h"

namespace tiresias {

void LiveScheduler::CancelledOutside(JobId id, const std::string& why, Time now,
                                     std::vector<JobId>& changed) {
  auto it = records_.find(id);
  if (it == records_.end() || IsTerminal(it->second.state)) return;
  JobRecord& rec = it->second;
  if (rec.timing_out && rec.time_limit) {  // in its time limit's grace: that is its end
    EndAsTimeout(rec, now, "cancelled outside tiresias in its grace period: " + why);
    changed.push_back(id);
    return;
  }
  Journal({.t = now, .kind = EventKind::kCancel, .job = id, .detail = {{"how", why}}});
  // Held back too (a hold, a dependency, its array's limit: kHeld), as the journal's replay
  // cancels it (a review: the live core kept it held for ever).
  if (const Job* cj = sched_->Find(id); cj && !cj->ended()) MustOk(sched_->Cancel(id, now));
  to_launch_.erase(id);
  EndRecord(rec, LiveState::kCancelled, now, "cancelled outside tiresias: " + why);
  changed.push_back(id);
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
  rec.stop_sent = -1;
  rec.stop_deadline = -1;
  const bool preempted = rec.stop_preempted;  // its stop's, if it was told to stop
  rec.stop_preempted = false;
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
  // Killed: by this serve, or, past its deadline, by one before a restart (its SIGKILL); not
  // when the engine recorded that it ended by itself first (Slurm: its script exited on the
  // signal, then its job stayed COMPLETING through a slow epilog past the grace; it read
  // "killed", its work lost).
  const bool killed = (p.killed || (p.stopping && e.signal == SIGKILL && p.kill_at <= now)) &&
                      (!e.known() || e.signal == SIGKILL);
  if (stopped) {
    if (IsTerminal(rec.state)) {
      // Ended while its process stopped: cancelled, or past its time limit (cancelled in
      // that grace, it ends timed out all the same: CancelLocked).
      const char* after = rec.state == LiveState::kTimeout ? "time limit" : "cancel";
      Journal({.t = now,
               .kind = EventKind::kExit,
               .job = e.job,
               .detail = {{"how", what}, {"after", after}}});
      // Cancelled in a preemption's grace and killed at its end: that preemption's stop was a
      // kill, not a checkpoint (its loss is moot: the job will not resume).
      if (killed && !p.at_checkpoint && preempted) ++rec.kills;
      return;
    }
    if (e.completed && ((e.exit_code == 0 && e.signal == 0) || !e.known()) && !e.lost) {
      // It completed its work during the grace period and said so (its done file): the
      // job's end, not a checkpoint; it is not run again. (Also when its exit is not known:
      // Slurm forgot the job; it ran again.)
      FinishCompleted(rec, what, preempted, now, "done file");
      return;
    }
    // Never told to stop (evicted in this step, its exit handled after): an exit 0 of its own
    // is its end, not a checkpoint (it ran again).
    if (!p.stopping && e.exit_code == 0 && e.signal == 0 && !e.lost) {
      FinishCompleted(rec, what, preempted, now, "it exited before it was told to stop");
      return;
    }
    if (rec.timing_out) {  // it ran out of time: it ends (the core ended its run at the limit)
      Journal({.t = now,
               .kind = EventKind::kExit,
               .job = e.job,
               .detail = {{"how", what}, {"after", "time limit"}}});
      EndAsTimeout(rec, now, what);
      return;
    }
    // Checkpointed: it exited by itself after the signal, or was stopped at once at a fresh
    // checkpoint (it opted in); killed when its grace ran out (or its run was lost meanwhile,
    // e.g. its node failed): then its work since its last reported checkpoint is lost.
    // (Not yet told to stop: the core stopped it in this step, e.g. an eviction with the run
    // lost on the same node.)
    const bool checkpointed = (p.at_checkpoint || !killed) && !e.lost;
    const Service loss = p.stopping ? p.loss : LossOfStop(e.job);
    const Service lost = checkpointed && !p.at_checkpoint ? 0 : loss;
    // (A requeue's stop is no preemption: JobRecord::stop_preempted.)
    nlohmann::json detail = {{"how", what},
                             {"after", preempted ? "preemption" : "requeue"},
                             {"checkpointed", checkpointed}};
    if (lost > 0) detail["lost_gpu_ms"] = lost;
    if (e.lost) {
      // Lost with its node (it was told to stop, or evicted, as the node went): no
      // checkpoint on the signal, nor a kill of ours (it read "checkpointed").
      detail["lost"] = true;
      rec.message = fmt::format("its run was lost with its node ({}); {}", what,
                                lost > 0 ? "its work since its last checkpoint is lost"
                                         : "no work since its last checkpoint");
    }
    Journal({.t = now, .kind = EventKind::kExit, .job = e.job, .detail = detail});
    if (killed && !p.at_checkpoint && preempted) {
      ++rec.kills;
    } else if (e.lost && preempted) {
      ++rec.lost_runs;
    }
    rec.lost += lost;
    metrics_.CountLost(ToSeconds(lost));
    rec.state = to_launch_.contains(e.job) ? LiveState::kStarting : LiveState::kPending;
    return;
  }
  if (!cj || !cj->running()) {
    Warn(fmt::format("job {}: process exited ({}) while not running", e.job.value(), what));
    return;
  }
  // The engine lost a run after its work was done (its done file; e.g. slurmctld lost its
  // state): its end, as any other, not a relaunch (it ran again, and counted a preemption).
  const bool done = e.lost && e.completed;
  if (e.lost && !done) {
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
  if (e.timed_out && !done) {
    // The engine's time limit ended it (Slurm's TIMEOUT): its end is a timeout, not a failure
    // (it read "failed ... exit 143").
    EndAsTimeout(rec, now, what, /*engines=*/true);
    return;
  }
  const bool ok = done || (e.exit_code == 0 && e.signal == 0);
  Journal({.t = now,
           .kind = EventKind::kFinish,
           .job = e.job,
           .detail = {{"how", done ? what + ", work complete (done file)" : what}}});
  if (Status s = sched_->Finish(e.job, now); !s.ok()) Warn(s.message());
  EndRecord(rec, ok ? LiveState::kFinished : LiveState::kFailed, now,
            done ? "completed (done file); then " + what
            : ok ? "completed"
                 : "failed: " + what);
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

void LiveScheduler::PinEngineWaits(Time now, std::vector<JobId>& changed) {
  // Released to the engine, which keeps it waiting (Slurm: a reservation, a partition down): it
  // showed `running`, its service and time limit counting, and could time out never run.
  for (const auto& [id, p] : procs_) {
    if (p.stopping) continue;
    const Job* cj = sched_->Find(id);
    if (!cj || !cj->running() || now < cj->progress_start) continue;
    if (now - cj->run_start >= kEngineWaitPinMaxMs) continue;  // (asked of the engine last)
    JobRecord& rec = records_.at(id);
    // Not in its first seconds: Slurm starts a released job within about a second, which is
    // not worth a pin (it came at once, 10 s, and the run's first checkpoints were ignored).
    if (now - rec.last_start < kEngineStartGraceMs) continue;
    const std::string why = executor_->NotStarted(id);
    if (why.empty()) continue;
    rec.message = "launched; " + why;
    Journal({.t = now,
             .kind = EventKind::kDrain,
             .job = id,
             .detail = {{"until_ms", now + kEngineWaitPinMs}, {"why", rec.message}}});
    MustOk(sched_->SetProgressStart(id, now + kEngineWaitPinMs, now));
    changed.push_back(id);
  }
}

void LiveScheduler::SyncEngineHolds(Time now, std::vector<JobId>& changed) {
  auto holds = executor_->EngineHolds();
  if (!holds) return;  // the engine cannot say now: nothing changes
  engine_holds_ = std::move(*holds);
  for (JobRecord* open : OpenRecords()) {
    JobRecord& rec = *open;
    const JobId id = rec.id;
    if (IsTerminal(rec.state) || rec.timing_out) continue;
    auto it = engine_holds_.find(id);
    if (it == engine_holds_.end()) {
      if (!rec.held_in_engine) continue;
      rec.held_in_engine = false;  // (a hold of tiresias's own stays)
      Journal({.t = now,
               .kind = EventKind::kHold,
               .job = id,
               .detail = {{"held", false}, {"by", "slurm"}, {"engine", true}}});
    } else {
      if (rec.held_in_engine || rec.state == LiveState::kPreempting) continue;
      const Job* cj = sched_->Find(id);
      if (cj && cj->running()) {
        // Started meanwhile (its release was kept back): requeued, as `requeue --hold` does.
        const bool launched = !to_launch_.contains(id) && procs_.contains(id);
        Journal({.t = now,
                 .kind = EventKind::kRequeue,
                 .job = id,
                 .detail = {{"by", "slurm"}, {"hold", true}}});
        rec.state = launched ? LiveState::kPreempting : LiveState::kPending;
        RequeueInCore(id, now, launched);
      } else if (rec.state != LiveState::kPending) {
        continue;
      }
      rec.held_in_engine = true;
      Journal({.t = now,
               .kind = EventKind::kHold,
               .job = id,
               .detail = {{"held", true}, {"by", "slurm"}, {"engine", true}, {"why", it->second}}});
    }
    changed.push_back(id);
    eligibility_dirty_ = true;
    dirty_ = true;
  }
}

std::string LiveScheduler::EngineHoldText(const JobRecord& r) const {
  auto it = engine_holds_.find(r.id);
  if (it != engine_holds_.end()) return it->second;
  return "held by an admin in the cluster's engine: released there, not by tiresias";
}

void LiveScheduler::DropCheckpoints(JobRecord& rec) {
  if (rec.keep_checkpoints) return;
  const std::string dir = (std::filesystem::path(JobDir(rec.id)) / "checkpoint").string();
  if (Status s = RemoveTree(dir); !s.ok()) {
    Warn(fmt::format("job {}: {}", rec.id.value(), s.message()));
    rec.message += "; its checkpoint directory could not be removed: " + s.message();
  }
}

void LiveScheduler::FinishCompleted(JobRecord& rec, const std::string& how, bool preempted,
                                    Time now, const std::string& evidence) {
  const std::string after = rec.timing_out ? "time limit" : preempted ? "preemption" : "requeue";
  Journal({.t = now,
           .kind = EventKind::kExit,
           .job = rec.id,
           .detail = {{"how", how}, {"after", after}, {"completed", true}}});
  // The core stopped it (or already started it again): it ends wherever it is. (Past its
  // time limit the core ended its run then.)
  if (const Job* cj = sched_->Find(rec.id); cj && !cj->ended()) {
    Journal({.t = now,
             .kind = EventKind::kFinish,
             .job = rec.id,
             .detail = {{"how", how + ", work complete (" + evidence + ") after " + after}}});
    MustOk(sched_->Finish(rec.id, now));
  }
  to_launch_.erase(rec.id);
  rec.timing_out = false;
  EndRecord(rec, LiveState::kFinished, now,
            "completed: its work was done when it was stopped (" + evidence + ")");
  DropCheckpoints(rec);
}

Time LiveScheduler::EnforceTimeLimits(Time now, std::vector<JobId>& changed) {
  Time next = kNever;
  for (JobRecord* open : OpenRecords()) {
    JobRecord& rec = *open;
    const JobId id = rec.id;
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
    // (A run that waits for its launch behind its own previous, stopping, process has not
    // begun: it ends as one not launched, and that process stops as it was told.)
    if (procs_.contains(id) && !to_launch_.contains(id)) {
      Journal({.t = now,
               .kind = EventKind::kTimeLimit,
               .job = id,
               .detail = {{"limit", SlurmTime(*rec.time_limit)}}});
      StopProcess(id, now, cfg_.preempt_signal);  // the checkpoint signal, then the grace
      rec.state = LiveState::kPreempting;         // stopping, reason TimeLimit (it said "running")
      // Its run ends in the core now (the policies learn its service): the core cannot start
      // it again past its limit, nor preempt a job for the GPUs it is about to free. Its
      // process's GPUs are avoided while it stops (SyncStoppingGpus); its exit ends the job.
      Journal({.t = now,
               .kind = EventKind::kFinish,
               .job = id,
               .detail = {{"how",
                           "timeout: its run ends at its time limit; its process is "
                           "stopping"}}});
      MustOk(sched_->Finish(id, now));
      dirty_ = true;
    } else {  // not launched yet (waiting for its GPUs): it simply ends
      EndAsTimeout(rec, now, "its run not launched yet");
    }
  }
  return next;
}

void LiveScheduler::EndAsTimeout(JobRecord& rec, Time now, const std::string& how, bool engines) {
  // Its run not launched yet, its end is the core's too (a finish: the policies learn its
  // service). One told to stop at its limit had its run ended in the core then.
  if (const Job* cj = sched_->Find(rec.id); cj && !cj->ended()) {
    Journal({.t = now,
             .kind = EventKind::kFinish,
             .job = rec.id,
             .detail = {{"how", "timeout (" + how + ")"}}});
    MustOk(sched_->Finish(rec.id, now));
  }
  to_launch_.erase(rec.id);
  rec.timing_out = false;
  // The engine's limit is not tiresias's (which the job may not have).
  EndRecord(rec, LiveState::kTimeout, now,
            engines || !rec.time_limit
                ? fmt::format("the engine's time limit reached ({})", how)
                : fmt::format("time limit {} reached ({})", SlurmTime(*rec.time_limit), how));
}

void LiveScheduler::Ended(JobRecord& rec, LiveState state, Time now, std::string message) {
  rec.state = state;
  rec.end = now;
  rec.message = std::move(message);
}

void LiveScheduler::EndRecord(JobRecord& rec, LiveState state, Time now, std::string message) {
  const LiveState was = rec.state;
  Ended(rec, state, now, std::move(message));
  if (open_.erase(rec.id)) {
    if (auto it = open_names_.find({rec.user, rec.name}); it != open_names_.end()) {
      it->second.erase(rec.id);
      if (it->second.empty()) open_names_.erase(it);
    }
  } else {
    --ended_count_[was];  // it had ended before: counted as that
  }
  ++ended_count_[rec.state];
  dirty_ = true;
  eligibility_dirty_ = true;  // its array's slot, its dependents
  metrics_.JobEnded(ToString(rec.state), ToSeconds(rec.end - rec.submit),
                    rec.first_start >= 0 ? ToSeconds(rec.first_start - rec.submit) : -1);
}

}  // namespace tiresias
