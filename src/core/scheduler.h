// The scheduling core. Typed events in (submit, finish, cancel, time passes), actions with
// reasons out (start job J on GPUs X, preempt job K). It never reads a clock and never does
// I/O: every call carries `now`, and the same calls give the same actions, byte for byte.
// The simulator and the live daemon drive this same class.
//
// Same-time rule: a driver applies all events of one instant (finishes, then cancels, then
// submissions in (submit, id) order) and then calls Schedule(now) once; Schedule first fires
// every timer due at or before `now` (demotions, promotions), then runs one pass.
//
// Ownership: owns the job table, cluster state, policies and timers. Not thread-safe; the
// daemon serialises calls.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "core/action.h"
#include "core/cluster_state.h"
#include "core/flat_order.h"
#include "core/job.h"
#include "core/ordering_policy.h"
#include "core/placement_policy.h"
#include "core/speed_model.h"

namespace tiresias {

struct SchedulerOptions {
  // Restore time charged when a preempted job resumes: it holds its GPUs but makes no
  // progress and attains no service during it.
  Duration restore_overhead = 0;
  // For tests: the from-scratch pass. Each pass re-keys every running and waiting job from
  // OrderingPolicy::Key, rebuilds both orders and walks every job from the start, with none
  // of the incremental shortcuts (walk_from_/revisit_, the smallest-gang cut-off, skipping a
  // pass nobody waits for, key_changes_while_running, k0_changes_only_at_transitions). The
  // decisions must be the same; src/policy/reference_pass_test.cc compares the two.
  bool reference_pass = false;
};

// The answer to "why is my job pending?".
struct Explanation {
  JobState state = JobState::kPending;
  std::string where;      // the policy's view: queue, index, attained service
  int rank = -1;          // 1-based position among waiting jobs, -1 when not waiting
  int waiting_ahead = 0;  // waiting jobs ahead of it
  int running_ahead = 0;  // running jobs ahead of it in the order
  // Who is ahead, best first (at most kMaxNamed of each).
  static constexpr size_t kMaxNamed = 10;
  std::vector<JobId> running_ahead_ids;
  std::vector<JobId> waiting_ahead_ids;
  int gpus_needed = 0;
  int gpus_free = 0;
  std::optional<Time> next_transition;  // promotion (waiting) or demotion (running) due
  std::vector<std::string> reasons;     // plain sentences
};

class Scheduler {
 public:
  Scheduler(const Topology& topo, std::unique_ptr<OrderingPolicy> policy,
            std::unique_ptr<PlacementPolicy> placement, SchedulerOptions opts = {},
            std::shared_ptr<const SpeedModel> speed = nullptr);

  // Accepts the job, or rejects it (recorded, state kRejected) when it can never fit;
  // InvalidArgument then carries the reason. A duplicate id is InvalidArgument too.
  Status Submit(const JobSpec& spec, Time now);
  // The job's work is complete (simulator) or its process exited (daemon).
  Status Finish(JobId id, Time now);
  Status Cancel(JobId id, Time now);
  // A running job's attempt ended without finishing the job (its process failed, and like
  // Philly we retry it): it gives its GPUs back and waits again, keeping the service and the
  // progress it attained (its queue does not restart); a later start resumes it, paying the
  // restore overhead. Not a preemption: counted in Job::restarts. The simulator calls it to
  // replay a trace's attempts (sim --attempts replay).
  Status Requeue(JobId id, Time now);
  // A running job makes progress from `t` (>= its start; may be after `now`). The daemon
  // uses it when a preempted process still holds the GPUs while it checkpoints: progress is
  // held until the holder's kill deadline, then set to the real launch time. Service and
  // queue timers count from `t`; the gap since the start is overhead.
  Status SetProgressStart(JobId id, Time t, Time now);
  // A running job's process stopped making progress at `last_alive` without the core deciding
  // it (it vanished while the daemon was down), and the driver relaunches it on the GPUs it
  // holds. The service attained up to `last_alive` (clamped to its progress start and `now`)
  // is kept; the time from then to `now` is overhead, not service; progress counts again from
  // `now`, until the driver sets the relaunch's real start with SetProgressStart.
  Status Interrupted(JobId id, Time last_alive, Time now);
  // Fires due timers, then runs a scheduling pass if anything changed since the last one.
  std::vector<Action> Schedule(Time now);
  // The earliest pending timer, or kNever. Stale timers are dropped on the way.
  Time NextWakeup();

  // Capacity hint for drivers that know how many jobs will come.
  void Reserve(size_t jobs) {
    jobs_.reserve(jobs);
    slot_of_.reserve(jobs);
  }
  const Job* Find(JobId id) const;
  const std::vector<Job>& jobs() const { return jobs_; }
  const ClusterState& cluster() const { return cluster_; }
  const Topology& topology() const { return topo_; }
  const OrderingPolicy& policy() const { return *policy_; }
  const PlacementPolicy& placement() const { return *placement_; }
  size_t num_waiting() const { return waiting_.size(); }
  // The first waiting job in policy order, or null.
  const Job* FirstWaiting() const {
    return waiting_.empty() ? nullptr : &jobs_[waiting_.begin()->second];
  }
  size_t num_running() const { return running_.size(); }
  uint64_t passes() const { return pass_; }
  // Jobs waiting in order, best first (for listings); O(waiting).
  std::vector<JobId> WaitingInOrder() const;
  Explanation Explain(JobId id, Time now) const;
  // Why the placement policy said the job can never be placed, or "".
  const std::string& NeverFitsReasonOf(const Job& j) const;

 private:
  using WaitOrder = std::map<SortKey, uint32_t>;  // key -> slot in jobs_
  struct Timer {
    Time at;
    uint64_t seq;
    uint32_t slot;
    uint64_t gen;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  // Notes that the order changed at `k`: the next pass re-walks from there.
  void Touch(const SortKey& k) {
    if (!walk_from_ || k < *walk_from_) walk_from_ = k;
  }
  void Revisit(const SortKey& k) {
    if (!revisit_ || k < *revisit_) revisit_ = k;
  }
  void Insert(uint32_t slot, Time now);
  void Erase(uint32_t slot);
  void ArmTimer(uint32_t slot, Time now);
  void FireTimers(Time now);
  void RefreshRunningKeys(Time now);
  // Re-keys every running and waiting job (the policy learned) and re-walks them all.
  void RekeyAll(Time now);
  // Reference pass only: every key from scratch, both orders rebuilt, no walk_from_.
  void RebuildOrders(Time now);
  void RecordTieRanks(Time now);
  void NonPreemptivePass(Time now, std::vector<Action>& out);
  void PreemptivePass(Time now, std::vector<Action>& out);
  // Places `slot` on free GPUs; true when started.
  bool TryStart(uint32_t slot, Time now, std::vector<Action>& out);
  void NoteUnplaced(Job& j, const PlacementResult& r);
  void Backfill(Time now, std::vector<Action>& out);
  void Start(uint32_t slot, Allocation alloc, Time now, std::vector<Action>& out);
  // Folds lazy accounting and moves the job back to waiting; gives its GPUs back unless the
  // caller already did.
  void Stop(uint32_t slot, Time now, bool release = true);
  void NoteWait(Job& j, WaitKind kind);
  int MinWaitingGpus() const { return waiting_gpus_.empty() ? 0 : waiting_gpus_.begin()->first; }
  // With `free` GPUs no waiting job fits, so a walk may stop (never in the reference pass).
  bool NoneFits(int free) const {
    return !opts_.reference_pass && (free == 0 || free < MinWaitingGpus());
  }
  void CountWaiting(int gpus, int delta);

  Topology topo_;
  ClusterState cluster_;
  std::unique_ptr<OrderingPolicy> policy_;
  std::unique_ptr<PlacementPolicy> placement_;
  SchedulerOptions opts_;
  std::shared_ptr<const SpeedModel> speed_;

  std::vector<Job> jobs_;
  // Why a job can never be placed (NeverFits), by slot: rare, so kept off the Job.
  std::unordered_map<uint32_t, std::string> never_fits_;
  std::unordered_map<JobId, uint32_t> slot_of_;
  FlatOrder running_;
  WaitOrder waiting_;
  // The smallest key that changed since the last pass. Decisions before it repeat the last
  // pass's (running jobs kept, waiting jobs not selected), so the pass starts there.
  std::optional<SortKey> walk_from_;
  std::optional<SortKey> revisit_;   // collected during a pass, becomes walk_from_ after it
  std::map<int, int> waiting_gpus_;  // GPU count -> number of waiting jobs of that size
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t timer_seq_ = 0;
  uint64_t pass_ = 0;
  int64_t tie_counter_ = 0;
  bool dirty_ = false;
};

}  // namespace tiresias
