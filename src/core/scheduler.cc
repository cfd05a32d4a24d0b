// The scheduling core: event handling, timers, the orders of running and waiting jobs and
// what a pass starts from. The walk of a pass, placement, victims and backfill are in
// scheduler_pass.cc; which running jobs a pass re-keys in scheduler_rekey.cc; the tenant
// level in tenant_pass.cc; explanations in explain.cc; copies (Clone) in scheduler_clone.cc.
#include "core/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>
#include <optional>
#include <utility>

namespace tiresias {

Scheduler::Scheduler(const Topology& topo, std::unique_ptr<OrderingPolicy> policy,
                     std::unique_ptr<PlacementPolicy> placement, SchedulerOptions opts,
                     std::shared_ptr<const SpeedModel> speed, TenantConfig tenants)
    : topo_(topo),
      cluster_(topo),
      policy_(std::move(policy)),
      placement_(std::move(placement)),
      opts_(opts),
      speed_(std::move(speed)),
      tenants_(std::move(tenants)) {
  track_jumps_ = policy_->running_keys_never_increase();
  if (tenants_.on()) {
    TenantConfig cfg = std::move(tenants_);
    tenants_ = {};
    [[maybe_unused]] Status s = SetTenants(std::move(cfg), 0);
    assert(s.ok());  // BuildCore validates; a bad config leaves the tenant level off
  }
}

const Job* Scheduler::Find(JobId id) const {
  auto it = slot_of_.find(id);
  return it == slot_of_.end() ? nullptr : &jobs_[it->second];
}

Status Scheduler::Submit(const JobSpec& spec, Time now) {
  if (slot_of_.contains(spec.id)) {
    return InvalidArgument(fmt::format("job {}: id already submitted", spec.id.value()));
  }
  uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<uint32_t>(jobs_.size());
    jobs_.push_back(Job{.spec = spec});
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    // Timers of the job that had the slot carry older generations: they stay stale.
    const uint64_t gen = jobs_[slot].timer_gen;
    jobs_[slot] = Job{.spec = spec, .timer_gen = gen};
  }
  slot_of_.emplace(spec.id, slot);
  Job& j = jobs_[slot];
  j.last_stop = now;
  if (policy_->needs_durations() && !spec.duration) {
    j.state = JobState::kRejected;
    j.end = now;
    return InvalidArgument(fmt::format("job {}: policy {} needs a duration and none was given",
                                       spec.id.value(), policy_->name()));
  }
  if (auto why = placement_->NeverFitsReason(spec, topo_)) {
    j.state = JobState::kRejected;
    j.end = now;
    return InvalidArgument(fmt::format("job {}: never fits: {}", spec.id.value(), *why));
  }
  if (auto why = TenantAdmit(j)) {
    j.state = JobState::kRejected;
    j.end = now;
    return InvalidArgument(fmt::format("job {}: {}", spec.id.value(), *why));
  }
  policy_->OnSubmit(j);
  j.tie_rank = tie_counter_++;
  Insert(slot, now);
  ArmTimer(slot, now);
  dirty_ = true;
  return Status::Ok();
}

Status Scheduler::Finish(JobId id, Time now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  Job& j = jobs_[it->second];
  if (!j.running() && j.state != JobState::kPending && j.state != JobState::kHeld) {
    return FailedPrecondition(
        fmt::format("job {}: finished while {}", id.value(), ToString(j.state)));
  }
  if (j.running()) {
    placement_->OnJobFinished(j, topo_);  // before Stop: it still holds its allocation
    Stop(it->second, now);
  }
  if (j.state != JobState::kHeld) Erase(it->second);  // a held job is in no order
  j.state = JobState::kFinished;
  j.end = now;
  ++j.timer_gen;
  if (policy_->OnFinish(j)) RekeyAll(now);  // it learned: every key may have changed
  dirty_ = true;
  return Status::Ok();
}

Status Scheduler::Cancel(JobId id, Time now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  Job& j = jobs_[it->second];
  if (j.state != JobState::kPending && j.state != JobState::kRunning &&
      j.state != JobState::kHeld) {
    return FailedPrecondition(
        fmt::format("job {}: cannot cancel, already {}", id.value(), ToString(j.state)));
  }
  if (j.running()) Stop(it->second, now);
  if (j.state != JobState::kHeld) Erase(it->second);  // a held job is in no order
  j.state = JobState::kCancelled;
  j.end = now;
  ++j.timer_gen;
  dirty_ = true;
  return Status::Ok();
}

Status Scheduler::Forget(JobId id) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  const uint32_t slot = it->second;
  Job& j = jobs_[slot];
  if (!j.ended()) {
    return FailedPrecondition(
        fmt::format("job {}: cannot forget, still {}", id.value(), ToString(j.state)));
  }
  slot_of_.erase(it);
  never_fits_.erase(slot);
  // An ended placeholder (every walk over jobs() skips ended jobs); its strings and
  // allocation are freed.
  j = Job{.state = JobState::kFinished, .timer_gen = j.timer_gen + 1};
  free_slots_.push_back(slot);
  return Status::Ok();
}

Status Scheduler::SetEligible(JobId id, bool eligible, Time now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  Job& j = jobs_[it->second];
  if (eligible) {
    if (j.state != JobState::kHeld) {
      return FailedPrecondition(
          fmt::format("job {}: not held ({})", id.value(), ToString(j.state)));
    }
    j.state = JobState::kPending;
    j.last_stop = now;  // held time is not starvation
    Insert(it->second, now);
    ArmTimer(it->second, now);
    dirty_ = true;
    return Status::Ok();
  }
  if (j.state != JobState::kPending) {
    return FailedPrecondition(fmt::format("job {}: only a waiting job can be held ({}{})",
                                          id.value(), ToString(j.state),
                                          j.running() ? "; requeue it first" : ""));
  }
  Erase(it->second);
  j.state = JobState::kHeld;
  ++j.timer_gen;  // no promotion while held
  dirty_ = true;
  return Status::Ok();
}

Status Scheduler::Requeue(JobId id, Time now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  Job& j = jobs_[it->second];
  if (!j.running()) {
    return FailedPrecondition(fmt::format("job {}: only a running job can be requeued ({})",
                                          id.value(), ToString(j.state)));
  }
  Stop(it->second, now);
  ++j.restarts;
  dirty_ = true;
  return Status::Ok();
}

const std::string& Scheduler::NeverFitsReasonOf(const Job& j) const {
  static const std::string kNone;
  auto it = never_fits_.find(static_cast<uint32_t>(&j - jobs_.data()));
  return it == never_fits_.end() ? kNone : it->second;
}

void Scheduler::Insert(uint32_t slot, Time now) {
  Job& j = jobs_[slot];
  j.key = policy_->Key(j, now);
  NoteKeyBound(slot, now);
  Touch(j.key);
  if (j.running()) {
    running_.emplace(j.key, slot, j.gpus());
  } else {
    waiting_.emplace(j.key, slot, j.gpus());
  }
}

void Scheduler::Erase(uint32_t slot) {
  Job& j = jobs_[slot];
  Touch(j.key);
  if (j.running()) {
    running_.erase(j.key);
  } else {
    waiting_.erase(j.key);
  }
}

void Scheduler::ArmTimer(uint32_t slot, Time now) {
  Job& j = jobs_[slot];
  ++j.timer_gen;
  if (auto at = policy_->NextTransition(j, now)) {
    timers_.push(Timer{*at, timer_seq_++, slot, j.timer_gen});
  }
}

Time Scheduler::NextWakeup() {
  while (!timers_.empty()) {
    const Timer& t = timers_.top();
    if (t.gen == jobs_[t.slot].timer_gen) return t.at;
    timers_.pop();  // stale: the job stopped, started, finished or moved since
  }
  return kNever;
}

void Scheduler::FireTimers(Time now) {
  while (!timers_.empty() && timers_.top().at <= now) {
    Timer t = timers_.top();
    timers_.pop();
    Job& j = jobs_[t.slot];
    if (t.gen != j.timer_gen) continue;
    Erase(t.slot);
    const int from = j.queue;
    if (policy_->ApplyTransition(j, now)) dirty_ = true;
    if (opts_.record_transitions && j.queue != from) {
      transitions_.push_back(Transition{j.spec.id, now, from, j.queue});
    }
    Insert(t.slot, now);
    ArmTimer(t.slot, now);
  }
}

std::vector<Action> Scheduler::Schedule(Time now) {
  FireTimers(now);
  std::vector<Action> out;
  if (!dirty_) return out;
  dirty_ = false;
  // With nobody waiting there is nothing to start and no reason to preempt.
  if (waiting_.empty() && !policy_->stable_ties() && !opts_.reference_pass) return out;
  ++pass_;
  if (opts_.reference_pass) {
    RebuildOrders(now);  // reference: no shortcut, the capability flags ignored
  } else if (policy_->key_changes_while_running() &&
             (tenant_on() || policy_->stable_ties() || opts_.checkpoint_aware ||
              waiting_.TotalGpus() > cluster_.total_free())) {
    // (When every waiting job fits the free GPUs, every running job keeps its GPUs and the
    // waiting ones are placed in their order: the running jobs' order decides nothing, so
    // their keys are refreshed at the next pass that needs them.)
    RefreshRunningKeys(now);
  }
  if (policy_->preemptive()) {
    PreemptivePass(now, out);
  } else {
    NonPreemptivePass(now, out);
  }
  if (policy_->stable_ties()) RecordTieRanks(now);
  // The pass left every decision consistent, except where it had to leave a selected job
  // unplaced or an unselected one running: the next pass starts at the first of those.
  walk_from_ = revisit_;
  revisit_.reset();
  return out;
}

void Scheduler::RecordTieRanks(Time now) {
  std::vector<uint32_t> order;
  order.reserve(running_.size() + waiting_.size());
  auto r = running_.begin();
  auto w = waiting_.begin();
  while (r != running_.end() || w != waiting_.end()) {
    bool take_r = w == waiting_.end() || (r != running_.end() && r->first < w->first);
    order.push_back(take_r ? (r++)->second : (w++)->second);
  }
  for (uint32_t slot : order) {
    Erase(slot);
    jobs_[slot].tie_rank = tie_counter_++;
    Insert(slot, now);
  }
}

void Scheduler::NoteWait(Job& j, WaitKind kind) {
  j.wait = kind;
}

void Scheduler::Start(uint32_t slot, Allocation alloc, Time now, std::vector<Action>& out) {
  Job& j = jobs_[slot];
  Erase(slot);
  cluster_.Take(alloc);
  CountTenant(j, +1, now);
  j.wait = WaitKind::kNotConsidered;  // why it waited no longer holds
  Duration restore = j.starts > 0 ? opts_.restore_overhead : 0;
  j.state = JobState::kRunning;
  j.run_start = now;
  j.progress_start = now + restore;
  j.overhead += restore;
  j.rate = speed_ ? speed_->Rate(j.spec, alloc, topo_) : 1.0;
  if (j.first_start < 0) j.first_start = now;
  ++j.starts;
  j.alloc = alloc;
  NoteSlices(slot);
  Insert(slot, now);
  ArmTimer(slot, now);
  out.push_back(
      Action{Action::Kind::kStart, j.spec.id, std::move(alloc), j.progress_start, restore, {}});
}

Status Scheduler::SetProgressStart(JobId id, Time t, Time now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  Job& j = jobs_[it->second];
  if (!j.running()) {
    return FailedPrecondition(
        fmt::format("job {}: progress while {}", id.value(), ToString(j.state)));
  }
  if (t < j.run_start) {
    return InvalidArgument(
        fmt::format("job {}: progress from {} before its start at {}", id.value(), t, j.run_start));
  }
  if (t == j.progress_start) return Status::Ok();
  Erase(it->second);
  j.overhead += t - j.progress_start;
  j.progress_start = t;
  Insert(it->second, now);
  ArmTimer(it->second, now);
  return Status::Ok();
}

Status Scheduler::Checkpointed(JobId id, Time at, Time now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  Job& j = jobs_[it->second];
  if (!j.running()) {
    return FailedPrecondition(fmt::format("job {} is not running", id.value()));
  }
  at = std::min(at, now);
  if (at >= j.progress_start && at > j.ckpt_at) j.ckpt_at = at;
  return Status::Ok();
}

Status Scheduler::Interrupted(JobId id, Time last_alive, Time now) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  Job& j = jobs_[it->second];
  if (!j.running()) {
    return FailedPrecondition(
        fmt::format("job {}: interrupted while {}", id.value(), ToString(j.state)));
  }
  if (now < j.progress_start) return Status::Ok();  // no progress yet: nothing to keep or lose
  Erase(it->second);
  const Time alive = std::clamp(last_alive, j.progress_start, now);
  j.executed = j.ExecutedAt(alive);  // folded: the run so far counts up to `alive`
  j.work_done = j.WorkDoneAt(alive);
  j.overhead += now - alive;
  j.progress_start = now;
  Insert(it->second, now);
  ArmTimer(it->second, now);
  return Status::Ok();
}

StatusOr<std::vector<JobId>> Scheduler::SetNodeAvailability(int node, uint64_t usable_mask,
                                                            Time now, uint64_t avoid_mask) {
  if (node < 0 || node >= topo_.num_nodes()) {
    return InvalidArgument(
        fmt::format("node {}: the cluster has nodes 0..{}", node, topo_.num_nodes() - 1));
  }
  const uint64_t mask = usable_mask & cluster_.full_mask();
  const uint64_t lost = cluster_.usable_mask(node) & ~mask;
  std::vector<uint32_t> hit;
  if (lost) {
    for (const auto& [key, slot] : running_) {
      for (const NodeSlice& sl : jobs_[slot].alloc.slices) {
        if (sl.node == node && (sl.gpus & lost)) {
          hit.push_back(slot);
          break;
        }
      }
    }
  }
  std::sort(hit.begin(), hit.end(),
            [&](uint32_t a, uint32_t b) { return jobs_[a].spec.id < jobs_[b].spec.id; });
  std::vector<JobId> stopped;
  for (uint32_t slot : hit) {
    ++jobs_[slot].evictions;
    Stop(slot, now);
    stopped.push_back(jobs_[slot].spec.id);
  }
  const bool usable_changed = mask != cluster_.usable_mask(node);
  if (usable_changed) cluster_.SetUsable(node, mask);
  if (avoid_.size() <= static_cast<size_t>(node)) avoid_.resize(topo_.num_nodes(), 0);
  uint64_t& avoid = avoid_[static_cast<size_t>(node)];
  const uint64_t had_avoid = std::exchange(avoid, avoid_mask & mask);
  avoided_ += std::popcount(avoid) - std::popcount(had_avoid);
  if (usable_changed || avoid != had_avoid) {
    // The budget (or where jobs would rather go) changed: decisions before any key may
    // change, so the next pass walks all.
    walk_from_ = SortKey{.k0 = std::numeric_limits<int64_t>::min()};
    dirty_ = true;
  }
  return stopped;
}

uint64_t Scheduler::UsableMaskFor(int node, int gpus) const {
  if (node < 0 || node >= topo_.num_nodes() || gpus <= 0) return 0;
  const uint64_t usable = cluster_.usable_mask(node), free = cluster_.free_mask(node);
  const uint64_t held = usable & ~free;
  uint64_t out = 0;
  int left = gpus;
  for (uint64_t group : {held, free, cluster_.full_mask() & ~usable}) {
    for (int i = 0; i < topo_.gpus_per_node() && left > 0; ++i) {
      const uint64_t bit = uint64_t{1} << i;
      if (group & bit) {
        out |= bit;
        --left;
      }
    }
  }
  return out;
}

void Scheduler::NoteSlices(uint32_t slot) {
  if (one_slice_.size() < jobs_.size()) one_slice_.resize(jobs_.size(), NodeSlice{.node = -1});
  const Allocation& a = jobs_[slot].alloc;
  one_slice_[slot] = a.slices.size() == 1 ? a.slices[0] : NodeSlice{.node = -1};
}

void Scheduler::Stop(uint32_t slot, Time now, bool release) {
  Job& j = jobs_[slot];
  assert(j.running());
  // A run that never made progress (its launch waited for the previous run's process) keeps
  // the previous run's loss: that process may still be stopping.
  if (now > j.progress_start) j.stop_loss = j.RunLossAt(now);
  Erase(slot);
  j.executed = j.ExecutedAt(now);
  j.work_done = j.WorkDoneAt(now);
  j.held += now - j.run_start;
  if (now < j.progress_start) j.overhead -= j.progress_start - now;  // restore cut short
  if (release) cluster_.Give(j.alloc);
  CountTenant(j, -1, now);
  j.alloc = {};
  NoteSlices(slot);
  j.state = JobState::kPending;
  j.last_stop = now;
  Insert(slot, now);
  ArmTimer(slot, now);
}

std::vector<JobId> Scheduler::WaitingInOrder() const {
  std::vector<JobId> ids;
  ids.reserve(waiting_.size());
  for (const auto& [key, slot] : waiting_) ids.push_back(jobs_[slot].spec.id);
  return ids;
}

void Scheduler::CountByQueue(std::vector<int>& waiting, std::vector<int>& running) const {
  const size_t k = static_cast<size_t>(std::max(1, policy_->num_queues()));
  waiting.assign(k, 0);
  running.assign(k, 0);
  auto bucket = [k](int q) { return static_cast<size_t>(std::clamp<int>(q, 0, k - 1)); };
  for (const auto& [key, slot] : waiting_) ++waiting[bucket(jobs_[slot].queue)];
  for (const auto& [key, slot] : running_) ++running[bucket(jobs_[slot].queue)];
}

}  // namespace tiresias
