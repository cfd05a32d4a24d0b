// Which running jobs a pass re-keys, and how (Scheduler::RefreshRunningKeys and what it
// rests on: the k0, upper-bound and stale-key rules, bound keys and their tracking), plus
// re-keying everything after a policy learned (RekeyAll) and the reference pass's rebuild.
// Why each rule leaves the decisions unchanged: docs/design.md, "Speed of a pass".
#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

#include "core/scheduler.h"

namespace tiresias {

void Scheduler::NoteKeyBound(uint32_t slot, Time now) {
  if (!track_jumps_) return;  // nobody reads key_until until tracking restarts
  Job& j = jobs_[slot];
  QueueKeyBound(slot, j.running() ? policy_->KeyBoundUntil(j, now) : kNever);
}

void Scheduler::QueueKeyBound(uint32_t slot, Time until) {
  Job& j = jobs_[slot];
  if (until == j.key_until) return;  // an entry for it is queued already (or none is due)
  j.key_until = until;
  if (until == kNever) return;
  jumps_.emplace_back(until, slot);
  std::push_heap(jumps_.begin(), jumps_.end(), std::greater<>());
  // The entries a job left behind (re-keyed since, or stopped) stay until their time, which
  // for a bound key may be far off: past twice the running jobs (every live entry is a
  // running job's), the stale ones are dropped and the heap made again (linear, and only
  // after as many entries again).
  if (jumps_.size() > 2 * running_.size() + 64) {
    std::erase_if(jumps_, [&](const std::pair<Time, uint32_t>& e) {
      const Job& k = jobs_[e.second];
      return !k.running() || k.key_until != e.first;
    });
    std::make_heap(jumps_.begin(), jumps_.end(), std::greater<>());
  }
}

SortKey Scheduler::SetBoundKey(uint32_t slot, Time now) {
  Job& j = jobs_[slot];
  Time until = kNever;
  j.key = policy_->BoundKey(j, now, last_cut_ ? &*last_cut_ : nullptr, &until);
  QueueKeyBound(slot, until);
  return j.key;
}

bool Scheduler::RekeyJumped(Time now) {
  jumped_.clear();
  while (!jumps_.empty() && jumps_.front().first <= now) {
    std::pop_heap(jumps_.begin(), jumps_.end(), std::greater<>());
    const auto [at, slot] = jumps_.back();
    jumps_.pop_back();
    const Job& j = jobs_[slot];
    if (j.running() && j.key_until == at) jumped_.push_back(slot);  // else stale
  }
  // A jumped job's key need not be exact, only an upper bound again (those the pass needs
  // exact are keyed again after the budget cut): the policy's BoundKey, which holds for
  // longer than an exact key does.
  for (uint32_t slot : jumped_) {
    Job& j = jobs_[slot];
    Touch(j.key);  // (where it moves behind waiting jobs, they are reconsidered)
    running_.erase(j.key);
    running_.emplace(SetBoundKey(slot, now), slot, j.gpus());
  }
  // A bound key costs several times what an exact one does: a miss is a pass where a quarter
  // of the running jobs or more needed one (and at least bound_miss_jumps: a few jobs among a
  // few running ones are no evidence).
  return jumped_.size() < opts_.bound_miss_jumps || jumped_.size() * 4 < running_.size();
}

void Scheduler::UpdateTracking(Time now, bool read) {
  if (track_jumps_) {
    if (read && RekeyJumped(now)) {
      jump_misses_ = std::max(0, jump_misses_ - 1);
    } else if (!read || (jump_misses_ += 2) >= 6) {  // unread, or most passes miss: stop
      track_jumps_ = false;
      jumps_.clear();
    }
    return;
  }
  if (!read) return;
  if (++untracked_passes_ % std::max<uint64_t>(1, opts_.bound_retry_passes) != 0) return;
  // Try again: every running job given a bound key, each queuing its time. Every job's
  // key_until is forgotten first (waiting ones too: one that starts again must not take a
  // time kept from before for a queued entry).
  track_jumps_ = true;
  ++bound_retries_;
  jump_misses_ = 0;
  for (Job& j : jobs_) j.key_until = std::numeric_limits<Time>::min();
  running_.Rekey([&](uint32_t slot) { return SetBoundKey(slot, now); });
  Touch(SortKey{.k0 = std::numeric_limits<int64_t>::min()});
}

std::optional<SortKey> Scheduler::FirstWaitingNotFitting() const {
  int64_t spare = cluster_.total_usable() - running_.GpusBetween(running_.begin(), running_.end());
  auto w = waiting_.begin();
  for (; w != waiting_.end() && w.gpus() <= spare; ++w) spare -= w.gpus();
  if (w == waiting_.end()) return std::nullopt;
  return w->first;
}

std::optional<Scheduler::BudgetCut> Scheduler::CutAfter(const SortKey& next) const {
  auto r = running_.lower_bound(next);
  auto w = waiting_.begin();
  BudgetCut cut;
  for (; w != waiting_.end() && w->first < next; ++w) cut.waiting_gpus += w.gpus();  // W1..Wm
  int64_t left =
      cluster_.total_usable() - cut.waiting_gpus - running_.GpusBetween(running_.begin(), r);
  while (true) {
    // The running jobs before the next waiting one, as far as they fit (blocks at a time).
    r = running_.Advance(r, w == waiting_.end() ? nullptr : &w->first, left);
    if (r != running_.end() && (w == waiting_.end() || r->first < w->first)) {
      cut.key = r->first;  // a running job that does not fit
      return cut;
    }
    if (w == waiting_.end()) return std::nullopt;  // everything fits
    if (w.gpus() > left) {
      cut.key = w->first;
      return cut;
    }
    left -= w.gpus();
    cut.waiting_gpus += w.gpus();
    ++w;
  }
}

bool Scheduler::Overflows(const BudgetCut& cut) const {
  return running_.GpusBetween(running_.begin(), running_.lower_bound(cut.key)) + cut.waiting_gpus >
         cluster_.total_usable();
}

void Scheduler::RefreshRunningKeys(Time now) {
  // Where the walk is the plain one (no tenants, no checkpoint-aware swaps, no stable ties),
  // the rules below that rest on W(m+1) and on stored bounds hold.
  const bool plain_walk = !tenant_on() && !opts_.checkpoint_aware && !policy_->stable_ties();
  // Running jobs whose stored keys stopped bounding theirs get bounds again, while bounds are
  // tracked. First: they move in the order, and the positions below are taken after. Where
  // the rules below never read bounds (not the plain walk: they key every running job past
  // the k0 rule exactly), none are kept; tracking starts again (after bound_retry_passes) if
  // that changes (SetTenants).
  if (policy_->running_keys_never_increase()) UpdateTracking(now, plain_walk);
  // The running jobs before position `from` keep their (stale) keys: each of the two rules
  // below proves them all kept whatever their order; the larger prefix is the union of both.
  size_t from = 0;
  // W(m+1), where the rules that rest on it hold (see the second rule): every running job
  // ahead of it keeps its GPUs whatever its order among those jobs.
  const bool kept_ahead_of_next = !waiting_.empty() && plain_walk;
  const std::optional<SortKey> next_waiting =
      kept_ahead_of_next ? FirstWaitingNotFitting() : std::nullopt;
  if (policy_->k0_changes_only_at_transitions() && !waiting_.empty() && !tenant_on()) {
    // Running jobs in a better k0 class than every waiting job (than W(m+1), where that rule
    // holds) are all kept whatever their order among themselves; their stale keys still sort
    // before everything re-keyed.
    const int64_t first_waiting = !kept_ahead_of_next ? waiting_.begin()->first.k0
                                  : next_waiting      ? next_waiting->k0
                                                      : std::numeric_limits<int64_t>::max();
    SortKey bound{.k0 = first_waiting,
                  .k1 = -std::numeric_limits<double>::infinity(),
                  .k2 = std::numeric_limits<int64_t>::min(),
                  .submit = std::numeric_limits<Time>::min()};
    from = running_.IndexOf(running_.lower_bound(bound));
  }
  std::optional<BudgetCut> cut;
  // Whether every running job's stored key bounds its key now.
  const bool bounds = policy_->running_keys_never_increase() && track_jumps_;
  if (bounds && kept_ahead_of_next) {
    // The waiting jobs that fit, together, into the GPUs no running job holds (W1..Wm, in
    // order) are all selected, and every running job ahead of the next one keeps its GPUs
    // whatever its place among W1..Wm: the budget at each turn is at least what is left after
    // every running job and W1..Wm. Running jobs whose stored key (an upper bound) is below
    // that next one's are lower still now: they are not re-keyed, and their order among
    // themselves and W1..Wm decides nothing. (Checkpoint-aware swaps compare the kept jobs'
    // classes: that mode re-keys them all.) A re-keyed job may sort before them (insertion
    // goes past `from`); it is then among the kept ones too. The walk starts at W1: re-keyed
    // jobs still behind the next one are after it.
    // Further: every job before the budget cut after W(m+1) fits whatever the order (all of
    // them together fit the cluster), so the running ones there keep their GPUs too (their
    // keys are upper bounds: they are before it still). Only the jobs at and after the cut
    // are re-keyed, unless re-keyed jobs moved before it and overflow it (below).
    if (next_waiting) cut = CutAfter(*next_waiting);
    from = std::max(from, cut            ? running_.IndexOf(running_.lower_bound(cut->key))
                          : next_waiting ? running_.IndexOf(running_.lower_bound(*next_waiting))
                                         : running_.size());
    Touch(waiting_.begin()->first);
  }
  // Where no stored key is trusted as an upper bound, a job whose old and new keys are both
  // ahead of the budget cut after W(m+1) (in the stored order) keeps its old key: it keeps its
  // GPUs whatever its place among the jobs there, all of which fit, so it need not move (the
  // order of such jobs among themselves was most of a gittins pass: its indices cross all the
  // time). Where the jobs whose new keys are before the cut overflow it, the pass re-keys
  // again with W(m+1) for the cut, as the rule was first (every job before W(m+1) fits).
  std::optional<SortKey> stale_below;
  std::optional<BudgetCut> stale_cut;
  if (kept_ahead_of_next && next_waiting && !bounds) {
    stale_cut = CutAfter(*next_waiting);
    stale_below = stale_cut ? stale_cut->key : *next_waiting;
  }
  RekeyRunning(from, running_.size(), now, stale_below);
  if (stale_cut && Overflows(*stale_cut)) {
    // (A job that kept its old key is still at or after `from`: only re-keyed jobs moved
    // before it. The others get the same keys again, and jobs of the k0 rule pushed past
    // `from` keep theirs: both keys are before W(m+1).)
    RekeyRunning(from, running_.size(), now, next_waiting);
  }
  while (cut && Overflows(*cut)) {
    // Jobs re-keyed before the cut overflow it. The cut in the order now is earlier (still
    // after W(m+1): every running job and W1..Wm fit); the jobs between the two cuts get
    // their exact keys (a stale one there has its last key after the new cut; those re-keyed
    // already are keyed again), and then every job at or after the new cut has its exact key.
    // Each round moves the cut back, towards the W(m+1) rule alone.
    const std::optional<BudgetCut> earlier = CutAfter(*next_waiting);
    if (!earlier) break;  // (cannot be: the jobs before the cut overflow the cluster)
    RekeyRunning(running_.IndexOf(running_.lower_bound(earlier->key)),
                 running_.IndexOf(running_.lower_bound(cut->key)), now, std::nullopt);
    cut = earlier;
  }
  if (cut) last_cut_ = cut->key;
}

void Scheduler::RekeyRunning(size_t from, size_t to, Time now, std::optional<SortKey> stale_below) {
  // A re-keyed job may move behind waiting jobs it was ahead of: the walk starts at the
  // smaller of the first old and the first new key, so those waiting jobs are reconsidered.
  if (from < running_.size()) Touch(running_.At(from).first);
  running_.Rekey(
      [&](uint32_t slot) {
        Job& j = jobs_[slot];
        const SortKey key = policy_->Key(j, now);
        if (stale_below && j.key < *stale_below && key < *stale_below) return j.key;
        j.key = key;
        NoteKeyBound(slot, now);
        return j.key;
      },
      from, to,
      [&](uint32_t slot) {  // every cache line of the Job a key reads or writes
        const char* p = reinterpret_cast<const char*>(&jobs_[slot]);
        for (size_t off = 0; off < sizeof(Job); off += 64) __builtin_prefetch(p + off);
      });
  Touch(from < running_.size() ? running_.At(from).first
                               : SortKey{.k0 = std::numeric_limits<int64_t>::max()});
  if (from == 0) walk_from_ = SortKey{.k0 = std::numeric_limits<int64_t>::min()};
}

void Scheduler::RekeyAll(Time now) {
  std::vector<uint32_t> active;
  active.reserve(running_.size() + waiting_.size());
  auto key_of = [&](uint32_t slot) {
    Job& j = jobs_[slot];
    policy_->Relearned(j, now);  // e.g. its queue under thresholds that moved
    j.key = policy_->Key(j, now);
    NoteKeyBound(slot, now);
    active.push_back(slot);
    return j.key;
  };
  running_.Rekey(key_of);
  WaitOrder rekeyed;
  for (const auto& [key, slot] : waiting_) rekeyed.emplace(key_of(slot), slot, jobs_[slot].gpus());
  waiting_.swap(rekeyed);
  // What was learned may move demotion and promotion times (thresholds), so every timer is
  // re-armed, in slot order so that equal times keep a deterministic order.
  std::sort(active.begin(), active.end());
  for (uint32_t slot : active) ArmTimer(slot, now);
  walk_from_ = SortKey{.k0 = std::numeric_limits<int64_t>::min()};  // the next pass walks all
}

void Scheduler::RebuildOrders(Time now) {
  running_.clear();
  waiting_.clear();
  for (uint32_t slot = 0; slot < jobs_.size(); ++slot) {
    Job& j = jobs_[slot];
    if (j.state != JobState::kRunning && j.state != JobState::kPending) continue;
    j.key = policy_->Key(j, now);
    NoteKeyBound(slot, now);
    if (j.running()) {
      running_.emplace(j.key, slot, j.gpus());
    } else {
      waiting_.emplace(j.key, slot, j.gpus());
    }
  }
  walk_from_.reset();  // the walk starts at the first job
}

}  // namespace tiresias
