// When will a job start and end? Forecasts by forward simulation of a core (the live daemon's,
// or the simulator's at a submit): copies of the core, with only the jobs still in the
// system, are run forward on a simulated clock with no new arrivals; each job whose duration
// is unknown gets one drawn per copy from the service of jobs that already finished,
// conditioned on the service it has attained (the 2D-Gittins view: a job that has run for a
// has a remaining service distributed as S - a given S > a; the distribution of S is the
// Kaplan-Meier estimate over finished jobs and, censored, the ones still running), and jobs
// keep arriving as they did in the last hours. Several copies give a range:
// p10, p50 and p90 of each job's start and end. Held jobs (by their user, a dependency, an
// array's limit) do not start in a forecast. Before kMinHistory jobs have finished, durations
// are drawn from a wide prior (log-uniform, 1 minute to 1 day of running time).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/scheduler.h"

namespace tiresias {

inline constexpr size_t kMinHistory = 20;
// Finished jobs a group needs before its own durations are drawn from: a VC's jobs of the
// job's size class (1, 2-4, 5-8, more GPUs), else the VC's, else everyone's.
inline constexpr size_t kMinGroupHistory = 50;
// How much the p10 and the p90 are moved out, on the scale ln(seconds from now + 60): for
// each side the 90% quantile of how far real starts fell outside it (conformalised quantile
// regression, one side at a time) in start forecasts made at submit with no margin, fitted on
// every Philly week, each weighted by what it is worth (scripts/forecast_table.py, which also
// holds each week out in turn: README "When will my job run").
inline constexpr std::array<double, 2> kForecastMargin = {0.435, 0.666};
// Moves p10 down by margin[0] and p90 up by margin[1] on that scale (p50 and unset bounds
// stay as they are).
void WidenRange(std::array<std::optional<Time>, 3>& q, Time now, std::array<double, 2> margin);

// Margins that adapt week by week (adaptive conformal inference, Gibbs and Candes 2021, as
// quantile tracking on each side's margin): kForecastMargin is where they start; each side of
// a start forecast is resolved once it is known whether the real start fell outside it (the
// job started, or the clock passed that bound while it waited: a late miss is known at the
// p90, not at the start), and each resolution moves that side's margin by
// step x (miss - kSideMiss): up 0.9 step after a miss, down 0.1 step after a hit, so that
// over time about 10% fall outside each side whatever the forecasts' bias. The step is the one
// whose Philly weeks, replayed with kForecastMargin, come closest to 80% inside p10-p90 pooled
// (scripts/fit_forecast_margin.py; README "When will my job run"). Margins stay within
// [0, kMaxMargin].
inline constexpr double kSideMiss = 0.1;
inline constexpr double kMarginStep = 0.1;
inline constexpr double kMaxMargin = 6;  // x400 on seconds + 60
// One side's margin after one resolution: margin + step x (miss - kSideMiss), within
// [0, kMaxMargin].
double AdaptMargin(double margin, bool miss, double step);

// What is known of a forecast job's start at a resolution: started (its first start, at or
// before now), gone (ended without starting: its forecast is dropped), or neither (waiting).
struct StartSeen {
  std::optional<Time> started;
  bool gone = false;
};

// The forecasts made and not yet resolved, and the margins they have taught (the simulator's
// `--forecast-step`, the daemon's explain and `ls -o wide`).
class MarginTracker {
 public:
  explicit MarginTracker(std::array<double, 2> initial = kForecastMargin, double step = kMarginStep)
      : margin_(initial), step_(step) {}
  // The margins to widen the next forecast with (ForecastOptions::margin).
  std::array<double, 2> margin() const { return margin_; }
  // A start forecast of `job` made with margin(): its widened p10 and p90 (unset: beyond the
  // horizon).
  void Record(JobId job, std::optional<Time> p10, std::optional<Time> p90);
  // Resolves, in the order recorded, every side that `now` decides and adapts the margins.
  void Resolve(Time now, const std::function<StartSeen(JobId)>& seen);
  bool Pending(JobId job) const;
  size_t pending() const { return pending_.size(); }
  size_t resolved() const { return resolved_; }
  // What it has learned and what it waits on, to be kept across a restart of the daemon:
  // {"margins": [low, high], "resolved": n, "pending": [[job, p10|null, p90|null, low, high]]}.
  nlohmann::json ToJson() const;
  // Takes that back (the step stays this tracker's); InvalidArgument naming the field when
  // it is malformed or a margin lies outside [0, kMaxMargin], and then nothing changes.
  Status Restore(const nlohmann::json& saved);

 private:
  struct Open {
    JobId job;
    std::optional<Time> p10, p90;
    bool low = true, high = true;  // sides not yet resolved
  };
  std::array<double, 2> margin_;
  double step_;
  std::vector<Open> pending_;
  size_t resolved_ = 0;  // sides resolved so far
};

// A job from before the core's own: all the service it took, running from its submit to its
// end on its GPUs, its VC (empty: none), its submit (unknown: counts as recent) and its end
// (unknown: before any forecast). A forecast at `now` knows it as a daemon would then: ended
// (its service), or still running (censored at what it has attained by now, the way the
// jobs still in the core are).
struct PastJob {
  Service service = 0;
  int gpus = 1;
  std::string vc;
  std::optional<Time> submit, end;
};
// The jobs of a trace submitted before `from` (with a known duration), on a clock that starts
// at `from`: each taken as running from its submit (a trace has no start times) for its
// duration, so one whose submit + duration is after `from` is still running there.
std::vector<PastJob> PastJobsBefore(const std::vector<JobSpec>& jobs, Time from);

struct ForecastOptions {
  int samples = 16;
  uint64_t seed = 1;
  Duration horizon = Seconds(365LL * 86400);  // stop simulating this far ahead
  // With a target: the jobs that held GPUs before it started, for "in the way".
  std::optional<JobId> target;
  bool until_target_starts = false;  // stop each copy there (only the start is wanted)
  // Use the durations jobs were submitted with (the daemon's `--duration`); false: draw them
  // too (the simulator, whose jobs all carry their true duration, tests forecasts that way),
  // except where the policy orders by them (srtf, srsf, sjf: they are the premise).
  bool use_given_durations = true;
  // Jobs keep arriving in a forecast as they did lately: the submissions of the last
  // arrival_window repeat, window after window (a policy like LAS lets newcomers go first, so
  // a forecast without them is too early). 0: no arrivals.
  Duration arrival_window = Seconds(6 * 3600);
  // For the next arrival_span only: past it the forecast would be inventing the load, and a
  // copy that runs for weeks (a job drawn long) would carry a backlog of made-up jobs.
  Duration arrival_span = Seconds(86400);
  // Widening of the p10-p90 ranges of starts and ends (kForecastMargin).
  std::array<double, 2> margin = kForecastMargin;
  // Jobs before the core's own: the trace before a simulated window, so a replay that starts
  // from an empty cluster forecasts from the history a daemon that had been running would
  // have (PastJob). Added to the core's finished (ended by now) and censored (not) jobs.
  std::shared_ptr<const std::vector<PastJob>> history;
  // Recent jobs weigh more: each job (finished or still in the system) weighs 2^-(age /
  // half_life) in the duration estimate, age = now - its submit (by submit, not by end: jobs
  // that ended lately are the short ones). 0: every job weighs the same.
  Duration half_life = 0;
  // Jobs of one VC and one size submitted within burst_gap of the one before (a sweep, a
  // user's batch) share one draw per copy: the same quantile of their conditional duration
  // distribution. They are alike in life, and drawn alone their durations average out over
  // a backlog, leaving the samples' spread far narrower than the real error. 0 (default):
  // each job drawn alone. Measured on Philly and not the default (README, "When will my job
  // run"): it evens the weeks out but the margins fitted under it do not carry over.
  Duration burst_gap = 0;
  // Jobs' time limits (the daemon's -t: run time, over all its runs): a job's duration, drawn
  // or given, ends there at the latest (it is stopped), and no job is forecast to end before
  // the work of a duration it was given (so capped) is done.
  std::unordered_map<JobId, Duration> time_limits;
  // How long a job stopped at its time limit may take to go (the daemon's grace): no end of a
  // job with a limit is forecast later than its latest start plus the run time it has left
  // plus this.
  Duration stop_grace = 0;
};

struct JobForecast {
  // Core times; unset when the job did not start (end) within the horizon in that many
  // samples (a held job never does). A running job's start is its real one.
  std::array<std::optional<Time>, 3> start, end;  // p10, p50, p90
  double started_fraction = 0;                    // samples in which it started
};

struct InTheWay {
  JobId job;
  double share = 0;  // of the GPU-time others held between now and the target's start
};

struct Forecast {
  Time now = 0;
  int samples = 0;
  size_t history = 0;  // finished jobs whose service the durations were drawn from
  std::unordered_map<JobId, JobForecast> jobs;
  // With a target: the jobs in the system that held most, the largest first, at most 5; and
  // the share held by jobs the forecast made up as future arrivals (no one to name).
  std::vector<InTheWay> in_the_way;
  double arrivals_share = 0;
};

// What a forecast needs from a core, taken at once (the daemon holds its lock only for this):
// a copy with the active jobs, the service of finished and active jobs, recent submissions.
// A job's service for the duration estimate: all it took (finished) or has attained so far
// (still in the system: censored), with its weight (ForecastOptions::half_life).
struct ServiceSeen {
  Service value = 0;
  double weight = 1;
};
struct ForecastInput {
  std::unique_ptr<Scheduler> active;
  std::vector<ServiceSeen> finished, censored;
  // Per VC: its finished jobs' service and its jobs' attained service still in the system.
  std::unordered_map<std::string, std::pair<std::vector<ServiceSeen>, std::vector<ServiceSeen>>>
      by_group;
  std::vector<JobSpec> recent;  // submitted in the arrival window, by submit
};
StatusOr<ForecastInput> PrepareForecast(const Scheduler& core, Time now,
                                        const ForecastOptions& options);
// Runs `options.samples` copies of the prepared core forward from `now`.
StatusOr<Forecast> RunForecast(const ForecastInput& in, Time now, const ForecastOptions& options);
// Both. FailedPrecondition when the core's policies cannot be copied.
StatusOr<Forecast> ForecastJobs(const Scheduler& core, Time now, const ForecastOptions& options);

// The p-quantile (nearest rank) of `samples` values of which `sorted` are the known ones and
// the rest lie beyond them (did not happen within the horizon): nullopt when it is one of those.
std::optional<Time> Percentile(const std::vector<Time>& sorted, size_t samples, double p);

}  // namespace tiresias
