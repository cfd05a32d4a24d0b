// The scheduling core. Typed events in (submit, finish, cancel, time passes), actions with
// reasons out (start job J on GPUs X, preempt job K). It never reads a clock and never does
// I/O: every call carries `now`, and the same calls give the same actions, byte for byte.
// The simulator and the live daemon drive this same class.
//
// Same-time rule: a driver applies all events of one instant (finishes, then capacity
// changes, then cancels, then submissions in (submit, id) order) and then calls Schedule(now)
// once; Schedule first fires
// every timer due at or before `now` (demotions, promotions), then runs one pass.
//
// Ownership: owns the job table, cluster state, policies and timers. Not thread-safe; the
// daemon serialises calls.
#pragma once

#include <memory>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "core/action.h"
#include "core/cluster_state.h"
#include "core/flat_order.h"
#include "core/gang_order.h"
#include "core/job.h"
#include "core/ordering_policy.h"
#include "core/placement_policy.h"
#include "core/speed_model.h"
#include "core/tenants.h"

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
  // Keep each queue change (demotion, promotion) for TakeTransitions: drivers that show a
  // job's timeline turn on. Off, nothing is kept (the simulator's long replays).
  bool record_transitions = false;
  // Checkpoint-aware victim choice. Running jobs of the same priority class (equal SortKey.k0:
  // the same queue for dlas and gittins; for las/las2d/srtf/srsf k0 is the service or time
  // itself, so classes are singletons and nothing changes) are interchangeable as victims:
  // after the walk, a victim swaps places with a kept running job of its class and gang size
  // that would lose less work (Job::LossAt), and victims of a class give their GPUs back
  // least loss first. Off: every decision is the same as without checkpoints.
  bool checkpoint_aware = false;
  // The simulator's model of checkpoints: a preempted job loses the progress since its last
  // checkpoint (Job::LossAt; its packed work rolls back to what it had then), counted in
  // Job::lost. Its service (GPU-time used) is kept. Off: preemption loses no work.
  bool lose_work = false;
  // Bound-key tracking (gittins' BoundKey): how many passes, while it is off, before it is
  // tried again, and how many running jobs past their bounds (with a quarter of them) make a
  // pass a miss. Tests set small values to switch it on and off all the time.
  uint64_t bound_retry_passes = 1024;
  size_t bound_miss_jumps = 16;
};

// A VC's standing, for views (vcs, ls, /metrics, explain).
struct VcUsage {
  std::string name;
  int quota = 0;
  int running_gpus = 0, running_jobs = 0;
  int waiting_gpus = 0, waiting_jobs = 0;
  double decayed_gpu_hours = 0;  // fair share's memory (TenantConfig::half_life), else 0
  int borrowed() const { return running_gpus > quota ? running_gpus - quota : 0; }
};

// A job moved between queues by itself (a demotion while running, a promotion while
// waiting); queues are 0-based here and Q1.. for people.
struct Transition {
  JobId job;
  Time at = 0;
  int from_queue = 0;
  int to_queue = 0;
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
  int gpus_unavailable = 0;             // nodes down, or GPUs held outside the scheduler
  std::optional<Time> next_transition;  // promotion (waiting) or demotion (running) due
  std::vector<std::string> reasons;     // plain sentences
};

class Scheduler {
 public:
  Scheduler(const Topology& topo, std::unique_ptr<OrderingPolicy> policy,
            std::unique_ptr<PlacementPolicy> placement, SchedulerOptions opts = {},
            std::shared_ptr<const SpeedModel> speed = nullptr, TenantConfig tenants = {});

  // Accepts the job, or rejects it (recorded, state kRejected) when it can never fit;
  // InvalidArgument then carries the reason. A duplicate id is InvalidArgument too.
  Status Submit(const JobSpec& spec, Time now);
  // The job's work is complete (simulator) or its process exited (daemon). Also a waiting
  // job's (pending or held): the daemon's job that completed its work while it was being
  // stopped (it said so during its preemption grace), with the service it attained then.
  Status Finish(JobId id, Time now);
  Status Cancel(JobId id, Time now);
  // Drops a job that ended (finished, cancelled, rejected): from here on it is unknown (Find
  // gives null) and a later Submit reuses its slot. For drivers that keep what they need of
  // ended jobs themselves (the simulator's long replays: a million jobs need not stay in the
  // core); a live core keeps every job. Decisions are the same either way. FailedPrecondition
  // when the job has not ended.
  Status Forget(JobId id);
  // Whether a waiting job may be scheduled: false takes a pending job out of every order
  // (kHeld: held by its user, waiting for a dependency or under its array's limit; a running
  // job must be requeued first), true puts a held one back. Its accounting is kept; its
  // starvation clock (promote_knob) restarts when it is released.
  Status SetEligible(JobId id, bool eligible, Time now);
  // A running job stops and waits again without having finished, and without the core
  // deciding it: the user's requeue, or an attempt that failed and is retried (the simulator
  // replays a trace's attempts so: sim --attempts replay). Like a preemption it gives its GPUs
  // back and keeps the service and progress it attained (its queue does not restart); a later
  // start resumes it, paying the restore overhead. Not a preemption: counted in
  // Job::restarts. The next pass may start it again at once.
  Status Requeue(JobId id, Time now);
  // A running job makes progress from `t` (>= its start; may be after `now`). The daemon
  // uses it when a preempted process still holds the GPUs while it checkpoints: progress is
  // held until the holder's kill deadline, then set to the real launch time. Service and
  // queue timers count from `t`; the gap since the start is overhead.
  Status SetProgressStart(JobId id, Time t, Time now);
  // A running job completed a checkpoint at `at` (<= now): stopped now, it would lose only
  // the progress since then (Job::LossAt). A checkpoint from before its current run's progress
  // start is ignored (the run resumed from one). FailedPrecondition when it is not running.
  // Changes no order and triggers no pass: read at the next pass (checkpoint_aware) and at a
  // preemption (lose_work).
  Status Checkpointed(JobId id, Time at, Time now);
  // A running job's process stopped making progress at `last_alive` without the core deciding
  // it (it vanished while the daemon was down), and the driver relaunches it on the GPUs it
  // holds. The service attained up to `last_alive` (clamped to its progress start and `now`)
  // is kept; the time from then to `now` is overhead, not service; progress counts again from
  // `now`, until the driver sets the relaunch's real start with SetProgressStart.
  Status Interrupted(JobId id, Time last_alive, Time now);
  // Capacity: from `now` on, exactly the GPUs in `usable_mask` (bit i = GPU i) of `node` may
  // be used; bits beyond the node's GPUs are ignored. A node that is down has mask 0; GPUs
  // that something outside the scheduler holds are left out. Jobs running on GPUs that become
  // unusable are stopped (back to waiting with the service attained up to `now`; counted in
  // Job::evictions, not as preemptions) and returned in id order; GPUs that become usable are
  // free for the next pass, which re-walks every job (the budget changed). A job that fits the
  // cluster is never rejected because capacity is down: it waits for it to return.
  // `avoid_mask`: of the usable GPUs, those a driver would rather no job were placed on for a
  // while (a process it is stopping still runs there): every placement is sought without them
  // first, and on them only when there is none (that job then waits for them). They stay free
  // and in the budget: no job is preempted because of them. (A job that avoids them may take
  // GPUs a later job of the same pass needed, which then waits for them.) Not in the
  // preemptive pass's choice among victims' GPUs. Until the next call for the node.
  StatusOr<std::vector<JobId>> SetNodeAvailability(int node, uint64_t usable_mask, Time now,
                                                   uint64_t avoid_mask = 0);
  // The GPUs of `node` to avoid, from the last SetNodeAvailability.
  uint64_t avoid_mask(int node) const {
    return static_cast<size_t>(node) < avoid_.size() ? avoid_[static_cast<size_t>(node)] : 0;
  }
  // A job the core started whose progress has not begun (`now` before its progress start: its
  // driver waits to launch it) and that sits on GPUs to avoid or in `also_taken` (GPUs the
  // driver's other processes still hold, e.g. a preempted job's, free in the core or the
  // job's): moved to a packed slot of free GPUs (its own that are neither among them) that
  // avoids both, when there is one now and no waiting job ahead of it could use the free
  // GPUs (its start is in `out`, said so; the same start: Job::starts and its restore
  // unchanged); else nothing changes. True when moved. (The mask may name GPUs a job holds:
  // SetNodeAvailability.)
  StatusOr<bool> Relocate(JobId id, Time now, std::vector<Action>& out,
                          const std::vector<GpuId>& also_taken = {});
  // The mask that leaves `gpus` GPUs of `node` usable and stops as few jobs as possible: it
  // keeps the GPUs running jobs hold first, then free ones, then unusable ones, each lowest
  // index first. Deterministic: drivers that learn only a count (a node's usable GPUs) turn it
  // into a mask with it and journal the mask.
  uint64_t UsableMaskFor(int node, int gpus) const;
  // Fires due timers, then runs a scheduling pass if anything changed since the last one.
  std::vector<Action> Schedule(Time now);
  // The earliest pending timer, or kNever. Stale timers are dropped on the way.
  Time NextWakeup();
  // The queue changes since the last call, in order (SchedulerOptions::record_transitions).
  std::vector<Transition> TakeTransitions() { return std::exchange(transitions_, {}); }

  // An independent copy of this core, policies and their learned state included, for a
  // forward simulation of a live core (forecasts); the copy's decisions from here on are the
  // ones this core would make on the same inputs. FailedPrecondition when a policy cannot be
  // copied.
  // With `active_only`, jobs that ended are left out (a forecast needs only the rest; a live
  // core keeps every job it ever had).
  StatusOr<std::unique_ptr<Scheduler>> Clone(bool active_only = false) const;
  // A forecast's guess of a job's packed duration (JobSpec::duration), for a copy run forward.
  // Refused when the policy orders by durations (the guess would change its order).
  Status AssumeDuration(JobId id, Duration d);

  // Capacity hint for drivers that know how many jobs will come.
  void Reserve(size_t jobs) {
    jobs_.reserve(jobs);
    slot_of_.reserve(jobs);
  }
  const Job* Find(JobId id) const;
  // For tests: how often bound-key tracking, turned off, was tried again.
  uint64_t bound_retries() const { return bound_retries_; }
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
  // Waiting and running jobs per queue (index = queue, num_queues() entries); O(waiting +
  // running). For time series (the simulator's --out, the daemon's views).
  void CountByQueue(std::vector<int>& waiting, std::vector<int>& running) const;
  Explanation Explain(JobId id, Time now) const;
  // Whether Explain(id, now) would count any job ahead of it (waiting_ahead + running_ahead >
  // 0): O(1) where running jobs' keys do not drift (both orders are sorted), else O(running)
  // (their keys now: a pass may leave running jobs' stored keys stale where that decides
  // nothing). For lists of many pending jobs (the daemon's reason word), where Explain's
  // O(jobs) per job would make a list O(jobs^2).
  bool AnyAhead(JobId id, Time now) const;
  // Each VC's quota, usage and waiting work, in config order; empty with the tenant level off.
  // O(running + waiting).
  std::vector<VcUsage> VcUsages(Time now) const;
  const TenantConfig& tenants() const { return tenants_; }
  // VC `v`'s quota in GPUs (config order); nullopt with the tenant level off.
  std::optional<int> QuotaOf(size_t v) const {
    return v < vc_quota_.size() ? std::optional<int>(vc_quota_[v]) : std::nullopt;
  }
  // Replaces the tenants (a live daemon started with another tenants file): quotas are
  // resolved again, every job not ended is assigned its VC in the new config (its own VC, else
  // its user's, else default_vc) and decayed usage carries over by VC name. InvalidArgument
  // for quotas that do not fit; FailedPrecondition naming a job that no VC of `cfg` takes (then
  // nothing changes). The next pass walks every job.
  Status SetTenants(TenantConfig cfg, Time now);
  // FailedPrecondition naming the first job not ended that no VC of `cfg` takes. SetTenants
  // checks it with two VCs or more; with one (the tenant level off, nothing to replay
  // differently) a daemon checks it before a new tenants file applies: journals written
  // before that check replay as they were.
  Status EveryJobHasAVc(const TenantConfig& cfg) const;
  // Why the placement policy said the job can never be placed, or "".
  const std::string& NeverFitsReasonOf(const Job& j) const;

 private:
  Scheduler(const Scheduler& o, std::unique_ptr<OrderingPolicy> policy,
            std::unique_ptr<PlacementPolicy> placement, bool active_only);
  using WaitOrder = GangOrder;  // key -> slot in jobs_, with gang sizes
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
  // Re-keys the running jobs at positions [from, to) (those whose old and new keys are both
  // before `stale_below` keep their old ones) and notes where the next walk must start.
  void RekeyRunning(size_t from, size_t to, Time now, std::optional<SortKey> stale_below);
  // A job's key at `now`: a running job's computed afresh where running keys drift (the
  // stored one may be stale), else the stored one.
  SortKey KeyNow(const Job& j, Time now) const;
  // The key of W(m+1): the first waiting job that does not fit, together with the ones before
  // it, into the GPUs no running job holds (nullopt: every waiting job fits).
  std::optional<SortKey> FirstWaitingNotFitting() const;
  // Walking on from W(m+1) (`next`) in the stored order: the key of the first job, running or
  // waiting, at which the GPUs of every job so far exceed the cluster's usable GPUs, and the
  // waiting jobs' share of those before it (nullopt: every job fits). Where stored keys bound
  // the running jobs' keys from above, every job before it fits whatever the order; the
  // re-keying rules check that it still holds once keys changed (Overflows).
  struct BudgetCut {
    SortKey key;
    int64_t waiting_gpus = 0;
  };
  std::optional<BudgetCut> CutAfter(const SortKey& next) const;
  // Whether the running jobs now before the cut, with the waiting ones, hold more GPUs than
  // the cluster's usable ones (some moved before it when re-keyed).
  bool Overflows(const BudgetCut& cut) const;
  // Records KeyBoundUntil for the key just computed (running_keys_never_increase policies).
  void NoteKeyBound(uint32_t slot, Time now);
  // Queues the time until which the job's stored key bounds its key (kNever: none due).
  void QueueKeyBound(uint32_t slot, Time until);
  // Stores the policy's BoundKey for a running job and queues its time; returns the key (for
  // the caller to put into running_).
  SortKey SetBoundKey(uint32_t slot, Time now);
  // Gives the running jobs whose stored keys stopped bounding theirs the policy's BoundKey;
  // false when they were a quarter of the running jobs or more (a miss).
  bool RekeyJumped(Time now);
  // While tracking: RekeyJumped, and tracking off after most passes miss or where no rule
  // will `read` bounds; while off: tried again every bound_retry_passes passes that would
  // read them.
  void UpdateTracking(Time now, bool read);
  // Re-keys every running and waiting job (the policy learned) and re-walks them all.
  void RekeyAll(Time now);
  // Reference pass only: every key from scratch, both orders rebuilt, no walk_from_.
  void RebuildOrders(Time now);
  void RecordTieRanks(Time now);
  void NonPreemptivePass(Time now, std::vector<Action>& out);
  // The tenant level (tenant_pass.cc): the two-phase walks that replace the plain ones.
  void TenantWalk(Time now, std::vector<uint32_t>& victims, std::vector<uint32_t>& candidates,
                  std::vector<uint32_t>& kept);
  void TenantNonPreemptivePass(Time now, std::vector<Action>& out);
  // Whether a backfill start keeps the job's VC within its quota (always, when borrowing).
  bool TenantMayTake(const Job& j) const;
  // Fair share's memory: folds the decayed usage of every VC up to `now`.
  void AccrueUsage(Time now);
  // Per-VC running GPUs, kept by Start and Stop.
  void CountTenant(const Job& j, int sign, Time now);
  bool tenant_on() const { return !vc_quota_.empty(); }
  std::string TenantReason(const Job& j, Time now) const;
  // Why a borrower is preempted: its VC, holding `held` GPUs, is over its quota and owners
  // need the GPUs.
  std::string BorrowerReason(const Job& j, int held) const;
  // Sets the job's VC; why it is rejected (an unknown VC, a gang over a fixed quota), if so.
  std::optional<std::string> TenantAdmit(Job& j) const;
  void PreemptivePass(Time now, std::vector<Action>& out);
  // Places `slot` on free GPUs; true when started.
  bool TryStart(uint32_t slot, Time now, std::vector<Action>& out);
  // The placement policy's answer for `spec` on the free GPUs, sought first without the GPUs
  // to avoid (SetNodeAvailability): that one when it is a packed slot, else the answer on
  // every free GPU.
  PlacementResult Place(const JobSpec& spec);
  // The cluster state with `released` given back (if any), then the free GPUs to avoid and
  // those in `also` (by node, if any) taken.
  ClusterState AvoidingView(const Allocation* released = nullptr,
                            const std::vector<uint64_t>* also = nullptr) const;
  void NoteUnplaced(Job& j, const PlacementResult& r);
  void Backfill(Time now, std::vector<Action>& out);
  // checkpoint_aware: victims swap with kept running jobs of their class that lose less.
  void SwapVictims(Time now, std::vector<uint32_t>& victims, std::vector<uint32_t>& kept);
  void Start(uint32_t slot, Allocation alloc, Time now, std::vector<Action>& out);
  // Folds lazy accounting and moves the job back to waiting; gives its GPUs back unless the
  // caller already did.
  void Stop(uint32_t slot, Time now, bool release = true);
  // one_slice_'s entry for a slot, from its job.
  void NoteSlices(uint32_t slot);
  // A running job's slices, from one_slice_ where it has one.
  std::span<const NodeSlice> SlicesOf(uint32_t slot) const {
    const NodeSlice& one = one_slice_[slot];
    if (one.node >= 0) return {&one, 1};
    return jobs_[slot].alloc.slices;
  }
  void NoteWait(Job& j, WaitKind kind);
  int MinWaitingGpus() const { return waiting_.MinGpus(); }
  // With `free` GPUs no waiting job fits, so a walk may stop (never in the reference pass).
  bool NoneFits(int free) const {
    return !opts_.reference_pass && (free == 0 || free < MinWaitingGpus());
  }

  Topology topo_;
  ClusterState cluster_;
  std::vector<uint64_t> avoid_;  // by node: SetNodeAvailability's GPUs to avoid
  int avoided_ = 0;              // their number (0: placements as ever)
  std::unique_ptr<OrderingPolicy> policy_;
  std::unique_ptr<PlacementPolicy> placement_;
  SchedulerOptions opts_;
  std::shared_ptr<const SpeedModel> speed_;

  std::vector<Job> jobs_;
  // By slot, a running job's allocation when it is one slice (node -1: several, or not
  // running): a preemptive pass gives victims' GPUs back and takes them again from this small
  // table instead of reading the scattered jobs and their slices (SlicesOf).
  std::vector<NodeSlice> one_slice_;
  // Why a job can never be placed (NeverFits), by slot: rare, so kept off the Job.
  std::unordered_map<uint32_t, std::string> never_fits_;
  std::unordered_map<JobId, uint32_t> slot_of_;
  std::vector<uint32_t> free_slots_;  // of forgotten jobs (Forget), reused by Submit
  FlatOrder running_;
  WaitOrder waiting_;
  // The smallest key that changed since the last pass. Decisions before it repeat the last
  // pass's (running jobs kept, waiting jobs not selected), so the pass starts there.
  std::optional<SortKey> walk_from_;
  std::optional<SortKey> revisit_;  // collected during a pass, becomes walk_from_ after it
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  uint64_t timer_seq_ = 0;
  // (until, slot) of running jobs' bounds (KeyBoundUntil or BoundKey's): a min-heap
  // (std::push_heap with std::greater); an entry is stale when the job's key_until differs
  // (it stopped, or was re-keyed since), and stale ones are dropped when they pile up.
  std::vector<std::pair<Time, uint32_t>> jumps_;
  // The last budget cut taken (BoundKey's keep_before).
  std::optional<SortKey> last_cut_;
  // Bound keys pay when few running jobs pass their bounds between two passes; when most
  // passes find a quarter of them or more past theirs (a burst of jobs with equal service
  // that all climb together), the tracking is turned off (no bounds are queued; running jobs
  // are re-keyed under the stale-key rule, as policies without running_keys_never_increase
  // are) and tried again every SchedulerOptions::bound_retry_passes passes, every running job
  // then given a bound key. Either way the decisions are the same.
  bool track_jumps_ = false;  // set from the policy by the constructor
  int jump_misses_ = 0;
  uint64_t untracked_passes_ = 0;
  uint64_t bound_retries_ = 0;
  std::vector<uint32_t> jumped_;  // RekeyJumped's scratch
  // PreemptivePass's lists, kept with their capacity from pass to pass.
  struct PassScratch {
    std::vector<uint32_t> victims, candidates, kept, deferred;
    std::vector<std::optional<Allocation>> fallback;
    std::vector<NodeSlice> slices;  // the victims' slices an ask-all gives back
    void clear() {
      slices.clear();
      victims.clear();
      candidates.clear();
      kept.clear();
      deferred.clear();
      fallback.clear();
    }
  };
  PassScratch pass_scratch_;
  uint64_t pass_ = 0;
  int64_t tie_counter_ = 0;
  bool dirty_ = false;
  std::vector<Transition> transitions_;
  // Tenant level (empty when off): quota, running GPUs, decayed usage (GPU-ms) per VC.
  // Tenants (VCs with quotas): with two VCs or more the pass has two levels (tenant_pass.cc):
  // in each of the policy's queues (TenantConfig::quota_lead), jobs within their VC's quota
  // first, then, with borrowing, the rest on what is left, so an owner reclaims lent GPUs by
  // preemption. Validated by ResolveQuotas (engine/BuildCore).
  TenantConfig tenants_;
  std::vector<int> vc_quota_, vc_running_;
  std::vector<double> vc_usage_;
  Time usage_at_ = 0;
};

}  // namespace tiresias
