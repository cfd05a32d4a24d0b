// Copies of the core for forecasts: Scheduler::Clone (every job, or only those not ended,
// renumbered) and AssumeDuration, a copy's guess of a job's duration.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>

#include "core/scheduler.h"

namespace tiresias {

Scheduler::Scheduler(const Scheduler& o, std::unique_ptr<OrderingPolicy> policy,
                     std::unique_ptr<PlacementPolicy> placement, bool active_only)
    : topo_(o.topo_),
      cluster_(o.cluster_),
      avoid_(o.avoid_),
      avoided_(o.avoided_),
      policy_(std::move(policy)),
      placement_(std::move(placement)),
      opts_(o.opts_),
      speed_(o.speed_),
      walk_from_(o.walk_from_),
      revisit_(o.revisit_),
      timer_seq_(o.timer_seq_),
      last_cut_(o.last_cut_),  // (a hint for bound keys: decides nothing)
      track_jumps_(o.track_jumps_),
      jump_misses_(o.jump_misses_),
      untracked_passes_(o.untracked_passes_),
      bound_retries_(o.bound_retries_),
      pass_(o.pass_),
      tie_counter_(o.tie_counter_),
      dirty_(o.dirty_),
      transitions_(o.transitions_),
      tenants_(o.tenants_),
      vc_quota_(o.vc_quota_),
      vc_running_(o.vc_running_),
      vc_usage_(o.vc_usage_),
      usage_at_(o.usage_at_) {
  if (!active_only) {
    jobs_ = o.jobs_;
    one_slice_ = o.one_slice_;
    never_fits_ = o.never_fits_;
    slot_of_ = o.slot_of_;
    free_slots_ = o.free_slots_;
    running_ = o.running_;
    waiting_ = o.waiting_;
    timers_ = o.timers_;
    jumps_ = o.jumps_;
    return;
  }
  // Only jobs that have not ended, in the same relative order; every slot renumbered.
  constexpr uint32_t kGone = UINT32_MAX;
  std::vector<uint32_t> remap(o.jobs_.size(), kGone);
  for (uint32_t slot = 0; slot < o.jobs_.size(); ++slot) {
    if (o.jobs_[slot].ended()) continue;
    remap[slot] = static_cast<uint32_t>(jobs_.size());
    slot_of_.emplace(o.jobs_[slot].spec.id, remap[slot]);
    jobs_.push_back(o.jobs_[slot]);
  }
  for (uint32_t slot = 0; slot < jobs_.size(); ++slot) NoteSlices(slot);
  for (const auto& [slot, reason] : o.never_fits_) {
    if (remap[slot] != kGone) never_fits_.emplace(remap[slot], reason);
  }
  for (const auto& [key, slot] : o.running_) {
    running_.emplace(key, remap[slot], jobs_[remap[slot]].gpus());
  }
  for (const auto& [key, slot] : o.waiting_) {
    waiting_.emplace(key, remap[slot], jobs_[remap[slot]].gpus());
  }
  auto timers = o.timers_;
  for (; !timers.empty(); timers.pop()) {
    Timer t = timers.top();
    if (remap[t.slot] == kGone) continue;
    t.slot = remap[t.slot];
    timers_.push(t);
  }
  for (const auto& [at, slot] : o.jumps_) {
    if (remap[slot] != kGone) jumps_.emplace_back(at, remap[slot]);
  }
  std::make_heap(jumps_.begin(), jumps_.end(), std::greater<>());
}

StatusOr<std::unique_ptr<Scheduler>> Scheduler::Clone(bool active_only) const {
  auto policy = policy_->Clone();
  auto placement = placement_->Clone();
  if (!policy || !placement) {
    return FailedPrecondition(fmt::format("policy {} with placement {} cannot be copied",
                                          policy_->name(), placement_->name()));
  }
  return std::unique_ptr<Scheduler>(
      new Scheduler(*this, std::move(policy), std::move(placement), active_only));
}

Status Scheduler::AssumeDuration(JobId id, Duration d) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  Job& j = jobs_[it->second];
  if (policy_->needs_durations() && j.spec.duration) {
    return FailedPrecondition(fmt::format("job {}: policy {} orders by the duration it was given",
                                          id.value(), policy_->name()));
  }
  j.spec.duration = d;
  return Status::Ok();
}

}  // namespace tiresias
