// Parameter sweeps over the simulator: a grid of policy and placement options crossed with
// clusters and replicates (workload seeds or trace windows), run on every core, summarised
// per configuration and cluster (mean and a 95% interval over replicates), and ranked both
// per metric and by robustness (the worst and the geometric-mean ratio to the best
// configuration of each cluster and replicate: "best or near-best everywhere").
//
// Grid values: `--grid KEY=V1,V2,...`. KEY is `policy`, `placement`, `placement.OPTION`, or
// a policy option (given only to policies that declare it, so `policy=dlas,srtf` with
// `queues=...` runs srtf once). In list-valued options `/` separates the items of one value
// (`thresholds=3250/7200`); `thresholds=LO:HI` gives a K-queue configuration K-1 thresholds
// spaced geometrically from LO to HI (one queue: none; two: LO); `-` leaves the option out
// (`--grid thresholds=1000:1000000,- --grid threshold_quantiles=-,0.5/0.9`). Combinations a policy
// refuses (e.g. 3 queues with 1 threshold) are skipped and reported, never run; an option no
// policy of the grid has, or a value valid in no combination (a typo), is an error.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/data_source.h"
#include "core/job.h"
#include "core/speed_model.h"
#include "core/topology.h"
#include "sim/metrics.h"
#include "sim/svg_plot.h"

namespace tiresias {

struct GridAxis {
  std::string key;
  std::vector<std::string> values;  // as given on the command line
};
// "KEY=V1,V2,..." -> an axis.
StatusOr<GridAxis> ParseGridAxis(const std::string& text);
// "1..5", "1,3,7" or "2..10/2" (step) -> the integers.
StatusOr<std::vector<int64_t>> ParseIntRange(const std::string& text);

// One configuration of the grid.
struct SweepPoint {
  std::string policy;
  std::vector<std::string> policy_opts;  // key=value
  std::string placement;
  std::vector<std::string> placement_opts;
  std::map<std::string, std::string> knobs;  // axis key -> the value this point takes
  std::string label;                         // "dlas queues=3 thresholds=1800,14400 +tiresias"
};

struct GridBase {
  std::string policy = "dlas";
  std::vector<std::string> policy_opts;  // fixed options for every point
  std::string placement;                 // "" = the simulator's default
  std::vector<std::string> placement_opts;
};

// The grid's configurations in axis order (the first axis varies slowest). Combinations the
// registries refuse go to `skipped` with the reason, once per distinct reason. An axis no
// policy of the grid takes, or a value valid in no combination, is an error.
StatusOr<std::vector<SweepPoint>> ExpandGrid(const GridBase& base,
                                             const std::vector<GridAxis>& axes,
                                             const DataSource& data,
                                             std::vector<std::string>* skipped);

// A workload replicate: a trace window or a seed.
struct Replicate {
  std::string name;  // "days 21-28", "seed 3"
  std::shared_ptr<const std::vector<JobSpec>> jobs;
};

struct SweepCluster {
  std::string name;
  Topology topo;
};

// The figures a sweep keeps of each run. Lower is better unless `higher_better`.
struct SweepMetric {
  const char* name;
  const char* title;
  bool higher_better;
  double (*get)(const Metrics&);
};
const std::vector<SweepMetric>& SweepMetrics();
const SweepMetric* FindSweepMetric(const std::string& name);

struct SweepRun {
  size_t point, cluster, replicate;
  std::vector<double> values;  // SweepMetrics() order
  double wall_seconds = 0;
};

struct SweepConfig {
  std::vector<SweepPoint> points;
  std::vector<SweepCluster> clusters;
  std::vector<Replicate> replicates;
  Duration preempt_overhead = 0;
  std::shared_ptr<const SpeedModel> speed;
  std::shared_ptr<const DataSource> data;
  int threads = 1;
  // Called after each run (from worker threads, serialised): done, total.
  std::function<void(size_t, size_t)> progress;
};

// Runs every point x cluster x replicate; the first failing run's error stops the sweep.
StatusOr<std::vector<SweepRun>> RunSweep(const SweepConfig& cfg);

// Mean and 95% confidence half-width (Student's t) over replicates; the half-width is NaN
// over one value (no interval).
struct Spread {
  size_t n = 0;
  double mean = 0, half_width = 0;
};
Spread MeanAndInterval(const std::vector<double>& values);

// Per point and cluster, per metric: the spread over replicates. [point][cluster][metric]
using SweepSummary = std::vector<std::vector<std::vector<Spread>>>;
SweepSummary Summarise(const SweepConfig& cfg, const std::vector<SweepRun>& runs);

// Robustness of each point on one metric: its value over the best point's value in the same
// cluster and replicate (1 = the best there), worst and geometric mean over all of them.
struct Robustness {
  size_t point = 0;
  double worst_ratio = 0, geomean_ratio = 0;
};
// Sorted best first (smallest worst ratio, then geometric mean).
std::vector<Robustness> RankRobust(const SweepConfig& cfg, const std::vector<SweepRun>& runs,
                                   size_t metric);

// A plot per knob (axis), a series per cluster: for each value, the configuration with that
// value whose metric is closest to the best configuration's of the same cluster and
// replicate, on average (a paired comparison: replicates differ far more from each other
// than configurations do); the bar is the 95% interval of that ratio over the replicates.
std::vector<LinePlot> KnobPlots(const SweepConfig& cfg, const std::vector<GridAxis>& axes,
                                const std::vector<SweepRun>& runs, size_t plot_metric);

// Files: runs.csv (one row per run), summary.csv (per point and cluster: mean and 95%
// half-width of each metric), robust.csv, knob_<KEY>.svg per axis (KnobPlots) and
// index.html (every plot inline, the tables). No network at run time.
Status WriteSweepDir(const std::string& dir, const SweepConfig& cfg,
                     const std::vector<GridAxis>& axes, const std::vector<SweepRun>& runs,
                     size_t plot_metric);
// The report printed at the end: per cluster, the best point for each metric with its
// spread; then the robust ranking on `metric`.
std::string SweepReport(const SweepConfig& cfg, const std::vector<SweepRun>& runs, size_t metric,
                        size_t top = 5);

}  // namespace tiresias
