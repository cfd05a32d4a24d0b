// The ordering-policy interface: decides the order in which the core offers GPUs to jobs,
// whether running jobs may be preempted, and (for multi-level queues) when a job's place in
// the order changes by itself. Policies hold configuration and, at most, learned history;
// they never read a clock, do I/O, or know which driver runs them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"
#include "core/job.h"

namespace tiresias {

class OrderingPolicy {
 public:
  virtual ~OrderingPolicy() = default;
  virtual std::string_view name() const = 0;
  // A copy with the same state (learned history included), for a forward simulation of a
  // live core (forecasts); null: this policy cannot be copied.
  virtual std::unique_ptr<OrderingPolicy> Clone() const { return nullptr; }
  // May running jobs lose their GPUs to jobs ahead of them in the order?
  virtual bool preemptive() const = 0;
  // Strict FIFO: stop offering GPUs at the first job that does not fit (no backfill).
  virtual bool stops_at_first_misfit() const { return false; }
  // Does a running job's key change as it runs (without a transition)? Then the core
  // refreshes running jobs' keys at each pass.
  virtual bool key_changes_while_running() const = 0;
  // The key's k0 (e.g. a queue) changes only at transitions, so while running only the
  // later fields drift. Lets the core skip re-keying running jobs whose k0 is ahead of
  // every waiting job: they keep their GPUs whatever their order among themselves.
  virtual bool k0_changes_only_at_transitions() const { return false; }
  // A running job's key never grows while it runs (srtf: its remaining time only shrinks),
  // except at the times KeyBoundUntil names. Lets the core skip re-keying running jobs whose
  // last key is below the waiting jobs' that compete for GPUs: their keys now are lower
  // still, so they keep their GPUs whatever their order among themselves. Their stored keys
  // are then upper bounds, refreshed when a waiting job's key reaches them or at KeyBoundUntil.
  virtual bool running_keys_never_increase() const { return false; }
  // With running_keys_never_increase: for a running job keyed at `now`, the first time at
  // which its key may grow (gittins: its service reaches the next sample of the history,
  // where the index may drop); kNever: never.
  virtual Time KeyBoundUntil(const Job& /*job*/, Time /*now*/) const { return kNever; }
  // With running_keys_never_increase: a key of a running job that is no earlier in the order
  // than its key at any time from `now` until *until (kNever: for good), for a job whose key
  // need not be exact now, only bound it for longer than Key's until KeyBoundUntil (gittins:
  // the least index over samples ahead). `keep_before` (may be null): where the core last
  // needed exact keys from (the budget cut); a bound that stays before it while it can spares
  // the job a re-key, and one at or after it had best be tight. By default the key itself.
  virtual SortKey BoundKey(const Job& job, Time now, const SortKey* /*keep_before*/,
                           Time* until) const {
    SortKey key = Key(job, now);
    *until = KeyBoundUntil(job, now);
    return key;
  }
  // Ties keep the previous pass's order (new jobs after old ones), like a stable sort of a
  // list kept across passes; the core then maintains Job::tie_rank for Key() to use.
  virtual bool stable_ties() const { return false; }
  // Needs the oracle duration of each job.
  virtual bool needs_durations() const { return false; }

  virtual SortKey Key(const Job& job, Time now) const = 0;

  // Queue discipline hooks. NextTransition: the earliest time > now at which the job's key
  // changes by itself (demotion while running, promotion while waiting), or nullopt.
  // ApplyTransition: applies every transition due at `now`; returns true if anything changed.
  virtual void OnSubmit(Job& /*job*/) const {}
  virtual std::optional<Time> NextTransition(const Job& /*job*/, Time /*now*/) const {
    return std::nullopt;
  }
  virtual bool ApplyTransition(Job& /*job*/, Time /*now*/) const { return false; }
  // Called when a job completes; a policy may learn from it (Gittins online history, queue
  // thresholds that follow the observed service). Returns true when what it learned may
  // change other jobs' keys, waiting ones included: the core then calls Relearned on every
  // running and waiting job, re-keys them all and re-arms their timers.
  virtual bool OnFinish(const Job& /*job*/) { return false; }
  // After OnFinish returned true: brings the job's own policy state (its queue, when the
  // thresholds moved) in line with what was learned. Returns true if it changed anything.
  virtual bool Relearned(Job& /*job*/, Time /*now*/) const { return false; }

  // One line on where the job stands in this policy's terms, for `explain`.
  virtual std::string Describe(const Job& job, Time now) const = 0;
  // How many queues Job::queue ranges over (multi-level queue policies); 1 for the others.
  virtual int num_queues() const { return 1; }
  // The queue thresholds (attained GPU-time at which a job moves down) as they are now, for
  // the record of a run (at its start: thresholds that follow an online history move later);
  // empty for policies without queues.
  virtual std::vector<Service> queue_thresholds() const { return {}; }
};

}  // namespace tiresias
