// The live scheduler's launches (see live_scheduler.h): the jobs the core started are
// launched once the GPUs are free of stopping processes and the engine takes them; until
// then their progress is pinned (no service), and a stopping process past its grace is
// killed. The loop itself is in live_scheduler.cc.
#include <fmt/format.h>

#include <algorithm>
#include <csignal>

#include "live/live_scheduler.h"

namespace tiresias {

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

void LiveScheduler::LaunchReady(Time now) {
  // Phase 1, committed before any fork: holds for starts that must wait, and the attempt
  // number of each launch with its "in flight" mark, so that a crash mid-launch finds it.
  std::vector<JobId> ready, changed, starting;
  for (const auto& [id, gpus] : to_launch_) starting.push_back(id);
  // The core's order of those it keeps waiting matters only to jobs starting (O(waiting)).
  executor_->Starting(starting, starting.empty() ? std::vector<JobId>{} : sched_->WaitingInOrder());
  {
    Store::Txn txn(*store_);
    if (!txn.begun().ok()) return;  // the lock was taken since the step's commit: next round
    for (const auto& [id, gpus] : to_launch_) {
      if (HeldBack(gpus, id)) {
        // Preempted processes still hold its GPUs (or its own previous attempt is still
        // checkpointing): no progress, no service and no demotion until they are gone, at
        // the latest by their kill deadline (pinned, so a lingering process adds no events).
        Time release = ExpectedRelease(gpus, id, now);
        const Time pinned = sched_->Find(id)->progress_start;
        if (release <= now) {
          // Overdue: a killed process outlived its second (a cluster engine can take longer
          // to report a stop: a Slurm job slow to leave squeue). Pin again only when the last
          // pin has passed, each time as far ahead as the job has waited since the core
          // started it (from kOverdueMs up to kOverduePinMaxMs): a process that lingers adds
          // a drain event at doubling intervals, not one a round nor one a second (the
          // journal grew without bound). Any distance is exact: the launch, as soon as the
          // process is gone, sets the real start.
          if (now < pinned) continue;
          const Duration waited = now - sched_->Find(id)->run_start;
          release = now + std::clamp(waited, kOverdueMs, kOverduePinMaxMs);
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
      // A new run has no exit yet (show gave a running job its preempted run's ExitCode=0:15).
      rec.exit_code = -1;
      rec.signal = 0;
      rec.stop_sent = -1;
      rec.stop_deadline = -1;
      rec.start_ticks = kLaunchInFlight;
      ready.push_back(id);
    }
    MustOk(SaveRows(ready));
    MustOk(txn.Commit());
  }
  // Phase 2: fork and exec. Phase 3: record what happened, in one commit, in the file open
  // even if its path moved since phase 1 (the next step pauses then): processes now run.
  Store::Txn txn(*store_, /*even_if_moved=*/true);
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
      // The engine cannot take it now (slurmctld down, its held job still being submitted):
      // nothing was started; the same attempt is tried again on a later round. Meanwhile it
      // holds its GPUs and does nothing: no progress, no service, no demotion (pinned ahead
      // kEngineWaitPinMs at a time: a long wait adds an event every 10 s, not one a round),
      // for kEngineWaitPinMaxMs since the core started it. A longer wait may have no end (a
      // submit limit waits for other jobs to end): its service counts again then, so that
      // the policy can demote it and give its GPUs to a job that can run.
      --rec.attempt;
      to_launch_[id] = gpus;
      rec.message = "waiting for the cluster engine: " + ref.status().message();
      if (const Job* cj = sched_->Find(id);
          now >= cj->progress_start && now - cj->run_start < kEngineWaitPinMaxMs) {
        Journal({.t = now,
                 .kind = EventKind::kDrain,
                 .job = id,
                 .detail = {{"until_ms", now + kEngineWaitPinMs}, {"why", rec.message}}});
        MustOk(sched_->SetProgressStart(id, now + kEngineWaitPinMs, now));
      }
      continue;
    }
    if (!ref.ok()) {
      Journal({.t = now,
               .kind = EventKind::kFinish,
               .job = id,
               .detail = {{"how", "launch failed: " + ref.status().message()}}});
      MustOk(sched_->Finish(id, now));
      EndRecord(rec, LiveState::kFailed, now, "launch failed: " + ref.status().message());
      continue;
    }
    procs_[id] = Proc{.ref = ref->ref, .attempt = rec.attempt, .gpus = gpus};
    for (const GpuId& g : gpus) gpu_owner_[g] = id;
    rec.state = LiveState::kRunning;
    rec.pid = ref->ref.pid;
    rec.start_ticks = ref->ref.start_ticks;
    rec.stop_preempted = false;
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

void LiveScheduler::KillOverdue(Time now) {
  for (auto& [id, p] : procs_) {
    if (p.stopping && !p.killed && p.kill_at <= now) {
      (void)executor_->Signal(p.ref, SIGKILL);
      p.killed = true;
      p.gone_by = now + Seconds(1);
      p.kill_at = kNever;
    }
  }
}

}  // namespace tiresias
