// The live scheduler's capacity (see live_scheduler.h): which GPUs of each node the core may
// place jobs on. A node's usable GPUs come from the executor's node reports (a node down, GPUs
// held by jobs outside tiresias). Of them, the GPUs the core counts free but the process of a
// job whose run the core ended still holds (cancelled, or past its time limit, and running
// through its grace) are given to the core to avoid until that process is gone: a job is
// placed there only when there is no other place for it (it then waits for them, as every job
// did before). Without that the core gave them to the next job, which waited for that process
// while other GPUs stayed idle. Every change is journalled (a capacity event with the GPUs to
// avoid as `stopping`) before the pass it affects, so that a replay rebuilds the same core.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <set>
#include <tuple>

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
    if (std::popcount(sched_->cluster().usable_mask(node)) == want) continue;
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
    const uint64_t usable = sched_->UsableMaskFor(node, want);
    SetCapacity(node, usable, sched_->avoid_mask(node) & usable, why, now, changed, stop);
  }
}

void LiveScheduler::SyncStoppingGpus(Time now, std::vector<JobId>& changed,
                                     std::vector<JobId>& stop) {
  // A GPU the process of a job whose run the core ended still holds (cancelled, or past its
  // time limit): free in the core, or given to a job with no other place then, which waits
  // for it (RelocateParked moves it when GPUs free up elsewhere). (Not a preempted or requeued
  // job's: the core may start that job again there, and it waits for its own process wherever
  // it starts; avoided, they sent it to other GPUs and kept a job that could have started
  // there from them.)
  const int nodes = sched_->topology().num_nodes();
  std::vector<uint64_t> held(static_cast<size_t>(nodes), 0);
  std::vector<std::set<JobId>> by(static_cast<size_t>(nodes));
  for (const auto& [g, id] : gpu_owner_) {
    if (g.node < 0 || g.node >= nodes) continue;
    const Job* cj = sched_->Find(id);
    if (cj && !cj->ended()) continue;
    const uint64_t bit = uint64_t{1} << g.index;
    if (!(sched_->cluster().usable_mask(g.node) & bit)) continue;  // (the core keeps no other)
    held[static_cast<size_t>(g.node)] |= bit;
    by[static_cast<size_t>(g.node)].insert(id);
  }
  const std::vector<NodeSpec> cluster = ClusterNodes();
  for (int node = 0; node < nodes; ++node) {
    const auto n = static_cast<size_t>(node);
    const uint64_t had = sched_->avoid_mask(node);
    if (held[n] == had) continue;
    const std::string name = n < cluster.size() ? cluster[n].name : std::to_string(node);
    std::vector<std::string> what;  // what changed: GPUs whose process is gone, GPUs held
    if (const uint64_t gone = had & ~held[n]) {
      what.push_back(
          fmt::format("GPU(s) {} free again (their stopping processes are gone)", Indices(gone)));
    }
    if (held[n] != 0) {
      std::vector<std::string> jobs;
      for (JobId id : by[n]) jobs.push_back(RefOf(records_.at(id)));
      what.push_back(fmt::format("GPU(s) {} still held by the stopping process{} of job{} {}",
                                 Indices(held[n]), jobs.size() > 1 ? "es" : "",
                                 jobs.size() > 1 ? "s" : "", Join(jobs, ", ")));
    }
    const std::string why = fmt::format("node {}: {}", name, Join(what, "; "));
    SetCapacity(node, sched_->cluster().usable_mask(node), held[n], why, now, changed, stop);
  }
}

void LiveScheduler::RelocateParked(Time now, std::vector<JobId>& changed) {
  // A job the core placed on GPUs another job's process still holds (a cancelled or timed-out
  // job's, avoided: it had no other place; a preempted or requeued job's, given to it by the
  // pass) waits for that process, up to its grace, while GPUs that free up elsewhere stay
  // idle or go to jobs behind it (exploratory tests: a later job overtook it under fifo; under
  // srtf the preempted job took them, to wait for its own process). The core is asked to move
  // it when GPUs became free for it (free in the core, not avoided, held by no process) since
  // it was last asked, and with those it holds that are neither they are enough in number:
  // each ask is a journalled input (it replays the same, with the GPUs other processes hold),
  // so not one per step. In the core's order: the first in it has the first choice.
  std::erase_if(relocate_asked_, [&](const auto& e) { return !to_launch_.contains(e.first); });
  if (to_launch_.empty()) return;
  const int nodes = sched_->topology().num_nodes(), per = sched_->topology().gpus_per_node();
  auto valid = [&](const GpuId& g) {
    return g.node >= 0 && g.node < nodes && g.index >= 0 && g.index < per;
  };
  // Free for any job (free in the core, not avoided, held by no process), and the free GPUs
  // processes hold that the core does not avoid: once per step, and after a move.
  std::vector<uint64_t> open;
  std::vector<GpuId> held_free;
  auto look = [&] {
    open.assign(static_cast<size_t>(nodes), 0);
    held_free.clear();
    for (int node = 0; node < nodes; ++node) {
      open[static_cast<size_t>(node)] =
          sched_->cluster().free_mask(node) & ~sched_->avoid_mask(node);
    }
    for (const auto& [g, owner] : gpu_owner_) {
      if (!valid(g)) continue;
      const uint64_t bit = uint64_t{1} << g.index;
      if (!(sched_->cluster().free_mask(g.node) & bit)) continue;
      open[static_cast<size_t>(g.node)] &= ~bit;
      if (!(sched_->avoid_mask(g.node) & bit)) held_free.push_back(g);
    }
  };
  look();
  // (A move needs a GPU outside those it holds: none free, none asked.)
  if (std::all_of(open.begin(), open.end(), [](uint64_t m) { return m == 0; })) return;
  // Held by another job's process than `id` (or avoided).
  auto others = [&](const GpuId& g, JobId id) {
    auto o = gpu_owner_.find(g);
    return (valid(g) && (sched_->avoid_mask(g.node) >> g.index & 1)) ||
           (o != gpu_owner_.end() && o->second != id);
  };
  std::vector<const Job*> parked;
  for (const auto& [id, gpus] : to_launch_) {
    const Job* cj = sched_->Find(id);
    // (One that waits for its own previous process too gains nothing by a move.)
    if (!cj || !cj->running() || now >= cj->progress_start || procs_.contains(id)) continue;
    const JobId job = id;  // (a structured binding: clang's C++20 cannot capture it)
    if (std::any_of(gpus.begin(), gpus.end(), [&](const GpuId& g) { return others(g, job); })) {
      parked.push_back(cj);
    }
  }
  std::sort(parked.begin(), parked.end(), [](const Job* a, const Job* b) {
    return std::tie(a->key, a->spec.id) < std::tie(b->key, b->spec.id);
  });
  for (const Job* cj : parked) {
    const JobId id = cj->spec.id;
    const std::vector<GpuId>& mine = to_launch_.at(id);
    // What it may use: the open GPUs and those it holds that nothing else holds (a move may
    // keep them); asked again only when that grew (fewer cannot make a move possible).
    std::vector<uint64_t> usable = open;
    usable.resize(2 * open.size(), 0);
    int count = 0;
    for (uint64_t m : open) count += std::popcount(m);
    std::vector<GpuId> held = held_free;  // (and those of its own others hold)
    for (const GpuId& g : mine) {
      if (!valid(g)) continue;
      if (!others(g, id)) {
        usable[open.size() + static_cast<size_t>(g.node)] |= uint64_t{1} << g.index;
        ++count;
      } else if (!(sched_->avoid_mask(g.node) >> g.index & 1)) {
        held.push_back(g);
      }
    }
    if (cj->gpus() > count) continue;
    auto [it, fresh] = relocate_asked_.try_emplace(id, usable);
    bool gained = fresh;
    for (size_t n = 0; !fresh && n < usable.size(); ++n) {
      gained |= (usable[n] & ~(n < it->second.size() ? it->second[n] : 0)) != 0;
    }
    it->second = usable;
    if (!gained) continue;
    Journal({.t = now,
             .kind = EventKind::kRelocate,
             .job = id,
             .detail = {{"gpus", GpusToJson(mine)}, {"held", GpusToJson(held)}}});
    std::vector<Action> moved;
    auto r = sched_->Relocate(id, now, moved, held);
    MustOk(r.status());
    for (const Action& a : moved) {
      relocate_asked_.erase(a.job);
      ApplyAction(a, now, changed);
      dirty_ = true;  // the GPUs it left are free for the pass
    }
    if (!moved.empty()) look();  // (the free GPUs changed)
  }
}

void LiveScheduler::SetCapacity(int node, uint64_t usable, uint64_t avoid, const std::string& why,
                                Time now, std::vector<JobId>& changed, std::vector<JobId>& stop) {
  std::map<JobId, std::vector<GpuId>> held;  // for the evict events
  for (const auto& [id, rec] : open_) {
    if (const Job* j = sched_->Find(id); j && j->running()) held[id] = j->alloc.Gpus();
  }
  Journal(CapacityEvent(now, node, usable, why, avoid));
  auto stopped = sched_->SetNodeAvailability(node, usable, now, avoid);
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

int LiveScheduler::FreeGpusNow() const {
  int held = 0;  // free in the core, but a process (stopping) still holds them
  for (const auto& [g, id] : gpu_owner_) {
    held += g.node >= 0 && g.node < sched_->topology().num_nodes() &&
            (sched_->cluster().free_mask(g.node) >> g.index & 1);
  }
  return sched_->cluster().total_free() - held;
}

void LiveScheduler::RestoreStoppingGpus(Scheduler& copy, Time now) {
  for (int node = 0; node < copy.topology().num_nodes(); ++node) {
    if (copy.avoid_mask(node) != 0) {
      (void)copy.SetNodeAvailability(node, copy.cluster().usable_mask(node), now);
    }
  }
}

}  // namespace tiresias
