// SlurmExecutor after a restart of serve and at an attempt's end: which Slurm job and run an
// attempt recorded in the journal is (Adopt, FindLaunched), the end Slurm recorded for it
// (ReadExit; an earlier attempt's end never counts, slurm_batch.h OfRecordedRun; a run Slurm
// started by itself, not where the attempt was placed, is none of them: PlacedAsRecorded; nor is
// one Slurm requeued since the release: RequeuedSinceRelease, and the job gets a fresh Slurm
// job), and how Slurm's record of a job reads as an exit (ExitOf). See slurm_executor.h.
#include <fmt/format.h>
#include <signal.h>

#include "common/strings.h"
#include "exec/exit_file.h"
#include "exec/slurm_batch.h"
#include "exec/slurm_executor.h"

namespace tiresias {

bool SlurmExecutor::Adopt(JobId job, int attempt, const ProcessRef& p, const std::string& job_dir) {
  std::lock_guard lk(mu_);
  Job& j = Track(job, job_dir);
  j.spec.job = job;
  j.spec.job_dir = job_dir;
  const SlurmJob* s = Seen(p.pid);
  if (!s || !IsOurs(job, job_dir, *s)) return false;
  // The journal's Slurm job is the job's (ReadExit reads it next), unless a fresh one replaced
  // it: then it is cancelled, and a newer job carries the tag (Open chose that one).
  bool superseded = false;
  if (s->state == "CANCELLED") {
    for (auto it = seen_.upper_bound(s->id); it != seen_.end() && !superseded; ++it) {
      superseded = it->second.comment == Tag(job);
    }
  }
  if (!superseded) j.slurm_id = s->id;
  if (j.phase == Phase::kReleased && j.attempt == attempt) return true;
  const bool released = SlurmActive(s->state) || (s->state == "PENDING" && !s->held);
  if (!released) return false;
  const auto vars = ReadAttemptFile(job_dir);
  if (RecordedAttempt(vars) != attempt) {
    return false;  // Slurm runs another attempt than the one recorded: not this one
  }
  // Slurm requeued the run by itself while serve was away (a node failure) and runs it, or
  // will, again; or started it elsewhere: not that attempt's run. It is stopped; after a
  // requeue a fresh Slurm job runs the next attempt (the same one could be killed by the
  // failed node's stale terminate).
  const bool requeued = RequeuedSinceRelease(*s, vars);
  if (requeued || !PlacedAsRecorded(*s, vars)) {
    StopUnplaced(j, *s);
    if (requeued) Replace(j);
    return false;
  }
  j.attempt = attempt;
  j.phase = Phase::kReleased;
  j.placement =
      ParsePlacement(vars.count("TIRESIAS_PLACEMENT") ? vars.at("TIRESIAS_PLACEMENT") : "");
  j.master_port = static_cast<int>(
      ParseInt(vars.count("MASTER_PORT") ? vars.at("MASTER_PORT") : "").value_or(0));
  j.released_seq = 0;
  j.restart_base = s->restarts;
  j.seen_active = SlurmActive(s->state);
  j.stop_requested = false;
  j.kill_requested = vars.contains("TIRESIAS_KILLED");  // killed before serve stopped
  return true;
}

std::optional<ExitInfo> SlurmExecutor::ReadExit(JobId job, int attempt,
                                                const std::string& job_dir) {
  std::lock_guard lk(mu_);
  Job& j = Track(job, job_dir);
  const SlurmJob* s = Ours(j);
  if (!s || !SlurmEnded(s->state)) return std::nullopt;  // held or forgotten: vanished
  const auto vars = ReadAttemptFile(job_dir);
  if (vars.contains("TIRESIAS_ATTEMPT") && RecordedAttempt(vars) != attempt) return std::nullopt;
  if (!OfRecordedRun(vars, s->restarts)) return std::nullopt;  // an earlier attempt's
  Job probe = j;
  probe.attempt = attempt;
  probe.kill_requested = probe.kill_requested || vars.contains("TIRESIAS_KILLED");
  ExitInfo e = ExitOf(probe, s);
  const bool requeued = RequeuedSinceRelease(*s, vars);
  if (!PlacedAsRecorded(*s, vars)) {
    // A run Slurm started by itself, elsewhere, before this attempt's pin: not its end; the
    // attempt is lost and relaunched (keeping its service).
    e.lost = true;
    e.cancelled = false;
    e.reason = fmt::format("Slurm job {} ran by itself on {}, not where attempt {} was placed",
                           s->id, Join(s->nodes, ","), attempt);
  } else if (requeued && s->state != "CANCELLED" && !e.completed && e.exit_code != 0) {
    // Slurm requeued the run by itself (a node failure) and ran it again while serve was
    // away, and that run failed (a failed node's stale terminate kills it on its return):
    // lost, not the job's end.
    e.lost = true;
    e.reason = fmt::format(
        "Slurm job {} was requeued by Slurm ({} restarts, {} at the release) "
        "and its run then ended: {}",
        s->id, s->restarts, RecordedRestarts(vars).value_or(0), e.Describe());
  }
  if (requeued && e.lost) Replace(j);  // the next attempt in a fresh Slurm job
  if (probe.kill_requested && s->state == "CANCELLED" && !e.lost) {
    // Our kill, cut off before its requeue-hold: done now, as Poll does (until a snapshot
    // shows it, the CANCELLED is not read as someone's cancel).
    EnqueueHold(j, {.kind = OpKind::kRequeueHold, .job = job});
  }
  return e;
}

std::optional<ProcessRef> SlurmExecutor::FindLaunched(JobId job, int attempt,
                                                      const std::string& job_dir) {
  std::lock_guard lk(mu_);
  Job& j = Track(job, job_dir);
  const SlurmJob* s = Ours(j);
  const auto vars = ReadAttemptFile(job_dir);
  if (!s || RecordedAttempt(vars) != attempt) return std::nullopt;
  // Released (running, or about to): that attempt is Slurm's now. Ended: it ran and ended
  // (unless that end is an earlier attempt's).
  // Running or released where Slurm put it by itself (it requeued the job before that
  // attempt's pin): not that attempt.
  if (SlurmEnded(s->state) && !OfRecordedRun(vars, s->restarts)) return std::nullopt;
  if (SlurmActive(s->state) || (s->state == "PENDING" && !s->held)) {
    // As in Adopt: requeued by Slurm since, or started elsewhere, it is not that attempt's.
    const bool requeued = RequeuedSinceRelease(*s, vars);
    if (requeued || !PlacedAsRecorded(*s, vars)) {
      StopUnplaced(j, *s);
      if (requeued) Replace(j);
      return std::nullopt;
    }
  } else if (!SlurmEnded(s->state)) {
    return std::nullopt;
  }
  return ProcessRef{.pid = static_cast<int>(s->id), .start_ticks = attempt};
}

void SlurmExecutor::StopUnplaced(Job& j, const SlurmJob& s) {
  if (j.holds_queued > 0) return;  // one is on its way
  EnqueueHold(
      j,
      {.kind = SlurmActive(s.state) ? OpKind::kKill : OpKind::kHold, .job = j.id, .attempt = -1});
}

ExitInfo SlurmExecutor::ExitOf(const Job& j, const SlurmJob* s) const {
  ExitInfo e{.job = j.id, .attempt = j.attempt, .exit_code = -1, .signal = 0};
  if (!s) {
    e.reason = fmt::format("Slurm no longer knows job {}", j.slurm_id);
    e.lost = !j.stop_requested && !j.kill_requested;
    e.completed = DoneFileExists(j.job_dir);  // its work was done: its end, not a lost run
    return e;
  }
  const SlurmRunEnd end = RecordedEnd(*s);
  e.exit_code = end.exit_code;
  e.signal = end.signal;
  if (j.kill_requested && !e.known()) e.signal = SIGKILL;
  if (s->end_time > 0) e.ended_wall_ms = s->end_time * 1000;
  e.completed = DoneFileExists(j.job_dir);
  const bool stopped = j.stop_requested || j.kill_requested;
  if (s->state == "CANCELLED") {
    // Our stops only signal (the run then ends COMPLETED or FAILED); our kill (scancel
    // --signal=KILL) ends it CANCELLED. So a cancel during a stop's grace is someone's scancel.
    e.cancelled = !j.kill_requested;
    // (The job's message says "cancelled outside tiresias: " before it; it said it twice.)
    e.reason = fmt::format("Slurm job {} CANCELLED{}", s->id,
                           s->reason.empty() || s->reason == "None" ? "" : " (" + s->reason + ")");
  } else if (s->state == "NODE_FAIL" || s->state == "PREEMPTED" || s->state == "BOOT_FAIL") {
    // Lost, also in a stop's grace (an eviction from the node that failed: our signal's
    // checkpoint never came); after our kill it is that kill.
    e.lost = !stopped || (!j.kill_requested && s->state != "PREEMPTED");
    e.reason = fmt::format("Slurm job {} {} on {}", s->id, s->state, Join(s->nodes, ","));
  } else if (s->state == "TIMEOUT" && !stopped) {
    // Slurm's own time limit ended it (a --time of the submission, or one set since): the
    // job's timeout, not a failure by the SIGTERM Slurm sent (exit 143). After our stop,
    // that stop's end (the stop's SIGTERM and Slurm's look alike).
    e.timed_out = true;
    e.reason = fmt::format("Slurm job {} TIMEOUT{}", s->id,
                           s->reason.empty() || s->reason == "None" ? "" : " (" + s->reason + ")");
  } else if (s->state != "COMPLETED" && s->state != "FAILED") {
    e.reason = fmt::format("Slurm job {} {}{}", s->id, s->state,
                           s->reason.empty() || s->reason == "None" ? "" : " (" + s->reason + ")");
  }
  return e;
}

}  // namespace tiresias
