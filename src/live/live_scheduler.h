// The live scheduler: the scheduling core driven by the real clock and real processes.
// Implemented in live_scheduler.cc (the loop), live_scheduler_recovery.cc (Open: replay and
// reconciliation) and live_scheduler_views.cc (what the API reads).
//
// Every call into the core is journalled in the Store before it is made (and before the
// request that caused it is acknowledged), so after a crash `Open` rebuilds the core by
// replaying the journal, then reconciles with the processes that survived: a job the core
// runs whose process lives is adopted, one whose process vanished is relaunched (resuming from
// its checkpoint), a process of a job the core no longer runs is stopped.
//
// Processes and GPUs: the core frees a preempted job's GPUs at once, but its process may take
// up to the grace period to checkpoint and exit. A start therefore waits ("starting") until
// every GPU it was given is free of live processes, and a job never runs two processes.
//
// Nodes: the cluster is ServeConfig::nodes (one local node by default; a Slurm partition's
// nodes with --executor slurm), the core's node i. A cluster executor reports capacity
// (nodes down, GPUs held outside tiresias: Executor::PollNodes); each change is journalled as
// a `capacity` input and given to the core (Scheduler::SetNodeAvailability), whose evictions
// are stopped like preemptions. Runs lost to a node failure are requeued and resume; jobs
// cancelled in the engine are cancelled.
//
// Thread-safe: one mutex serialises the API threads and the loop; `Step` is the loop body,
// called directly by tests with a virtual clock.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "common/tree_reaper.h"
#include "core/event_log.h"
#include "core/executor.h"
#include "core/scheduler.h"
#include "engine/forecast.h"
#include "live/live_metrics.h"
#include "live/submit_request.h"
#include "store/disk_reserve.h"
#include "store/job_record.h"
#include "store/store.h"

namespace tiresias {

// One node of the cluster: its name and how many GPUs it has.
struct NodeSpec {
  std::string name;
  int gpus = 0;
};

struct ServeConfig {
  std::string state_dir = ".";
  std::string policy = "dlas";
  std::vector<std::string> policy_opts;
  std::string placement = "consolidate";
  std::vector<std::string> placement_opts;
  // One entry per GPU of this machine (node 0): the value CUDA_VISIBLE_DEVICES uses for it,
  // and its name, for the views. The executor maps GPUs to devices itself.
  std::vector<std::string> gpu_devices;
  std::vector<std::string> gpu_names;
  // The cluster's nodes in the core's order; empty: this machine alone ("local", with
  // gpu_devices.size() GPUs). The topology is 1 switch x nodes x the largest GPU count; a node
  // with fewer GPUs has the rest permanently unusable.
  std::vector<NodeSpec> nodes;
  // "local" or the cluster engine ("slurm"): recorded with the journal, which replays only
  // into the same executor and nodes.
  std::string executor = "local";
  bool emulated = true;
  int preempt_signal = 15;  // SIGTERM
  Duration grace = Seconds(30);
  // Among running jobs of one priority class, stop those that would lose the least work
  // (SchedulerOptions::checkpoint_aware; only jobs that report checkpoints are moved).
  // nullopt: what the state recorded, on for a new one. Recorded with the journal.
  std::optional<bool> checkpoint_aware;
  // The tenants (VCs with quotas, core/tenants.h): nullopt keeps what the state has (none for
  // a new one); a config without VCs turns them off. A change is journalled (a `tenants`
  // event) and takes effect at once, for jobs already submitted too.
  std::optional<TenantConfig> tenants;
  std::string tenants_file;  // where they were read from (for the journal and messages)
  bool log_events = false;   // print each journal event (not ticks) to stdout
  // After a crash, how long to wait for the pid file of a launch that was in flight.
  int launch_probe_ms = 1000;
  // Room kept for the journal on the state directory's file system (store/disk_reserve.h);
  // null: none. Checked at every step; while low, new jobs are refused.
  std::shared_ptr<DiskReserve> disk;
  // A job's directory (its log, checkpoints, Slurm files) is removed this long after the job
  // ended, unless it asked to keep its checkpoints; 0: never. Its record stays (history).
  Duration keep_finished = 0;
};

// A --keep-finished span as the flag takes it: 7d, 12h, 90m, 45s.
std::string RetentionText(Duration d);

// Which jobs List returns, filtered and paged by the server.
struct ListFilter {
  std::set<LiveState> states;  // any of these (empty: any)
  bool active_only = false;    // without states: only jobs that have not ended
  std::string user;            // "" = anyone's
  std::string vc;              // "" = any VC's
  JobId array;                 // only the tasks of this array (JobId() = no filter)
  int64_t ended_after = -1;    // wall ms; -1 = no bound (history)
  int64_t ended_before = -1;
  size_t offset = 0;
  size_t limit = SIZE_MAX;
  bool newest = false;  // offset and limit count from the last match (history --limit N)
};

class LiveScheduler {
 public:
  using WallClock = std::function<int64_t()>;  // ms since the Unix epoch

  LiveScheduler(ServeConfig cfg, std::unique_ptr<Store> store, std::unique_ptr<Executor> executor,
                WallClock clock);
  // Builds the core, replays the journal, reconciles with surviving processes.
  Status Open();

  // InvalidArgument with the reason for a request that breaks a rule (Validate) or can
  // never run here.
  // An array submits one job per task; `ids` (if given) receives them all, the first being
  // the array's id.
  StatusOr<JobId> Submit(const SubmitRequest& req, std::vector<JobId>* ids = nullptr);
  Status Cancel(JobId id);
  // Several at once (an array): no scheduling pass runs between them, so a task's freed GPUs
  // never start another task being cancelled. One status per id.
  std::vector<Status> Cancel(const std::vector<JobId>& ids);
  // Holds a waiting job until released (hold = false). `by`, `admin`: who asks. An admin's
  // hold of another user's job is an admin hold (Slurm's): only an admin releases it.
  Status Hold(JobId id, bool hold, bool* changed = nullptr, const std::string& by = "",
              bool admin = false);
  // Stops a running job (checkpoint signal, grace) and puts it back to wait; `hold`: held
  // there until released (Slurm's requeuehold), in the same step (an admin hold as above).
  Status Requeue(JobId id, const std::string& by, bool hold = false, bool admin = false);
  // requeue --hold: a running job as Requeue(hold), a waiting one held (an array's tasks that
  // wait: all of it stops; only the running ones were, and the others took their place).
  Status RequeueHold(JobId id, const std::string& by, bool* changed = nullptr, bool admin = false);

  // Jobs in id order, filtered and paged; `total` (if given) gets how many matched.
  nlohmann::json List(const ListFilter& f = {}, size_t* total = nullptr);
  // "42" or an array task "42_7": the job ids it names (with `whole_array`, an array's id
  // names all its tasks).
  StatusOr<std::vector<JobId>> Resolve(const std::string& ref, bool whole_array);
  StatusOr<nlohmann::json> Get(JobId id);
  StatusOr<nlohmann::json> Explain(JobId id);
  // For explain of an array's id (`tasks`, its tasks' ids, not empty): the task to explain,
  // the first still waiting (else the first), and the array's part of the answer: its tasks
  // by state, the task explained and whether it waits.
  std::pair<JobId, nlohmann::json> ExplainArray(const std::vector<JobId>& tasks);
  // When the job is likely to start and end (p10/p50/p90, wall ms) and who is most in its way,
  // from forward simulations of the core (engine/forecast.h); null for a job that ended.
  StatusOr<nlohmann::json> Estimate(JobId id);
  // A forecast (as Estimate) for a job of `gpus` GPUs submitted now by `user` (to `vc`, or
  // the user's VC, as Submit), running `run` (unknown: drawn like the others') within
  // `time_limit` (if any); nothing is submitted. InvalidArgument if it could never fit, or
  // for a VC Submit would refuse.
  StatusOr<nlohmann::json> WhatIfSubmit(int gpus, std::optional<Duration> run,
                                        const std::string& user, const std::string& vc = "",
                                        std::optional<Duration> time_limit = std::nullopt);
  // The likely (p50) start of every job that has not started, wall ms; cached a few seconds.
  std::map<JobId, int64_t> StartEstimates();
  nlohmann::json Nodes();
  // Each queue (Q1..QK) with its jobs: running ones first, then the waiting ones in the order
  // they would get GPUs; attained GPU-time, time spent waiting, why it waits, next transition.
  nlohmann::json Queues();
  // The tenants: each VC with its quota (or weight), users, GPUs running and borrowed, waiting
  // work and decayed usage; borrowing and the half-life. {"vcs": []} without tenants.
  nlohmann::json Vcs();
  // Journal rows after `after`, oldest first, at most `limit`; with `latest`, the last
  // `limit` ones; with `job`, its rows (and the `jobs` - 1 ids after it: an array's tasks).
  StatusOr<nlohmann::json> Events(int64_t after, int limit, std::optional<JobId> job = std::nullopt,
                                  bool latest = false, int64_t jobs = 1);
  // Where a reader of a job's log is: `offset` bytes into the file whose identity (inode and
  // birth time, opaque to the reader) is `file` (0: the log as it is now).
  struct LogCursor {
    int64_t offset = 0;
    uint64_t file = 0;
    int64_t end = 0;  // (in `next`) the size of that file when it was read
  };
  // Up to `max` bytes of the job's log from `at`; sets `next` to the cursor after them. A log
  // rotated since (`<log>.1`) is read to its end first. From the job's stdout, or its stderr
  // (the same file unless --error was given); with tail_lines, the last lines instead (0:
  // none, the cursor at the end, as `tail -n 0`).
  StatusOr<std::string> Logs(JobId id, LogCursor at, size_t max, LogCursor& next,
                             bool stderr_stream = false,
                             std::optional<size_t> tail_lines = std::nullopt);
  // What /metrics exposes, with the gauges set from the current state.
  std::string MetricsText();
  // What an operator should know now (e.g. the state's disk is nearly full), as of the last
  // step; empty if nothing. Without the state's path (/v1/health shows it to anyone).
  std::vector<std::string> Warnings();
  // The cluster over time (busy GPUs, waiting jobs per queue, preemptions), for the dashboard.
  nlohmann::json Stats(int64_t after_wall_ms);
  LiveMetrics& metrics() { return metrics_; }
  std::string JobDir(JobId id) const;
  std::string JobsDir() const;
  const ServeConfig& config() const { return cfg_; }

  // One round of the loop: collect exits, run the core if anything changed or a timer is
  // due, launch what can start, enforce grace periods. Returns the next wall time (ms) at
  // which something is due without outside events (kNever if none).
  int64_t Step();
  // Runs Step until `stop` is set; Submit/Cancel wake it early.
  void Run(const std::atomic<bool>& stop, int poll_ms = 20);
  void Wake();

 private:
  struct Proc {
    ProcessRef ref;
    int attempt = 0;
    std::vector<GpuId> gpus;
    bool stopping = false;
    Time kill_at = kNever;  // when SIGKILL is due (kNever: not stopping, or already sent)
    bool killed = false;    // SIGKILL sent
    Time gone_by = kNever;  // killed: when we expect it gone (pinned, see ExpectedRelease)
    // What its run would lose, as of when it was told to stop (GPU-ms since its last reported
    // checkpoint or its start): counted as lost unless it exits by itself after the signal.
    Service loss = 0;
    bool at_checkpoint = false;  // stopped at once at a fresh checkpoint (stop_at_checkpoint)
    // (Whether a preemption or an eviction told it to stop: JobRecord::stop_preempted.)
  };
  // Journal and state writes in the loop must not fail silently: the core has already moved
  // on, so a lost write would make replay diverge. Crash-only: abort, and the next serve
  // replays what was committed.
  void MustOk(const Status& s);
  // Whether a stopping job is in its time limit's grace (timing_out is not stored): the core
  // ended its run at the limit while its record has not ended (a preempted job's run the core
  // stopped, or started again elsewhere, `starting`, is not ended).
  bool InTimeLimitGrace(const JobRecord& rec) const;
  // What the run of `id`'s process loses if it is killed rather than checkpointing: its
  // progress since its last checkpoint when the core stopped it (Job::stop_loss: the core may
  // have started the next run since, in the same step or before a crash, whose replay has
  // it). (For a run past its time limit, unused: its stop is its end.)
  Service LossOfStop(JobId id) const;
  // Stops a preempted (or evicted) job's process: at once when it opted in and its last
  // reported checkpoint is recent enough (JobRecord::stop_at_checkpoint), else StopProcess.
  void PreemptProcess(JobId id, Time now);
  // Feeds the core the checkpoints running jobs reported since the last step (journaled).
  void PollCheckpoints(Time now);
  // Launched runs the engine has not started (Executor::NotStarted): no progress, service or
  // demotion while they wait, pinned as a launch the engine cannot take yet (for at most
  // kEngineWaitPinMaxMs since the core started it).
  void PinEngineWaits(Time now, std::vector<JobId>& changed);
  // A running job back to waiting in the core (journalled by the caller), its process told to
  // stop when it was launched (Requeue, SyncEngineHolds).
  void RequeueInCore(JobId id, Time now, bool launched);
  // Jobs an admin holds in the engine (Executor::EngineHolds) are held here too (a started one
  // requeued and held: the engine does not run it), and released once that hold is gone.
  void SyncEngineHolds(Time now, std::vector<JobId>& changed);
  // What holds a job held in the engine, and how to release it there (the engine's words).
  std::string EngineHoldText(const JobRecord& r) const;
  // Note() from the loop: aborts on failure (see MustOk).
  void Journal(const Event& e);
  // Replays one journal input into the core.
  Status Replay(const EventRow& row);

  Time Now();
  JobSpec SpecOf(const JobRecord& r) const;
  // Sets rec.vc from the request's VC (or the user's, or the default) under the core's
  // tenants; InvalidArgument / PermissionDenied naming field 'vc' otherwise.
  // Open: the configured tenants, when they differ from the journal's, from `now` on.
  Status ApplyTenants(Time now);
  Status ResolveVc(const std::string& requested, JobRecord& rec) const;
  // Appends `e` to the journal (in the caller's transaction) and, with log_events, prints it.
  Status Note(const Event& e);
  // A request's transaction committed: an error only when its COMMIT failed (then nothing of
  // it is on disk); a head-file failure after it is warned of, and the request goes on.
  Status Committed(Store::Txn& txn);
  void HandleExit(const ExitInfo& e, Time now, std::vector<JobId>& changed);
  // A stopped job (preempted, requeued, past its time limit) whose process exited 0 with its
  // done file, or before it was told to stop (`evidence` says which): it finished, wherever
  // the core has it now (waiting, or started again).
  void FinishCompleted(JobRecord& rec, const std::string& how, bool preempted, Time now,
                       const std::string& evidence);
  // A job that finished: its checkpoint directory is removed, unless it asked to keep it
  // (--keep-checkpoints); a failure is a warning and a note in its message.
  void DropCheckpoints(JobRecord& rec);
  // A job cancelled in the cluster engine (scancel): cancelled here too, with the reason.
  void CancelledOutside(JobId id, const std::string& why, Time now, std::vector<JobId>& changed);
  // The executor's node reports: capacity changes for the core (journalled), evictions.
  void ApplyNodes(const std::vector<NodeReport>& nodes, Time now, std::vector<JobId>& changed,
                  std::vector<JobId>& stop);
  // Has the core avoid the GPUs the stopping process of a run it ended (cancelled, past its
  // time limit) still holds, and no longer those whose process is gone
  // (live_scheduler_capacity.cc).
  void SyncStoppingGpus(Time now, std::vector<JobId>& changed, std::vector<JobId>& stop);
  // Asks the core to move the jobs waiting to launch on such GPUs when GPUs elsewhere freed.
  void RelocateParked(Time now, std::vector<JobId>& changed);
  // What a parked job could use when it was last looked at (per node: the GPUs free for it,
  // then those it holds that nothing else holds; in memory: a restart asks again at most
  // once).
  std::map<JobId, std::vector<uint64_t>> relocate_asked_;
  // The GPUs free now: free in the core and held by no process (one stopping, of a job
  // cancelled, past its limit, preempted or requeued): samples, /metrics, explain.
  int FreeGpusNow() const;
  // Sets `node`'s usable and reserved GPUs (journalled, applied to the core); the jobs the
  // core stops on GPUs that become unusable are evicted.
  void SetCapacity(int node, uint64_t usable, uint64_t reserved, const std::string& why, Time now,
                   std::vector<JobId>& changed, std::vector<JobId>& stop);
  // A forecast's copy of the core: GPUs avoided for stopping processes are not (they are
  // within their grace).
  static void RestoreStoppingGpus(Scheduler& copy, Time now);
  // The nodes of the cluster (cfg_.nodes, or the one local node).
  std::vector<NodeSpec> ClusterNodes() const;
  // The names of the nodes these GPUs are on, each once, in order.
  std::vector<std::string> NodeNames(const std::vector<GpuId>& gpus) const;
  // How users name a job (RefOf: ARRAY_INDEX for an array's task; the id if unknown).
  std::string JobRefOf(JobId id) const;
  std::vector<std::string> RefsOf(const std::vector<JobId>& ids) const;
  // Cancel with mu_ held, all of them in one transaction (a status per id: refused ones are
  // left out, and a failed write cancels none); the caller wakes the loop.
  std::vector<Status> CancelLocked(const std::vector<JobId>& ids);
  // Tells the executor about jobs that ended and have nothing left running.
  void RetireEnded(const std::vector<JobId>& ids);
  // What the executor needs to prepare a job (no GPUs yet).
  LaunchSpec PrepareSpec(const JobRecord& r) const;
  void ApplyAction(const Action& a, Time now, std::vector<JobId>& changed);
  void LaunchReady(Time now);
  // True while a live process holds one of `gpus`, or `id`'s previous attempt still runs.
  bool HeldBack(const std::vector<GpuId>& gpus, JobId id) const;
  // When those holders are expected gone: their kill deadlines, or a second after SIGKILL.
  Time ExpectedRelease(const std::vector<GpuId>& gpus, JobId id, Time now) const;
  // How much longer a holder that is overdue (killed, past its second) is expected to take.
  static constexpr Duration kOverdueMs = 1000;
  // The farthest ahead such a holder's wait is pinned at once (LaunchReady doubles the pin
  // while it lingers, up to this: one drain event an hour at most after the first hour).
  static constexpr Duration kOverduePinMaxMs = 3'600'000;
  // How far ahead the progress of a start the engine cannot take yet is pinned, again and
  // again while it waits (LaunchReady). Any distance is exact (the launch sets the real
  // start); a longer one journals fewer events.
  static constexpr Duration kEngineWaitPinMs = 10'000;
  // For how long after its launch a run the engine has not started yet counts as starting
  // (PinEngineWaits pins it only after that).
  static constexpr Duration kEngineStartGraceMs = 5'000;
  // For how long after its start a job waiting for the engine is pinned at most.
  static constexpr Duration kEngineWaitPinMaxMs = 120'000;
  // JobRecord::start_ticks while a launch is in flight (committed before the fork).
  static constexpr int64_t kLaunchInFlight = -1;
  // Tells a process to stop (`sig`, then SIGKILL after the grace) and records when
  // (JobRecord::stop_sent); one told so before a restart is not signalled again, and keeps
  // its deadline.
  void StopProcess(JobId id, Time now, int sig);
  std::map<JobId, std::string> engine_holds_;  // the engine's last word (SyncEngineHolds)
  std::set<JobId> unsaved_;  // records changed after a step's commit: saved by the next
  Status Reconcile(Time now);
  Status SaveRows(const std::vector<JobId>& ids);
  nlohmann::json ToJson(const JobRecord& r, Time now) const;
  // The state people see (ls, show, explain, a state filter, metrics): the record's, but
  // `starting` for a run launched that the engine has not started (Executor::NotStarted) past
  // its first kEngineStartGraceMs, as PinEngineWaits pins it.
  LiveState ShownState(const JobRecord& r, Time now) const;
  // The VC a job is scheduled in now: for a job that has not ended, the core's (a change of
  // tenants moves a job whose VC is gone to its user's or the default; none without tenants);
  // for one that ended, the one it was submitted to. (JobRecord::vc stays as submitted: the
  // journal's replay submits it so.)
  std::string VcOf(const JobRecord& r) const;
  nlohmann::json ExplainLocked(const JobRecord& r, Time now) const;
  // Where the job's stdout (or stderr) goes: its log, or --output/--error resolved.
  std::string OutputPath(const JobRecord& r, bool stderr_stream) const;
  // Why a waiting job waits, in one word as squeue says it: Priority, Resources, Dependency,
  // Held, JobArrayTaskLimit, Starting, Preempted, TimeLimit; "" when it does not wait.
  std::string ReasonWord(const JobRecord& r, const Job& cj, Time now) const;
  void Warn(const std::string& m);
  // Every end of a job goes through here: its record says so (Ended), and the next step
  // settles what the end changes (its array's slot, its dependents) and /metrics counts it.
  void EndRecord(JobRecord& rec, LiveState state, Time now, std::string message);
  // The fields of `rec` an end sets (as stored): for a row written before EndRecord.
  static void Ended(JobRecord& rec, LiveState state, Time now, std::string message);
  // Why a waiting job may not run now ("dependency", "held"; "" when it may); `never` (if
  // given) is set when a dependency can never be met.
  std::string WhyIneligible(const JobRecord& rec, std::string* never) const;
  // The record `d` names (a job, an array's first task, or ID_INDEX's task); null if none.
  const JobRecord* DependedOn(const Dependency& d) const;
  // For a `singleton` dependency: the first job submitted before `rec` with its name and user
  // that has not ended (null if none).
  const JobRecord* SingletonBlocker(const JobRecord& rec) const;
  // Why the core does not schedule `r` (its user's hold, its dependency, its array's limit),
  // for people; "" when it is not held back.
  std::string HeldReason(const JobRecord& r) const;
  // Keeps the core's eligibility in step with holds, dependencies and array limits
  // (journalled); cancels jobs whose dependencies can never be met.
  void UpdateEligibility(Time now, std::vector<JobId>& changed);
  // Stops jobs past their time limit; returns when the next one is due.
  Time EnforceTimeLimits(Time now, std::vector<JobId>& changed);
  // Ends `rec` timed out; `engines`: at the engine's own limit (Slurm's TIMEOUT), not tiresias's.
  void EndAsTimeout(JobRecord& rec, Time now, const std::string& how, bool engines = false);
  void SampleCluster(Time now);
  int FragmentedGpus() const;
  static double SecondsSince(std::chrono::steady_clock::time_point t);

  ServeConfig cfg_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Executor> executor_;
  WallClock clock_;
  std::unique_ptr<Scheduler> sched_;
  LiveMetrics metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;

  std::map<JobId, JobRecord> records_;  // every job ever submitted here (history)
  // The records of the jobs that have not ended, in id order (pointers into records_, whose
  // nodes never move; EndRecord, through which every end goes, takes a job out): what the
  // loop walks at each step, so that a step costs O(open jobs), not O(every job ever run).
  std::map<JobId, JobRecord*> open_;
  std::map<LiveState, int64_t> ended_count_;  // records that ended, by state (/metrics)
  // open_'s ids by (user, name): a `singleton` dependency's blocker in O(log n).
  std::map<std::pair<std::string, std::string>, std::set<JobId>> open_names_;
  int64_t total_preemptions_ = 0;  // JobRecord::preemptions summed (the samples)
  // Adds a record (Submit, Open's load) to records_ and to open_ or ended_count_.
  JobRecord& AddRecord(JobRecord rec);
  // open_ as a list: the caller may end the jobs it walks.
  std::vector<JobRecord*> OpenRecords() const;
  std::map<JobId, Proc> procs_;                    // live processes (incl. stopping ones)
  std::map<JobId, std::vector<GpuId>> to_launch_;  // core started it; process not yet up
  std::map<GpuId, JobId> gpu_owner_;               // the live process on each busy GPU
  std::vector<NodeReport> node_reports_;           // the executor's latest, for the views
  Time last_now_ = 0;
  Time last_replayed_ = 0;  // the journal's last time, after Open's replay
  bool dirty_ = false;      // core inputs applied since the last Schedule
  // A forecast targeting `id` (with `extra` added to the copies first), as explain's JSON;
  // `lk` holds mu_ and is released while the copies run.
  StatusOr<nlohmann::json> ForecastFor(std::unique_lock<std::mutex>& lk, JobId id,
                                       std::optional<JobSpec> extra,
                                       std::optional<Duration> extra_limit = std::nullopt);
  // The forecasts' options as the daemon runs them: its margins, the time limits of the jobs
  // not ended (ForecastOptions::time_limits) and its grace.
  ForecastOptions OptionsNow() const;
  // PrepareForecast on the core now, the copy's avoided GPUs freed (RestoreStoppingGpus).
  StatusOr<ForecastInput> PrepareNow(const ForecastOptions& o, Time now) const;
  // The forecasts' margins, adapted from how the start forecasts made so far (the first of
  // each job that had not started) turned out (engine/forecast.h MarginTracker): from
  // kForecastMargin on a new state directory, kept in meta kMarginsKey across restarts (with
  // the forecasts still waiting for their outcome).
  MarginTracker margins_;
  static constexpr const char* kMarginsKey = "forecast_margins";
  // The grace of the last daemon of a build before schema 7 (meta kGraceKey, which those
  // wrote): the deadline of a stop it began and kept without one (JobRecord::stop_deadline).
  static constexpr const char* kGraceKey = "grace_ms";
  Duration grace_before_ = 0;
  std::string margins_saved_;  // the value last written to kMarginsKey
  // Writes the margins' state to the store when it changed; with mu_ held.
  void SaveMargins();
  // Resolves the forecasts the core now knows the outcome of; with mu_ held.
  void ResolveForecasts(Time now);
  // Records `range` as the first start forecast of `id` if it has not started; with mu_ held.
  void RecordForecast(JobId id, const std::array<std::optional<Time>, 3>& range);
  std::optional<Time> estimates_at_;  // when StartEstimates last ran (core time)
  std::map<JobId, int64_t> estimates_;
  bool eligibility_dirty_ = true;  // holds, dependencies or array slots may have changed
  Time time_limit_due_ = kNever;
  Time removal_due_ = kNever;  // when the next ended job's directory is due for removal
  // Liveness: every kAliveStampMs while processes run, the loop records (meta kAliveKey) the
  // core time at which it last saw them all alive. After a crash, a job whose processes
  // vanished keeps the service it attained up to then (Scheduler::Interrupted).
  static constexpr const char* kAliveKey = "alive_ms";
  static constexpr Duration kAliveStampMs = 1000;
  // How soon a step paused by a full disk (DiskReserve::full) or a journal locked by another
  // process looks again.
  static constexpr Duration kPausedRetryMs = 500;
  // Why the last step could not begin its transaction (a warning, without the state's path);
  // empty when it could.
  std::string journal_blocked_;
  // A step was paused since the last one that ran (from pause_began_): the next that runs
  // drains the jobs still waiting to launch (DrainWaitingToNow).
  bool paused_ = false;
  Time pause_began_ = 0;
  // Journals a drain to `now` (`why`) for each job still to launch whose progress start was
  // pinned to `pinned_from` or later and has passed: it did not run meanwhile. (One whose
  // pin had lapsed before, a wait for the engine past kEngineWaitPinMaxMs, counts service.)
  void DrainWaitingToNow(Time now, Time pinned_from, const std::string& why);
  // A step that cannot journal: only grace deadlines are enforced; when to try again (wall).
  int64_t Paused(Time now);
  // SIGKILL to every stopping process past its grace deadline.
  void KillOverdue(Time now);
  // Warnings() as of now (called by Step).
  void PublishWarnings();
  std::mutex warnings_mu_;
  std::vector<std::string> warnings_;
  // Retention (ServeConfig::keep_finished, live_scheduler_retention.cc): the ended jobs whose
  // directories may still exist, by end time; at most kRemovedPerStep a step are renamed to
  // `.removed-<id>` and removed by reaper_, off the loop.
  std::set<std::pair<Time, JobId>> ended_dirs_;
  static constexpr size_t kRemovedPerStep = 64;
  static constexpr const char* kRemovedPrefix = ".removed-";
  std::unique_ptr<TreeReaper> reaper_;
  // Starts reaper_ with keep_finished, or for what an earlier serve left renamed (removed
  // also when retention is off now).
  void StartRetention();
  // Adds `id` to ended_dirs_ if it ended, has no process left and its directory goes.
  void NoteEndedDir(JobId id);
  // Removes the directories due by `now` (journalled: `cleanup`); when the next is due. While
  // paused (`journal_now` false: the disk full or the journal locked) they are removed all the
  // same, since that is what frees room, and their rows wait in unjournalled_ for the next
  // step that can write (a crash before it loses only those narrative rows).
  Time RemoveEndedDirs(Time now, bool journal_now = true);
  std::vector<Event> unjournalled_;
  // While paused (a full disk, a locked journal) and when the loop stops: unjournalled_ and
  // the rows of unsaved_ written at once if a transaction of its own can (it often can: the
  // reserve was released), else kept.
  void FlushOutsideStep();
  // Why a job's own log cannot be read: its directory was removed ("" if not).
  std::string Removed(const JobRecord& r) const;
  Time alive_stamped_ = 0;  // when the stamp was last written
  Time last_alive_ = 0;     // after Open: the previous daemon's last moment of knowledge
};

}  // namespace tiresias
