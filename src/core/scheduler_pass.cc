// The scheduling pass of the core (Scheduler::Schedule calls it after timers and re-keying).
//
// A pass offers GPUs to jobs in policy order. Preemptive policies walk running and waiting
// jobs together with a GPU budget (the cluster's size): a job is selected when its gang fits
// the budget that is left, so jobs behind a misfit may backfill. Selected waiting jobs are
// placed in order; running jobs that were not selected ("victims") give their GPUs back only
// if a selected job needs them (lowest priority first, as far as needed), and keep running
// otherwise. Free GPUs left by a selected job that cannot be placed go to jobs behind it
// (backfill). Non-preemptive policies walk only the waiting jobs with the free GPUs as
// budget; strict FIFO stops at the first misfit. With tenants, the walk is tenant_pass.cc's.
// Placement (Place) avoids the GPUs a driver asks to avoid when it can; Relocate moves a job
// not yet progressing off them, or off GPUs the driver says other processes still hold.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <span>
#include <utility>

#include "core/scheduler.h"

namespace tiresias {

ClusterState Scheduler::AvoidingView(const Allocation* released,
                                     const std::vector<uint64_t>* also) const {
  ClusterState view = cluster_;
  if (view.logging()) view.EndLog();
  if (released) view.Give(*released);
  for (int node = 0; node < topo_.num_nodes(); ++node) {
    const auto n = static_cast<size_t>(node);
    const uint64_t hide = (avoid_mask(node) | (also ? (*also)[n] : 0)) & view.free_mask(node);
    if (hide) view.Take(std::span<const NodeSlice>(std::array{NodeSlice{node, hide}}));
  }
  return view;
}

PlacementResult Scheduler::Place(const JobSpec& spec) {
  if (avoided_ > 0) {  // (never in the simulator)
    PlacementResult avoiding = placement_->Place(spec, AvoidingView());
    auto* a = std::get_if<Placed>(&avoiding);
    if (a && !a->fallback) return avoiding;
    PlacementResult plain = placement_->Place(spec, cluster_);
    auto* p = std::get_if<Placed>(&plain);
    // Both only fallbacks (the policy would rather have a packed slot): the one avoiding.
    return a && (!p || p->fallback) ? avoiding : plain;
  }
  return placement_->Place(spec, cluster_);
}

StatusOr<bool> Scheduler::Relocate(JobId id, Time now, std::vector<Action>& out,
                                   const std::vector<GpuId>& also_taken) {
  auto it = slot_of_.find(id);
  if (it == slot_of_.end()) return NotFound(fmt::format("job {}: unknown", id.value()));
  const uint32_t slot = it->second;
  Job& j = jobs_[slot];
  if (!j.running() || now >= j.progress_start) return false;
  std::vector<uint64_t> taken(static_cast<size_t>(topo_.num_nodes()), 0);
  for (const GpuId& g : also_taken) {
    if (g.node < 0 || g.node >= topo_.num_nodes() || g.index < 0 ||
        g.index >= topo_.gpus_per_node()) {
      return InvalidArgument(
          fmt::format("job {}: no GPU {}:{} to leave out", id.value(), g.node, g.index));
    }
    taken[static_cast<size_t>(g.node)] |= uint64_t{1} << g.index;
  }
  bool on_them = false;
  for (const NodeSlice& sl : j.alloc.slices) {
    on_them |= ((avoid_mask(sl.node) | taken[static_cast<size_t>(sl.node)]) & sl.gpus) != 0;
  }
  if (!on_them) return false;
  // Its own GPUs are free in the view but those to avoid or taken (a place found is
  // elsewhere, with those it holds that are neither, if the policy takes them).
  ClusterState view = AvoidingView(&j.alloc, &taken);
  // A waiting job ahead of it that the GPUs free now could serve goes first (the next pass
  // places it): a move would take them from it, and it would wait for the grace instead (a
  // review). (By count: the pass decides where.)
  int free_now = 0;
  for (int node = 0; node < topo_.num_nodes(); ++node) {
    free_now += std::popcount(cluster_.free_mask(node) & ~avoid_mask(node) &
                              ~taken[static_cast<size_t>(node)]);
  }
  for (const auto& [key, w] : waiting_) {
    if (!(key < j.key)) break;
    if (jobs_[w].gpus() <= free_now) return false;
  }
  PlacementResult r = placement_->Place(j.spec, view);
  auto* p = std::get_if<Placed>(&r);
  if (!p || p->fallback) return false;
  Stop(slot, now);
  --j.starts;  // the same start, elsewhere: not counted again, its restore as it was
  Start(slot, std::move(p->alloc), now, out);
  // (Placed on a preempted job's GPUs it waited for that job's checkpoint, its grace.)
  out.back().detail =
      "moved to free GPUs: those it was placed on are held by another job's "
      "stopping process";
  dirty_ = true;
  return true;
}

bool Scheduler::TryStart(uint32_t slot, Time now, std::vector<Action>& out) {
  Job& j = jobs_[slot];
  PlacementResult r = Place(j.spec);
  if (auto* p = std::get_if<Placed>(&r)) {
    Start(slot, std::move(p->alloc), now, out);
    return true;
  }
  NoteUnplaced(j, r);
  return false;
}

void Scheduler::NoteUnplaced(Job& j, const PlacementResult& r) {
  NoteWait(j, WaitKind::kNoSlot);
  if (auto* n = std::get_if<NeverFits>(&r)) {
    never_fits_[static_cast<uint32_t>(&j - jobs_.data())] = n->reason;
  }
}

void Scheduler::NonPreemptivePass(Time now, std::vector<Action>& out) {
  if (tenant_on()) return TenantNonPreemptivePass(now, out);
  const bool strict = policy_->stops_at_first_misfit();
  auto it = waiting_.begin();
  while (it != waiting_.end()) {
    int free = cluster_.total_free();
    if (NoneFits(free)) break;
    if (!strict && !opts_.reference_pass) {  // jobs that do not fit are passed over unseen
      if ((it = waiting_.NextFitting(it, free)) == waiting_.end()) break;
    }
    uint32_t slot = it->second;
    ++it;  // Start() moves the job out of waiting_; `it` stays valid
    Job& j = jobs_[slot];
    if (j.gpus() > free) {
      if (strict) break;
      continue;
    }
    if (!TryStart(slot, now, out) && strict) break;
  }
}

void Scheduler::PreemptivePass(Time now, std::vector<Action>& out) {
  // Before walk_from_, the last pass's decisions stand: its running jobs keep their GPUs.
  int budget = cluster_.total_usable();
  auto r = running_.begin();
  auto w = waiting_.begin();
  if (walk_from_ && !opts_.checkpoint_aware) {  // checkpoint-aware: kept jobs may swap
    const auto from = std::as_const(running_).lower_bound(*walk_from_);
    budget -= static_cast<int>(running_.GpusBetween(r, from));
    r = from;
    w = waiting_.lower_bound(*walk_from_);
  }
  const int min_wait = opts_.reference_pass ? 0 : MinWaitingGpus();  // reference: no cut-off
  // The pass's lists, kept with their capacity from pass to pass (no allocation per pass).
  pass_scratch_.clear();
  std::vector<uint32_t>& victims = pass_scratch_.victims;
  std::vector<uint32_t>& candidates = pass_scratch_.candidates;
  std::vector<uint32_t>& kept = pass_scratch_.kept;
  std::vector<uint32_t>& deferred = pass_scratch_.deferred;
  std::vector<std::optional<Allocation>>& fallback = pass_scratch_.fallback;
  auto bulk_failed = waiting_.end();
  if (tenant_on()) TenantWalk(now, victims, candidates, kept);  // the two levels
  while (!tenant_on() && (r != running_.end() || w != waiting_.end())) {
    if (budget < min_wait) {
      w = waiting_.end();  // no waiting job can fit any more
    } else if (!opts_.reference_pass) {
      // Waiting jobs that do not fit are passed over unseen: the budget only shrinks, so
      // they would not fit at their turn either (a burst of large gangs costs nothing).
      w = waiting_.NextFitting(w, budget);
    }
    if (w == waiting_.end() && !opts_.checkpoint_aware) {
      // Only running jobs are left: each keeps its GPUs if it fits what is left, from the
      // gang sizes alone (no job is looked up for the ones that stay).
      for (; r != running_.end(); ++r) {
        const int g = running_.gpus(r);
        if (g <= budget) {
          budget -= g;
        } else {
          victims.push_back(r->second);
        }
      }
      break;
    }
    if (r == running_.end() && w == waiting_.end()) break;
    if (!opts_.checkpoint_aware && w != waiting_.end() && w != bulk_failed && r != running_.end() &&
        r->first < w->first) {
      // The running jobs before the next waiting job that fits all keep their GPUs if their
      // sum fits: one binary search and a sum instead of a step each. Tried once per waiting
      // job: when it does not fit, they are stepped through as before.
      const auto to = std::as_const(running_).lower_bound(w->first);
      const int64_t sum = running_.GpusBetween(r, to);
      if (sum <= budget) {
        budget -= static_cast<int>(sum);
        r = to;
        continue;
      }
      bulk_failed = w;
    }
    bool take_running = w == waiting_.end() || (r != running_.end() && r->first < w->first);
    const int gpus = take_running ? running_.gpus(r) : w.gpus();
    uint32_t slot = take_running ? (r++)->second : (w++)->second;
    if (gpus <= budget) {
      budget -= gpus;
      if (!take_running) {
        candidates.push_back(slot);
      } else if (opts_.checkpoint_aware) {
        kept.push_back(slot);  // only SwapVictims reads them
      }
    } else if (take_running) {
      victims.push_back(slot);
    }
  }
  if (opts_.checkpoint_aware && !victims.empty()) SwapVictims(now, victims, kept);
  // Place selected jobs on free GPUs first; only those that do not fit take victims' GPUs.
  // A fallback placement (the policy would rather have a packed slot) waits for the victims'
  // GPUs too, keeping its allocation on free GPUs in case they free no better slot.
  for (uint32_t s : candidates) {
    if (jobs_[s].gpus() > cluster_.total_free()) {  // surely needs victims' GPUs
      deferred.push_back(s);
      fallback.emplace_back();
      continue;
    }
    PlacementResult res = Place(jobs_[s].spec);
    auto* p = std::get_if<Placed>(&res);
    if (p && (!p->fallback || victims.empty())) {
      Start(s, std::move(p->alloc), now, out);
    } else {
      deferred.push_back(s);
      fallback.emplace_back();
      if (p) {
        fallback.back() = std::move(p->alloc);
        cluster_.Take(*fallback.back());  // reserved until the deferred jobs are placed
      }
    }
  }
  if (deferred.empty() || victims.empty()) {
    bool unplaced = false;
    for (uint32_t s : deferred) {
      if (!TryStart(s, now, out)) {
        Revisit(jobs_[s].key);  // selected but unplaced
        unplaced = true;
      }
    }
    if (unplaced) Backfill(now, out);
    return;
  }
  // The deferred jobs, in policy order, take victims' GPUs: victims give theirs back lowest
  // priority first and only as far as the job at hand needs (a packed slot, or at least a
  // fallback), so as few run-down victims as possible are actually preempted.
  size_t released = 0;  // the lowest-priority victims whose GPUs are given back
  const auto give_next = [&] { cluster_.Give(SlicesOf(victims[victims.size() - 1 - released++])); };
  const auto take_last = [&] { cluster_.Take(SlicesOf(victims[victims.size() - released--])); };
  bool unplaced = false;
  size_t gives_logged = 0;  // the changes in the cluster's log after an ask-all gave all back
  bool ask_all_first = placement_->pure_and_monotone() &&
                       !placement_->places_whenever_enough_free() && !opts_.reference_pass;
  for (size_t i = 0; i < deferred.size(); ++i) {
    const uint32_t s = deferred[i];
    std::optional<Allocation>& fb = fallback[i];
    if (ask_all_first && !fb && released < victims.size()) {
      // Most such passes find a job that every victim's GPUs could not place either (the
      // packed slot it waits for is not there): asked once with all of them given back,
      // not once per victim. Where it can be placed, they are taken again and given one by
      // one as below. With nothing given back before, the gives are logged: taking them
      // back reads no victim's allocation again (here, or at the end of the pass).
      const size_t before = released;
      if (before == 0) cluster_.BeginLog();
      std::vector<NodeSlice>& slices = pass_scratch_.slices;
      slices.clear();
      for (size_t k = 0; k < victims.size() - released; ++k) {
        const auto of = SlicesOf(victims[k]);
        slices.insert(slices.end(), of.begin(), of.end());
      }
      cluster_.GiveAll(slices);  // one change per node
      released = victims.size();
      gives_logged = cluster_.logged();
      PlacementResult all = placement_->Place(jobs_[s].spec, cluster_);
      if (!std::holds_alternative<Placed>(all)) {
        NoteUnplaced(jobs_[s], all);
        Revisit(jobs_[s].key);  // selected but unplaced
        unplaced = true;
        continue;
      }
      if (cluster_.logging()) {
        cluster_.UndoLog();
        released = 0;
      }
      while (released > before) take_last();
      // Placeable: the jobs after it are likely placeable too (a pass that preempts hundreds,
      // las' time-sharing, would give and take every victim once per job): asked no more.
      ask_all_first = false;
    }
    while (true) {
      if (fb) cluster_.Give(*fb);
      // (Not avoiding here: a slot that avoids may take more victims' GPUs, and the job waits
      // for victims' processes wherever it goes.)
      PlacementResult res = placement_->Place(jobs_[s].spec, cluster_);
      auto* p = std::get_if<Placed>(&res);
      if (p && !p->fallback) {
        Start(s, std::move(p->alloc), now, out);
        break;
      }
      if (p && !fb) fb = std::move(p->alloc);
      if (released == victims.size()) {
        if (fb) {
          Start(s, std::move(*fb), now, out);
        } else {
          NoteUnplaced(jobs_[s], res);
          Revisit(jobs_[s].key);  // selected but unplaced
          unplaced = true;
        }
        break;
      }
      if (fb) cluster_.Take(*fb);
      give_next();
    }
  }
  if (cluster_.logging()) {
    // Nothing changed since an ask-all gave every victim's GPUs back (the log holds only those
    // gives): none was needed, so all are taken back at once and every victim keeps running.
    if (cluster_.logged() == gives_logged) {
      cluster_.UndoLog();
      released = 0;
      if (!tenant_on() && !opts_.checkpoint_aware) {
        // The walk found them in key order: revisiting the first revisits them all.
        Revisit(jobs_[victims.front()].key);
        victims.clear();
      }
    } else {
      cluster_.EndLog();
    }
  }
  std::vector<Action> starts;
  starts.swap(out);
  const std::vector<int> vc_held = vc_running_;  // as the pass decided (borrowers' reasons)
  for (size_t k = 0; k < victims.size(); ++k) {
    Job& j = jobs_[victims[k]];
    const bool given = k >= victims.size() - released;
    if (!given || cluster_.AllFree(SlicesOf(victims[k]))) {
      if (given) cluster_.Take(SlicesOf(victims[k]));  // nobody needed its GPUs: it keeps running
      Revisit(j.key);                                  // kept although not selected
      continue;
    }
    // Stop (without release) only clears the job's allocation: it moves into the action.
    out.push_back(Action{Action::Kind::kPreempt, j.spec.id, std::move(j.alloc), 0, 0,
                         tenant_on() && j.wait == WaitKind::kOverQuota
                             ? BorrowerReason(j, vc_held[static_cast<size_t>(j.tenant)])
                             : std::string()});
    ++j.preemptions;
    const Service loss = opts_.lose_work ? j.LossAt(now) : 0;
    const Duration rollback = j.WorkDoneAt(std::max(j.ckpt_at, j.progress_start));
    Stop(victims[k], now, /*release=*/false);  // its GPUs were given back above
    if (loss > 0) {                            // back to its last checkpoint
      j.lost += loss;
      j.work_done = rollback;
    }
  }
  // Preemptions first, then starts, so a driver frees GPUs before reusing them.
  out.insert(out.end(), std::make_move_iterator(starts.begin()),
             std::make_move_iterator(starts.end()));
  if (unplaced) Backfill(now, out);
}

void Scheduler::SwapVictims(Time now, std::vector<uint32_t>& victims, std::vector<uint32_t>& kept) {
  // The work a job would lose is known in the simulator's model (lose_work: without a
  // checkpoint a run loses everything since its start) and, live, for jobs that report
  // checkpoints. A live job that never reported one keeps the signal-and-grace protocol (it
  // may well checkpoint on the signal): it is neither swapped nor reordered.
  const auto known = [&](const Job& j) { return opts_.lose_work || j.ckpt_at >= 0; };
  // Each victim in walk order: the kept job of its class and size that would lose the least
  // work (the lowest-priority one among equals) takes its place when it loses strictly less.
  for (uint32_t& v : victims) {
    const Job& jv = jobs_[v];
    if (!known(jv)) continue;
    uint32_t* best = nullptr;
    Service best_loss = jv.LossAt(now);
    for (uint32_t& k : kept) {
      const Job& jk = jobs_[k];
      if (jk.key.k0 != jv.key.k0 || jk.gpus() != jv.gpus() || !known(jk)) continue;
      const Service l = jk.LossAt(now);
      if (l < best_loss || (best && l == best_loss)) {
        best = &k;
        best_loss = l;
      }
    }
    if (best) std::swap(v, *best);
  }
  // Victims give GPUs back from the end: lowest class last in walk order, and within a class
  // (a run of equal k0: the walk is in policy order) least loss last; the jobs whose loss is
  // unknown keep their places.
  for (size_t first = 0; first < victims.size();) {
    size_t last = first;
    while (last < victims.size() && jobs_[victims[last]].key.k0 == jobs_[victims[first]].key.k0) {
      ++last;
    }
    std::vector<size_t> places;
    std::vector<uint32_t> movable;
    for (size_t i = first; i < last; ++i) {
      if (!known(jobs_[victims[i]])) continue;
      places.push_back(i);
      movable.push_back(victims[i]);
    }
    std::stable_sort(movable.begin(), movable.end(), [&](uint32_t a, uint32_t b) {
      return jobs_[a].LossAt(now) > jobs_[b].LossAt(now);
    });
    for (size_t i = 0; i < places.size(); ++i) victims[places[i]] = movable[i];
    first = last;
  }
}

void Scheduler::Backfill(Time now, std::vector<Action>& out) {
  // A selected job the placement could not place leaves its share of GPUs free: jobs behind
  // it that fit the free GPUs use them (backfill), as the first victims of the next pass.
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const int free = cluster_.total_free();
    if (NoneFits(free)) break;
    if (!opts_.reference_pass && (it = waiting_.NextFitting(it, free)) == waiting_.end()) break;
    uint32_t slot = it->second;
    ++it;  // Start() moves the job out of waiting_
    if (jobs_[slot].gpus() > free || !TenantMayTake(jobs_[slot])) continue;
    if (TryStart(slot, now, out)) Revisit(jobs_[slot].key);
  }
}

}  // namespace tiresias
