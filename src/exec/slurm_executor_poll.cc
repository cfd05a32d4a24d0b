// SlurmExecutor, what Slurm says: Poll (Slurm's job states turned into exits, lost runs and
// outside cancels), PollNodes (nodes, GPUs and what holds them, as capacity), EngineState, and
// the poller thread that keeps the squeue/sinfo snapshots fresh (see slurm_executor.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/wait.h>

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

void SlurmExecutor::Sweep() {
  if (seen_seq_ <= swept_seq_) return;
  swept_seq_ = seen_seq_;
  const std::string prefix = fmt::format("tiresias:{}:", opts_.tag);
  // Cancelled, yet pending (or running) again: the cancel found it completing a kill's
  // requeue, which Slurm finished after it. Cancelled again.
  for (auto it = cancelling_.begin(); it != cancelling_.end();) {
    auto& [sid, c] = *it;
    if (c.done == 0 || seen_seq_ <= c.done) {  // queued, or no snapshot since
      ++it;
      continue;
    }
    const SlurmJob* s = Seen(sid);
    // Forgot it, will not cancel it, or gave its id to a job not ours (a clean restart).
    if (!s || c.sent >= kMaxCancels || !s->comment.starts_with(prefix)) {
      it = cancelling_.erase(it);
      continue;
    }
    if (!SlurmEnded(s->state) && s->state != "COMPLETING") {
      c.done = 0;
      ++c.sent;
      Enqueue({.kind = OpKind::kCancelAny, .slurm_id = sid});
    }
    ++it;
  }
  ForgetStrays();
  ForgetRetired();
  // A pending Slurm job of ours that no job should have: cancelled (if still pending).
  const auto cancel_stray = [&](int64_t sid, JobId job) {
    strays_.insert({sid, op_seq_});
    Enqueue({.kind = OpKind::kCancelStray, .job = job, .slurm_id = sid});
  };
  for (const auto& [sid, s] : seen_) {
    if (s.state != "PENDING" || !s.comment.starts_with(prefix) || strays_.contains(sid)) continue;
    if (s.comment.starts_with(GavePlacePrefix())) {
      // Untagged to give its place, and not cancelled yet (a serve stopped in between).
      cancel_stray(sid, JobId());
      continue;
    }
    auto id = ParseInt(std::string_view(s.comment).substr(prefix.size()));
    if (!id) continue;
    const Job* j = Find(JobId(*id));
    if (!j) {  // of a job forgotten since it was retired (every other has a Job from Open on)
      cancel_stray(sid, JobId(*id));
      continue;
    }
    // Not on a snapshot older than its id; for a live job, not while its sbatch may still
    // be answering (the job may be the one it takes).
    if (sid == j->slurm_id || seen_seq_ <= j->known_seq) continue;
    if (!j->retired && (j->slurm_id == 0 || j->submit_queued || j->submit_uncertain_seq != 0)) {
      continue;
    }
    cancel_stray(sid, j->id);
  }
}

void SlurmExecutor::ForgetStrays() {
  std::set<int64_t> named = batch_ids_;
  for (const Op& o : ops_) named.insert(o.slurm_id);
  for (auto it = strays_.begin(); it != strays_.end();) {
    const auto [sid, seq] = *it;
    if (seen_seq_ > seq && !seen_.contains(sid) && !cancelling_.contains(sid) &&
        !named.contains(sid)) {
      it = strays_.erase(it);
    } else {
      ++it;
    }
  }
}

void SlurmExecutor::ForgetRetired() {
  std::set<JobId> named = batch_jobs_;
  for (const Op& o : ops_) named.insert(o.job);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    const Job& j = it->second;
    const auto gone = [&](int64_t sid) { return sid == 0 || !cancelling_.contains(sid); };
    if (j.retired && !j.submit_queued &&
        seen_seq_ > std::max(j.retired_seq, j.submit_uncertain_seq) && gone(j.slurm_id) &&
        gone(j.replaced_id) && !named.contains(j.id)) {
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<ExitInfo> SlurmExecutor::Poll() {
  std::lock_guard lk(mu_);
  Sweep();
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
    if (s && s->state == "PENDING" && (!s->held || HeldByAdmin(*s))) {
      j.admin_hold_on_run = false;  // released, or the admin's hold put back (a plain one now)
    }
    if (j.phase == Phase::kNone) {
      // Held between attempts. What happened to it outside tiresias?
      // Only snapshots that can show our last hold, or the job at all.
      if (j.holds_queued > 0 || seen_seq_ <= std::max(j.hold_done_seq, j.known_seq)) continue;
      if (!s) {
        j.slurm_id = 0;  // forgotten by Slurm (e.g. slurmctld -c): submitted again at launch
      } else if (s->state == "CANCELLED" && !j.cancel_reported) {
        j.cancel_reported = true;
        ExitInfo e = ExitOf(j, s);
        e.cancelled = true;
        out.push_back(e);
      } else if (s->state == "PENDING" && !s->held) {
        EnqueueHold(j, {.kind = OpKind::kHold, .job = id});  // Slurm must not start it itself
      } else if (SlurmActive(s->state) && s->state != "COMPLETING") {
        // Started without tiresias: stop whatever runs.
        EnqueueHold(j, {.kind = OpKind::kKill, .job = id, .attempt = -1});
      }
      continue;
    }
    if (j.phase != Phase::kReleased || seen_seq_ <= j.released_seq) continue;
    std::optional<ExitInfo> ended;
    if (!s) {
      ended = ExitOf(j, nullptr);
      j.slurm_id = 0;
    } else {
      if (s->restarts > j.restart_base && s->state != "COMPLETING") {
        // Requeued since the release: by tiresias (the kill), or by Slurm (node failure).
        // Not while it is COMPLETING: its processes still hold the GPUs (reported then, its
        // GPUs went to the next job, and the old Slurm job, replaced, was counted as one
        // outside tiresias: the node's capacity fell and innocent jobs were evicted).
        ended = ExitInfo{.job = id, .attempt = j.attempt, .exit_code = -1, .signal = 0};
        if (j.kill_requested && j.ended_itself) {
          // It ended by itself before our kill (a slow epilog). Not for Slurm's own requeue:
          // the COMPLETING it leaves then looks the same (a review's fix that read a run lost
          // with its node as ended by itself was reverted).
          ended = j.ended_itself;
        } else if (j.kill_requested) {
          ended->signal = SIGKILL;
        } else {
          // Slurm's requeue (tiresias's stops only signal): the run was lost, also in a stop's
          // grace (the eviction from a node that failed; it read "checkpointed").
          ended->lost = true;
          ended->reason = fmt::format("Slurm requeued job {} ({})", s->id, s->reason);
        }
        if (!s->held) {
          EnqueueHold(j, {.kind = OpKind::kHold, .job = id});
        }
        // Slurm's requeue (or tiresias's kill's, which a node failure may have been too): a
        // fresh Slurm job for the next attempt.
        Replace(j);
      } else if (SlurmActive(s->state)) {
        j.seen_active = true;
        if (s->state != "COMPLETING") j.admin_hold_on_run = s->reason == "JobHeldAdmin";
        // Its script ended, and Slurm runs the epilog: what Slurm recorded of that end is the
        // run's. Only while no kill of ours was asked: a snapshot's sequence is its command's
        // start, and one that started before the kill may already show the kill's COMPLETING.
        if (s->state == "COMPLETING" && !j.kill_requested && !j.ended_itself && s->end_time > 0 &&
            (s->reason.empty() || s->reason == "None")) {
          ExitInfo e{.job = id, .attempt = j.attempt, .exit_code = -1, .signal = 0};
          if (WIFEXITED(s->wait_status)) e.exit_code = WEXITSTATUS(s->wait_status);
          if (WIFSIGNALED(s->wait_status)) e.signal = WTERMSIG(s->wait_status);
          e.ended_wall_ms = s->end_time * 1000;
          e.completed = DoneFileExists(j.job_dir);
          j.ended_itself = e;
        }
      } else if (SlurmEnded(s->state)) {
        // (Our kill, sent while it was COMPLETING, may leave it CANCELLED: its own end counts.)
        ended = j.kill_requested && j.ended_itself ? *j.ended_itself : ExitOf(j, s);
        // Keep the Slurm job for the next attempt: back to pending, held (not one someone
        // cancelled). After a node failure, a fresh one (the old one held until it is
        // cancelled).
        if ((j.stop_requested || j.kill_requested || ended->lost) && !ended->cancelled) {
          EnqueueHold(j, {.kind = OpKind::kRequeueHold, .job = id});
        }
        if (ended->lost || s->state == "NODE_FAIL" || s->state == "BOOT_FAIL") Replace(j);
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
      const bool own = r.usable;
      r.usable = unknown_grace_.Usable(*it->second, own, std::chrono::steady_clock::now());
      if (r.usable && !own) {
        r.reason = fmt::format(
            "UNKNOWN to slurmctld (restarted?): kept usable for up to {} s while its slurmd "
            "registers",
            std::chrono::duration_cast<std::chrono::seconds>(unknown_grace_.grace()).count());
      }
      const auto& flags = it->second->flags;
      if (!r.usable && r.reason.empty() &&
          std::find(flags.begin(), flags.end(), "RESERVED") != flags.end()) {
        r.reason =
            "in a Slurm reservation (scontrol show reservation), which tiresias's jobs "
            "do not ask for";
      }
    } else {
      r.state = "missing";
      r.usable = false;
      r.reason = "not in sinfo";
      unknown_grace_.Forget(n.name);  // (back UNKNOWN later: no grace)
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

std::string SlurmExecutor::EngineJob(JobId job) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.retired || it->second.slurm_id == 0) return "";
  return std::to_string(it->second.slurm_id);
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

std::string SlurmExecutor::NotStarted(JobId job) const {
  std::lock_guard lk(mu_);
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return "";
  const Job& j = it->second;
  // Released, and a snapshot taken since still shows it pending, never seen running.
  if (j.phase != Phase::kReleased || j.seen_active || seen_seq_ <= j.released_seq) return "";
  const SlurmJob* s = Ours(j);
  if (!s || s->state != "PENDING") return "";
  return fmt::format("Slurm has not started job {} yet ({})", s->id,
                     s->reason.empty() ? "no reason given" : s->reason);
}

std::optional<std::map<JobId, std::string>> SlurmExecutor::EngineHolds() const {
  std::lock_guard lk(mu_);
  if (seen_seq_ == 0 || contact_lost_) return std::nullopt;
  std::map<JobId, std::string> out;
  for (const auto& [id, j] : jobs_) {
    if (j.retired || j.slurm_id == 0) continue;
    const SlurmJob* s = Ours(j);
    if (s && (HeldByAdmin(*s) || (j.admin_hold_on_run && s->state == "PENDING" && s->held))) {
      out[id] = fmt::format(
          "held by an admin in Slurm (scontrol hold {0}): `scontrol uhold {0}` gives it back to "
          "tiresias (`scontrol release` would let Slurm start it on its own)",
          s->id);
    }
  }
  return out;
}

void SlurmExecutor::PollerLoop() {
  auto next_sinfo = std::chrono::steady_clock::now();
  auto backoff = opts_.poll_interval;
  // A squeue that found no answer in time is given more next time (a cluster with very many
  // jobs); one slower than kSlowSqueue sets the pace of polls (slurmctld is not kept busy).
  std::chrono::milliseconds squeue_extra{0}, interval = opts_.poll_interval;
  std::set<int64_t> warned_nodes;
  while (true) {
    uint64_t seq;
    {
      std::lock_guard lk(mu_);
      if (stop_) return;
      seq = ++op_seq_;
    }
    const auto began = std::chrono::steady_clock::now();
    auto jobs = Squeue(squeue_extra);
    if (stopping_) return;  // abandoned, or done after the executor began to stop
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - began);
    if (!jobs.ok() && jobs.status().message().find("no answer within") != std::string::npos) {
      squeue_extra = std::min(kMaxSqueueExtra, squeue_extra * 2 + opts_.command_timeout);
      squeue_extra_ms_ = squeue_extra.count();
    }
    if (jobs.ok()) {
      // Back towards what it needs: twice the time it took.
      squeue_extra =
          std::clamp(2 * took - opts_.command_timeout, std::chrono::milliseconds(0), squeue_extra);
      squeue_extra_ms_ = squeue_extra.count();
      // Seconds (a very big cluster): slurmctld is not asked again sooner than it took to
      // answer. Below that, polls come as before (a 1,000-job cluster's ~0.6 s included).
      interval = took > kSlowSqueue ? took : opts_.poll_interval;
      for (const SlurmJob& s : *jobs) {
        if (s.nodes_unreadable && warned_nodes.insert(s.id).second) {
          std::cerr << fmt::format(
              "tiresias: Slurm job {} ({}) runs on nodes '{}' that tiresias cannot read: the "
              "GPUs it holds there are not known\n",
              s.id, s.user, s.nodelist);
        }
      }
    }
    static const bool trace = std::getenv("TIRESIAS_SLURM_TRACE") != nullptr;
    if (trace) {
      std::cerr << fmt::format("tiresias slurm poll {}: squeue {} jobs in {} ms{}\n",
                               static_cast<const void*>(this), jobs.ok() ? jobs->size() : 0,
                               took.count(), jobs.ok() ? "" : ": " + jobs.status().message());
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
    // A poke (commands done) reads again at once, unless squeue is that slow.
    const bool slow = interval > opts_.poll_interval;
    cv_.wait_for(lk, jobs.ok() ? interval : backoff,
                 [&] { return stop_ || (poke_poller_ && !slow); });
    poke_poller_ = false;
  }
}

}  // namespace tiresias
