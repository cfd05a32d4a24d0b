// The trace-driven simulator: a driver that feeds a job list to the scheduling core on a
// simulated clock and plays the executor (completion times from the speed model). No
// scheduling logic lives here: every decision is the core's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "core/data_source.h"
#include "core/event_log.h"
#include "core/job.h"
#include "core/speed_model.h"
#include "core/tenants.h"
#include "core/topology.h"
#include "engine/forecast.h"
#include "sim/job_table.h"
#include "trace/capacity_reader.h"

namespace tiresias {

// A realistic default restore cost per preemption (see README: the Tiresias testbed
// measured ~62 s on average; Pollux's simulator charges 30 s per re-allocation).
inline constexpr Duration kDefaultPreemptOverhead = Seconds(30);

struct SimConfig {
  Topology topo = *Topology::Create(1, 1, 1);
  std::string policy = "dlas";
  std::vector<std::string> policy_opts;
  // Profile-based placement (the paper's): chosen by the sweep in README ("How the defaults
  // were chosen"); count scatters gangs, which the speed model then slows.
  std::string placement = "tiresias";
  std::vector<std::string> placement_opts;
  Duration preempt_overhead = kDefaultPreemptOverhead;
  std::shared_ptr<const SpeedModel> speed;  // null: every placement runs at packed speed
  std::string label;                        // for reports; default "policy+placement"
  bool record_events = false;               // fill SimResult::event_log
  // Replay the attempts a trace records (JobSpec::attempts): each attempt but the last ends,
  // once its run time of work is done, without finishing the job, which waits to be
  // restarted (Scheduler::Requeue). Off: a job runs its whole duration as one attempt.
  bool replay_attempts = false;
  // Nodes losing and regaining GPUs, in time order (Scheduler::SetNodeAvailability with the
  // core's UsableMaskFor: free GPUs go first, then running jobs are evicted).
  std::vector<CapacityChange> capacity;
  // Called every few thousand events with the simulated time reached and the jobs ended so
  // far (of jobs.size()), for a progress display; the driver decides whether to show it.
  std::function<void(Time now, size_t ended, size_t total)> progress;
  // Every forecast_every-th job (by submission), a start forecast made at its submit
  // (engine/forecast.h, forecast_samples copies) is kept in SimResult::forecasts, with a naive
  // one, to measure them against what happened; 0 = none.
  size_t forecast_every = 0;
  int forecast_samples = 8;
  // ForecastOptions::margin: where the margins start (MarginTracker); with forecast_step 0
  // they stay there.
  std::array<double, 2> forecast_margin = kForecastMargin;
  double forecast_step = kMarginStep;  // MarginTracker's step: margins adapt during the run
  // ForecastOptions::history: the trace's jobs before the replayed window.
  std::shared_ptr<const std::vector<PastJob>> forecast_history;
  Duration forecast_half_life = 0;  // ForecastOptions::half_life
  Duration forecast_burst_gap = 0;  // ForecastOptions::burst_gap
  // The cluster over time (SimResult::series) every series_step of simulated time; 0 = none.
  Duration series_step = 0;
  // Checkpoints: each job checkpoints every I of its progress-time (from each run's progress
  // start), I drawn per job uniformly in [ckpt_min, ckpt_max] (seeded by ckpt_seed and its
  // id); a preempted job loses the progress since its last checkpoint (SchedulerOptions::
  // lose_work). 0 = no checkpoint model: preemption loses nothing (as before).
  Duration ckpt_min = 0, ckpt_max = 0;
  uint64_t ckpt_seed = 1;
  // Checkpoint-aware victim choice (SchedulerOptions::checkpoint_aware).
  bool checkpoint_aware = false;
  // Tenants (VCs with quotas, CoreConfig::tenants); jobs belong to JobSpec::vc.
  TenantConfig tenants;
  // Multi-node jobs split evenly (CoreConfig::even_split): whatif of a Slurm serve's state.
  bool even_split = false;
  // Reads the files policy options name; null: a FileDataSource of this run's own. Share
  // one across runs (compare) to read each file once.
  std::shared_ptr<const DataSource> data;
};

// The names a run's job results carry (model, user, VC, reject reasons), each kept once: a
// million results would otherwise hold a million copies of a dozen names. A JobResult holds
// 4-byte ids (SimResult::name turns one back into the name); 0 is "".
using NameId = uint32_t;
class NamePool {
 public:
  NameId Intern(std::string_view s);
  std::string_view operator[](NameId id) const { return names_[id]; }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_{""};
  std::unordered_map<std::string, NameId, Hash, std::equal_to<>> index_;
};

struct JobResult {
  // Eight-byte fields first, then four, two and one: a million results are a million of
  // these (the fifo 1M replay's largest allocation), so the layout is kept tight.
  JobId id;
  Time submit = 0, first_start = -1, end = -1;
  Duration overhead = 0, executed = 0;
  Service lost = 0;   // GPU-ms of progress lost to preemptions (the checkpoint model)
  Duration work = 0;  // packed-placement duration from the trace
  NameId model = 0, user = 0, vc = 0;
  NameId reject_reason = 0;
  int gpus = 0;
  int preemptions = 0, promotions = 0;
  uint16_t restarts = 0;
  uint16_t evictions = 0;            // runs stopped because their GPUs became unavailable
  uint16_t nodes = 0, switches = 0;  // spanned by its last run (0 = never ran)
  int8_t final_queue = 0;
  JobState state = JobState::kPending;
  bool model_known = true;  // false: the speed model ran it at packed speed, not knowing it
  // Time it held GPUs: the core keeps held == executed + overhead (progress plus restores) for
  // a job not running; a job still running when a run stops also counts its current restore.
  Duration held() const { return executed + overhead; }
  // Achieved vs packed speed: progress-time / packed duration (1 = packed speed).
  double slowdown() const { return work > 0 ? static_cast<double>(executed) / work : 1.0; }
};
static_assert(sizeof(JobResult) <= 104, "JobResult grew: a million of them are kept");

// Narrows a count into a JobResult field, saturating at the field's range.
template <typename Small>
Small Saturate(int64_t v) {
  return static_cast<Small>(
      std::clamp<int64_t>(v, std::numeric_limits<Small>::min(), std::numeric_limits<Small>::max()));
}

// The cluster at one instant of a run (the state between two events), for time series.
struct SeriesPoint {
  Time t = 0;
  int busy_gpus = 0, free_gpus = 0, unusable_gpus = 0;
  std::vector<int> waiting, running;  // jobs per queue (Q1 first)
  uint64_t preemptions = 0;           // so far (cumulative)
};

// A start forecast made when a job was submitted (SimConfig::forecast_every).
struct ForecastCheck {
  JobId job;
  Time at = 0;                           // its submit
  std::optional<Time> p10, p50, p90;     // unset: beyond the horizon
  std::optional<Time> raw_p10, raw_p90;  // before the margins (the samples' own spread)
  Time naive = 0;  // now + jobs ahead x mean duration / (GPUs / mean GPUs per job)
};

struct SimResult {
  std::string label;
  std::string topology;
  int total_gpus = 0;
  std::vector<JobResult> jobs;                                     // in submission order
  std::shared_ptr<NamePool> names = std::make_shared<NamePool>();  // shared by copies
  std::string_view name(NameId id) const { return (*names)[id]; }
  uint64_t passes = 0;  // scheduling passes that ran
  uint64_t events = 0;  // distinct event times processed
  // With record_events: what happened, in order, in the daemon's journal vocabulary
  // (core/event_log.h): submit, reject, capacity, evict, start, preempt, finish.
  std::vector<Event> event_log;
  // GPU-ms free while the first waiting job (policy order) had enough free GPUs in count but
  // no slot: GPUs idle because of fragmentation. Divided by the makespan in the metrics.
  double frag_idle_gpu_ms = 0;
  std::string placement_note;       // what the placement policy learned, if anything
  std::vector<SeriesPoint> series;  // with series_step: one point per step, from the first submit
  uint64_t preemptions = 0;         // preempt actions of the whole run
  std::vector<ForecastCheck> forecasts;
  // With tenants: each VC's quota in GPUs, in config order (for GPU-time entitled).
  std::vector<std::pair<std::string, int>> vc_quotas;
  // When the last run ended: a job's finish, or the last stop of a job that never finished
  // (evicted and stranded by capacity); -1 when no job ran. The end of the makespan.
  Time last_run_end = -1;
};

// The checkpoint interval of a job under `cfg` (0 = none): deterministic in (seed, id).
Duration CheckpointIntervalOf(const SimConfig& cfg, JobId id);

// Validates the configuration (unknown policy or option -> InvalidArgument) and runs.
// `jobs` must be sorted by (submit, id) (ReadTrace does this).
StatusOr<SimResult> RunSimulation(const SimConfig& cfg, const std::vector<JobSpec>& jobs);
// The same, reading the jobs from a compact table (a million-job replay's memory).
StatusOr<SimResult> RunSimulation(const SimConfig& cfg, const JobTable& jobs);

}  // namespace tiresias
