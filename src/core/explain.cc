// Scheduler::Explain: the answer to "why is my job pending?" from the core's own state:
// where the policy puts the job, how many jobs are ahead, what it needs, what the last pass
// found, and when its next promotion or demotion is due.
#include <fmt/format.h>

#include "core/scheduler.h"

namespace tiresias {

SortKey Scheduler::KeyNow(const Job& j, Time now) const {
  return j.running() && policy_->key_changes_while_running() ? policy_->Key(j, now) : j.key;
}

bool Scheduler::AnyAhead(JobId id, Time now) const {
  const Job* j = Find(id);
  if (!j || (j->state != JobState::kPending && j->state != JobState::kRunning)) return false;
  const SortKey mine = KeyNow(*j, now);
  if (!policy_->key_changes_while_running()) {
    if (!running_.empty() && running_.begin()->first < mine) return true;
  } else {
    for (const FlatOrder::Entry& r : running_) {
      if (&jobs_[r.second] != j && KeyNow(jobs_[r.second], now) < mine) return true;
    }
  }
  return !j->running() && !waiting_.empty() && waiting_.begin()->first < j->key;
}

Explanation Scheduler::Explain(JobId id, Time now) const {
  Explanation e;
  const Job* j = Find(id);
  if (!j) {
    e.reasons.push_back(fmt::format("job {} is unknown", id.value()));
    return e;
  }
  e.state = j->state;
  e.gpus_needed = j->gpus();
  e.gpus_free = cluster_.total_free();
  e.gpus_unavailable = topo_.total_gpus() - cluster_.total_usable();
  if (j->state == JobState::kRejected) {
    e.reasons.push_back("rejected at submit: it can never fit this cluster");
    return e;
  }
  if (j->state == JobState::kHeld) {
    e.where = policy_->Describe(*j, now);
    e.reasons.push_back("not eligible to run until released (held)");
    return e;
  }
  if (j->state != JobState::kPending && j->state != JobState::kRunning) {
    e.reasons.push_back(fmt::format("{}; nothing to wait for", ToString(j->state)));
    return e;
  }
  e.where = policy_->Describe(*j, now);
  if (auto t = policy_->NextTransition(*j, now)) e.next_transition = *t;
  // Running jobs by their keys now (a pass leaves stale keys where they decide nothing).
  const SortKey mine = KeyNow(*j, now);
  for (const FlatOrder::Entry& r : running_) {
    if (&jobs_[r.second] == j || !(KeyNow(jobs_[r.second], now) < mine)) continue;
    ++e.running_ahead;
    if (e.running_ahead_ids.size() < Explanation::kMaxNamed) {
      e.running_ahead_ids.push_back(jobs_[r.second].spec.id);
    }
  }
  if (j->running()) {
    e.reasons.push_back(fmt::format("running on {}", j->alloc.str()));
    if (auto t = TenantReason(*j, now); !t.empty()) e.reasons.push_back(std::move(t));
    return e;
  }
  int gpus_ahead = 0;
  for (const auto& [key, slot] : waiting_) {
    if (!(key < j->key)) break;
    ++e.waiting_ahead;
    gpus_ahead += jobs_[slot].gpus();
    if (e.waiting_ahead_ids.size() < Explanation::kMaxNamed) {
      e.waiting_ahead_ids.push_back(jobs_[slot].spec.id);
    }
  }
  e.rank = e.waiting_ahead + 1;
  e.reasons.push_back(
      fmt::format("{} of the waiting jobs ({} GPUs in all) are ahead of it; "
                  "{} running jobs hold priority over it",
                  e.waiting_ahead, gpus_ahead, e.running_ahead));
  if (e.gpus_unavailable > 0) {
    e.reasons.push_back(fmt::format(
        "{} of the cluster's {} GPUs are unavailable (nodes down or GPUs held outside the "
        "scheduler){}",
        e.gpus_unavailable, topo_.total_gpus(),
        j->gpus() > cluster_.total_usable()
            ? fmt::format("; it needs {} and only {} are usable now, so it waits for capacity "
                          "to return",
                          j->gpus(), cluster_.total_usable())
            : ""));
  }
  // A placement failure is stale once the job no longer fits the free GPUs in count.
  if (j->wait == WaitKind::kNoSlot && j->gpus() <= e.gpus_free) {
    e.reasons.push_back("enough GPUs in count, but no placement: " +
                        (NeverFitsReasonOf(*j).empty() ? placement_->WhyNoSlot(j->spec, cluster_)
                                                       : NeverFitsReasonOf(*j)));
  } else if (j->wait == WaitKind::kOverQuota) {
    // the tenant level's reason, below
  } else if (policy_->stops_at_first_misfit() && e.waiting_ahead > 0) {
    e.reasons.push_back("strict FIFO: a job ahead of it does not fit yet, and no job may pass it");
  } else {
    e.reasons.push_back(
        fmt::format("it needs {} GPUs; after the jobs ahead of it in the last pass fewer were left",
                    j->gpus()));
  }
  if (auto t = TenantReason(*j, now); !t.empty()) e.reasons.push_back(std::move(t));
  if (!policy_->preemptive()) {
    e.reasons.push_back("this policy never preempts: it starts when running jobs finish");
  }
  if (e.next_transition && !j->running()) {
    e.reasons.push_back(fmt::format("promotion to the first queue is due in {:.1f} s",
                                    ToSeconds(*e.next_transition - now)));
  }
  return e;
}

}  // namespace tiresias
