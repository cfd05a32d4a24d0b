// The live scheduler's capacity (see live_scheduler.h): which GPUs of each node the core may
// place jobs on. A node's base comes from the executor's node reports (a node down, GPUs held
// by jobs outside tiresias). From it are left out, for a while, the GPUs the core counts free
// but a process still holds: one told to stop (cancelled, preempted, evicted) and running
// through its grace. Without that the core gives them to the next job, which then waits for
// that process while other GPUs stay idle. Every change is journalled (a capacity event with
// the GPUs left out as `stopping`) before the pass it affects, so that a replay rebuilds the
// same core and the same base.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <set>

#include "common/strings.h"
#include "live/live_scheduler.h"

namespace tiresias {
namespace {

std::string Indices(uint64_t mask) {
  std::vector<std::string> out;
  for (int i = 0; i < 64; ++i) {
    if (mask >> i & 1) out.push_back(std::to_string(i));
  }
  return Join(out, ",");
}

}  // namespace

void LiveScheduler::ApplyNodes(const std::vector<NodeReport>& nodes, Time now,
                               std::vector<JobId>& changed, std::vector<JobId>& stop) {
  node_reports_ = nodes;
  const std::vector<NodeSpec> cluster = ClusterNodes();
  for (size_t i = 0; i < nodes.size() && i < cluster.size(); ++i) {
    const NodeReport& r = nodes[i];
    const int node = static_cast<int>(i), have = cluster[i].gpus;
    const int want = r.usable ? std::clamp(std::min(r.gpus, have) - r.gpus_outside, 0, have) : 0;
    if (std::popcount(base_mask_[i]) == want) continue;
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
    // (GPUs left out for a stopping process are not usable in the core: kept last.)
    const uint64_t base = sched_->UsableMaskFor(node, want);
    SetCapacity(node, base, stopping_mask_[i] & base, why, now, changed, stop);
  }
}

void LiveScheduler::SyncStoppingGpus(Time now, std::vector<JobId>& changed,
                                     std::vector<JobId>& stop) {
  // A GPU a live process holds that no job of the core holds: free in the core, or already
  // left out for that process.
  std::vector<uint64_t> held(base_mask_.size(), 0);
  std::vector<std::set<JobId>> by(base_mask_.size());
  for (const auto& [g, id] : gpu_owner_) {
    const auto n = static_cast<size_t>(g.node);
    const uint64_t bit = uint64_t{1} << g.index;
    if (n >= held.size() || !(base_mask_[n] & bit)) continue;
    if ((sched_->cluster().free_mask(g.node) & bit) || (stopping_mask_[n] & bit)) {
      held[n] |= bit;
      by[n].insert(id);
    }
  }
  const std::vector<NodeSpec> cluster = ClusterNodes();
  for (size_t n = 0; n < held.size(); ++n) {
    if (held[n] == stopping_mask_[n]) continue;
    const std::string name = n < cluster.size() ? cluster[n].name : std::to_string(n);
    std::string why;
    if (held[n] == 0) {
      why = fmt::format("node {}: GPU(s) {} free again (their stopping processes are gone)", name,
                        Indices(stopping_mask_[n]));
    } else {
      std::vector<std::string> jobs;
      for (JobId id : by[n]) jobs.push_back(std::to_string(id.value()));
      why = fmt::format("node {}: GPU(s) {} still held by the stopping process of job {}", name,
                        Indices(held[n]), Join(jobs, ", "));
    }
    SetCapacity(static_cast<int>(n), base_mask_[n], held[n], why, now, changed, stop);
  }
}

void LiveScheduler::SetCapacity(int node, uint64_t base, uint64_t stopping, const std::string& why,
                                Time now, std::vector<JobId>& changed, std::vector<JobId>& stop) {
  const auto n = static_cast<size_t>(node);
  base_mask_[n] = base;
  stopping_mask_[n] = stopping;
  const uint64_t mask = base & ~stopping;
  std::map<JobId, std::vector<GpuId>> held;  // for the evict events
  for (const auto& [id, rec] : open_) {
    if (const Job* j = sched_->Find(id); j && j->running()) held[id] = j->alloc.Gpus();
  }
  Journal(CapacityEvent(now, node, mask, why, stopping));
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
    ++total_preemptions_;
    rec.stop_preempted = true;
    rec.state = LiveState::kPreempting;
    stop.push_back(id);
  }
  dirty_ = true;
}

void LiveScheduler::ReplayCapacity(const Event& e) {
  const auto node = e.detail.value("node", -1);
  const auto usable = MaskFromJson(e.detail.value("usable", nlohmann::json()));
  const auto stopping = MaskFromJson(e.detail.value("stopping", nlohmann::json::array()));
  if (node < 0 || static_cast<size_t>(node) >= base_mask_.size() || !usable || !stopping) return;
  base_mask_[static_cast<size_t>(node)] = *usable | *stopping;
  stopping_mask_[static_cast<size_t>(node)] = *stopping;
}

void LiveScheduler::RestoreStoppingGpus(Scheduler& copy, Time now) const {
  for (size_t n = 0; n < stopping_mask_.size(); ++n) {
    if (stopping_mask_[n] != 0)
      (void)copy.SetNodeAvailability(static_cast<int>(n), base_mask_[n], now);
  }
}

}  // namespace tiresias
