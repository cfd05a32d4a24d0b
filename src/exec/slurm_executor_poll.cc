// SlurmExecutor, what Slurm says: Poll (Slurm's job states turned into exits, lost runs and
// outside cancels), PollNodes (nodes, GPUs and what holds them, as capacity), EngineState, and
// the poller thread that keeps the squeue/sinfo snapshots fresh (see slurm_executor.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <thread>

#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/slurm_executor.h"
#include "exec/subprocess.h"

namespace tiresias {

std::vector<ExitInfo> SlurmExecutor::Poll() {
  std::lock_guard lk(mu_);
  std::vector<ExitInfo> out;
  for (auto& [id, j] : jobs_) {
    if (j.retired) continue;
    if (j.phase == Phase::kEnded) {
      if (j.ended) out.push_back(*j.ended);
      j.ended.reset();
      j.phase = Phase::kNone;
      continue;
    }
    if (j.slurm_id == 0) continue;
    const SlurmJob* s = Ours(j);
    if (j.phase == Phase::kNone) {
      // Held between attempts. What happened to it outside tiresias?
      // Only snapshots that can show our last hold, or the job at all.
      if (seen_seq_ <= std::max(j.hold_sent_seq, j.known_seq)) continue;
      if (!s) {
        j.slurm_id = 0;  // forgotten by Slurm (e.g. slurmctld -c): submitted again at launch
      } else if (s->state == "CANCELLED" && !j.cancel_reported) {
        j.cancel_reported = true;
        ExitInfo e = ExitOf(j, s);
        e.cancelled = true;
        out.push_back(e);
      } else if (s->state == "PENDING" && !s->held) {
        Enqueue({.kind = OpKind::kHold, .job = id});  // Slurm must not start it on its own
        j.hold_sent_seq = op_seq_;
      } else if (SlurmActive(s->state) && s->state != "COMPLETING") {
        // Started without tiresias: stop whatever runs.
        Enqueue({.kind = OpKind::kKill, .job = id, .attempt = -1});
        j.hold_sent_seq = op_seq_;
      }
      continue;
    }
    if (j.phase != Phase::kReleased || seen_seq_ <= j.released_seq) continue;
    std::optional<ExitInfo> ended;
    if (!s) {
      ended = ExitOf(j, nullptr);
      j.slurm_id = 0;
    } else {
      if (!j.restart_base) j.restart_base = s->restarts;
      if (s->restarts > *j.restart_base) {
        // Requeued since the release: by tiresias (the kill), or by Slurm (node failure).
        ended = ExitInfo{.job = id, .attempt = j.attempt, .exit_code = -1, .signal = 0};
        if (j.kill_requested) {
          ended->signal = SIGKILL;
        } else if (!j.stop_requested) {
          ended->lost = true;
          ended->reason = fmt::format("Slurm requeued job {} ({})", s->id, s->reason);
        }
        if (!s->held) {
          Enqueue({.kind = OpKind::kHold, .job = id});
          j.hold_sent_seq = op_seq_;
        }
      } else if (SlurmActive(s->state)) {
        j.seen_active = true;
      } else if (SlurmEnded(s->state)) {
        ended = ExitOf(j, s);
        // Keep the Slurm job for the next attempt: back to pending, held.
        if (j.stop_requested || j.kill_requested || ended->lost) {
          Enqueue({.kind = OpKind::kRequeueHold, .job = id});
          j.hold_sent_seq = op_seq_;
        }
      } else if (s->held && (j.stop_requested || j.kill_requested)) {
        ended = ExitInfo{.job = id,
                         .attempt = j.attempt,
                         .exit_code = -1,
                         .signal = j.kill_requested ? SIGKILL : 0,
                         .reason = "stopped before Slurm started it"};
      }
    }
    if (ended) {
      j.phase = Phase::kNone;
      out.push_back(*ended);
    }
  }
  return out;
}

std::optional<std::vector<NodeReport>> SlurmExecutor::PollNodes() {
  std::lock_guard lk(mu_);
  if (seen_seq_ <= reported_nodes_seq_) return std::nullopt;
  reported_nodes_seq_ = seen_seq_;
  std::map<std::string, const SlurmNode*> state;
  for (const SlurmNode& n : node_state_) state[n.name] = &n;
  std::vector<NodeReport> out;
  for (const SlurmNode& n : nodes_) {
    NodeReport r{.name = n.name, .gpus = n.gpus};
    if (auto it = state.find(n.name); it != state.end()) {
      r.state = it->second->state;
      for (const auto& f : it->second->flags) r.state += "+" + f;
      r.usable = it->second->Usable();
      r.reason = it->second->reason;
    } else {
      r.state = "missing";
      r.usable = false;
      r.reason = "not in sinfo";
    }
    out.push_back(std::move(r));
  }
  // Who holds GPUs: jobs outside tiresias, and what Slurm holds for ours beyond the core's
  // allocation (a job asks every node for its largest per-node count).
  std::map<int64_t, const Job*> ours;
  for (const auto& [id, j] : jobs_) {
    if (j.slurm_id != 0 && (j.phase == Phase::kReleased || j.phase == Phase::kLaunching)) {
      ours[j.slurm_id] = &j;
    }
  }
  const std::string prefix = fmt::format("tiresias:{}:", opts_.tag);
  for (const auto& [sid, s] : seen_) {
    if (!SlurmActive(s.state)) continue;
    auto mine = ours.find(sid);
    for (size_t k = 0; k < s.nodes.size() && k < s.node_gpus.size(); ++k) {
      auto idx = node_index_.find(s.nodes[k]);
      if (idx == node_index_.end()) continue;
      int extra = s.node_gpus[k];
      if (mine != ours.end()) {
        for (const auto& [n, g] : mine->second->placement) {
          if (n == idx->second) extra -= g;
        }
      }
      if (extra <= 0) continue;
      NodeReport& r = out[static_cast<size_t>(idx->second)];
      r.gpus_outside += extra;
      r.outside_jobs.push_back(
          fmt::format("slurm {} ({}, {} GPU{}{})", sid, s.user, extra, extra == 1 ? "" : "s",
                      s.comment.starts_with(prefix) ? ", tiresias's beyond its allocation" : ""));
    }
  }
  return out;
}

std::string SlurmExecutor::EngineState(JobId job) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.slurm_id == 0) return "";
  const SlurmJob* s = Seen(it->second.slurm_id);
  if (!s) return fmt::format("Slurm job {}", it->second.slurm_id);
  std::string out = fmt::format("Slurm job {} {}", s->id, s->state);
  if (s->state == "PENDING" && !s->reason.empty()) out += " (" + s->reason + ")";
  if (!s->nodes.empty()) out += " on " + Join(s->nodes, ",");
  return out;
}

void SlurmExecutor::PollerLoop() {
  auto next_sinfo = std::chrono::steady_clock::now();
  auto backoff = opts_.poll_interval;
  while (true) {
    uint64_t seq;
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
      seq = ++op_seq_;
    }
    const auto began = std::chrono::steady_clock::now();
    auto jobs = Squeue();
    static const bool trace = std::getenv("TIRESIAS_SLURM_TRACE") != nullptr;
    if (trace) {
      std::cerr << fmt::format("tiresias slurm poll: squeue {} jobs in {} ms\n",
                               jobs.ok() ? jobs->size() : 0,
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - began)
                                   .count());
    }
    std::optional<StatusOr<std::vector<SlurmNode>>> nodes;
    if (jobs.ok() && std::chrono::steady_clock::now() >= next_sinfo) {
      nodes = Sinfo();
      next_sinfo = std::chrono::steady_clock::now() + opts_.node_poll_interval;
    }
    std::unique_lock lk(mu_);
    if (jobs.ok()) {
      std::map<int64_t, SlurmJob> seen;
      for (SlurmJob& s : *jobs) seen[s.id] = std::move(s);
      seen_.swap(seen);
      seen_seq_ = seq;
      if (nodes && nodes->ok()) node_state_ = std::move(**nodes);
      backoff = opts_.poll_interval;
    } else {
      backoff = std::min(opts_.max_backoff, backoff * 2);
    }
    NoteContact(jobs.status());
    cv_.notify_all();
    cv_.wait_for(lk, jobs.ok() ? opts_.poll_interval : backoff,
                 [&] { return stop_ || poke_poller_; });
    poke_poller_ = false;
  }
}

}  // namespace tiresias
