// A job as the core sees it: what was asked (JobSpec) and what has happened to it (Job).
// Attained service is computed lazily from the current run, so a running job needs no
// per-tick updates. Jobs are owned by the Scheduler's job table; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/time.h"
#include "core/allocation.h"

namespace tiresias {

struct JobSpec {
  JobId id;
  int gpus = 1;
  Time submit = 0;
  std::string name;
  std::string user;
  std::string vc;                    // virtual cluster (tenant group, queue); "" = none
  std::string model;                 // "" = unknown model
  std::optional<Duration> duration;  // packed-placement run time; only oracle policies read it
  // Traces that record restarts (Philly's attempts): the packed run time of each attempt, in
  // order, summing to `duration`; every attempt but the last ended without finishing the job.
  // The simulator replays them when asked (sim --attempts replay). Empty = one attempt.
  std::vector<Duration> attempts;
};

// kHeld: waiting but not eligible (held by its user, a dependency not met yet, its array's
// concurrency limit): out of every order, its accounting kept.
enum class JobState : uint8_t { kPending, kRunning, kFinished, kCancelled, kRejected, kHeld };
const char* ToString(JobState s);

// The sort key a policy gives a job. Compared field by field; submit time and id break ties,
// so every order is total and deterministic.
struct SortKey {
  int64_t k0 = 0;
  double k1 = 0;
  int64_t k2 = 0;
  Time submit = 0;
  JobId id;
  auto operator<=>(const SortKey&) const = default;
};

// Why a waiting job did not start in the last pass.
enum class WaitKind {
  // Fewer GPUs were left than it needs after the jobs ahead of it (the pass stopped before
  // it or passed over it; it does not visit jobs that cannot fit).
  kNotConsidered,
  kNoSlot,     // enough GPUs in count, but the placement policy found no slot
  kOverQuota,  // its VC has used its quota and no GPUs were left to lend (tenants)
};

struct Job {
  JobSpec spec;
  // The 4-byte fields sit together (no padding).
  JobState state = JobState::kPending;
  WaitKind wait = WaitKind::kNotConsidered;  // as of the last pass that reached it
  int32_t tenant = -1;                       // index of its VC (CoreConfig::tenants)

  // Accounting up to the start of the current run (or the last stop when not running).
  Duration executed = 0;   // ms of real progress-time (restore excluded); service = x gpus
  Duration work_done = 0;  // progress in packed-placement ms (= executed at full speed)
  // Current run, when running.
  Time run_start = 0;       // GPUs held from here
  Time progress_start = 0;  // progress from here (run_start + restore overhead)
  double rate = 1.0;        // speed of the current placement relative to packed
  Allocation alloc;

  Time first_start = -1;
  Time end = -1;
  Time last_stop = 0;  // when it last stopped running (or was submitted)
  int preemptions = 0;
  // Runs that ended without finishing the job and without the core deciding it
  // (Scheduler::Requeue: the user's requeue, or a trace's failed attempt replayed).
  int restarts = 0;
  int evictions = 0;  // stopped because its GPUs became unavailable (SetNodeAvailability)
  int starts = 0;
  // Queue discipline (dlas, gittins). Service counts from q_base (attained when last
  // entering Q1), so a promoted job starts its climb afresh.
  int queue = 0;
  int promotions = 0;
  Service q_base = 0;
  Duration overhead = 0;  // total restore time charged, ms
  // Checkpoints (Scheduler::Checkpointed): when the last one reported was complete, -1 =
  // none reported. A run resumes from a checkpoint, so the work a running job would lose if
  // stopped now is the progress since max(ckpt_at, progress_start) (LossAt).
  Time ckpt_at = -1;
  Service lost = 0;  // GPU-ms of progress lost to preemptions (SchedulerOptions::lose_work)
  // RunLossAt when a run that made progress last stopped: what that run loses if a driver's
  // process of it is killed rather than checkpointing (the core may have started, and even
  // stopped, runs that never made progress since).
  Service stop_loss = 0;
  Duration held = 0;  // total time holding GPUs (runs incl. restore), ms

  // Scheduler bookkeeping.
  SortKey key;
  int64_t tie_rank = 0;  // position in the previous pass's order (stable-tie policies)
  uint64_t timer_gen = 0;
  // Until when `key` bounds a running job's key (OrderingPolicy::KeyBoundUntil for an exact
  // key, or BoundKey's until; kNever otherwise): until then `key` is an upper bound of the
  // job's key now.
  Time key_until = kNever;
  // A policy's memo for Key() (gittins: where the job's service last fell in its history), so
  // that re-keying running jobs at every pass is cheap. Any value gives the same key.
  mutable uint64_t key_hint = 0;

  int gpus() const { return spec.gpus; }
  bool running() const { return state == JobState::kRunning; }
  // Finished, cancelled or rejected: it will never run again.
  bool ended() const {
    return state == JobState::kFinished || state == JobState::kCancelled ||
           state == JobState::kRejected;
  }
  // Lazy values at time `now` (>= the last event applied to this job).
  Duration ExecutedAt(Time now) const;
  Service AttainedAt(Time now) const { return ExecutedAt(now) * spec.gpus; }
  Duration WorkDoneAt(Time now) const;
  Service QueueServiceAt(Time now) const { return AttainedAt(now) - q_base; }
  // When a running job's attained service reaches `service` (now, if it has), counting from
  // `now` or from its progress start when it is still restoring.
  Time WhenAttains(Service service, Time now) const {
    return std::max(now, progress_start) +
           CeilDiv(std::max<Service>(service - AttainedAt(now), 0), spec.gpus);
  }
  // When a running job with a known duration completes at its current placement's rate
  // (its remaining packed work from its progress start); nullopt otherwise.
  std::optional<Time> ProjectedEnd() const;
  // When a running job will have done `work` ms of packed work (the end of a replayed
  // attempt: the simulator's --attempts replay), at its current rate; nullopt when not running.
  std::optional<Time> ProjectedTimeOfWork(Duration work) const;
  // GPU-ms of progress a running job would lose if stopped at `now`: the time since its last
  // checkpoint (or since its run's progress start, whichever is later) x its GPUs; 0 when not
  // running.
  Service LossAt(Time now) const;
  // The same for the job's current or last run whatever its state (a driver asks just after
  // the core stopped it).
  Service RunLossAt(Time now) const;
  // Oracle remaining packed time; nullopt without a known duration.
  std::optional<Duration> RemainingAt(Time now) const;
};

}  // namespace tiresias
