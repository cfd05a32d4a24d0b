// The workload flags shared by `tiresias sim` and `compare` (WorkloadArgs): the trace or a
// synthetic workload, the cluster, a window of days, the speed model, capacity changes,
// checkpoints, forecasts and tenants; and loading all of it for a run. Errors are printed
// with what was wrong and the loaders return false.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "core/speed_model.h"
#include "core/tenants.h"
#include "core/topology.h"
#include "engine/forecast.h"
#include "sim/link_speed_model.h"
#include "sim/simulator.h"
#include "trace/trace_reader.h"

namespace tiresias {

// Bounds of the numeric flags (README, "Using the simulator").
constexpr int64_t kMaxSyntheticJobs = 1'000'000;
constexpr double kMaxLoad = 100;                // offered demand / cluster GPUs
constexpr double kMaxDays = 3650;               // --from-day, --days: ten years
constexpr double kMaxPreemptOverheadS = 86400;  // a day per resume

// The placement speed model's flags, shared by `sim`, `compare` and `sweep`: --speed, --comm,
// --link-bw, --profiles, --compute-times.
struct SpeedFlags {
  std::string speed = "auto", comm = "ps", link_bw, profiles = DefaultProfilesPath(),
              compute_times = DefaultComputeTimesPath();

  void Add(CLI::App* c);
  // The model (null when off) and what to print of it. A file named on the command line must
  // load (the default paths, in ../shared, may be absent under `auto`: the model is then off),
  // and its error names the flag.
  StatusOr<std::pair<std::shared_ptr<const SpeedModel>, std::string>> Load() const;

 private:
  CLI::Option* profiles_ = nullptr;
  CLI::Option* compute_times_ = nullptr;
};

struct WorkloadArgs {
  std::string trace;
  int synthetic = 0;
  uint64_t seed = 1;
  double load = 1.2;
  std::string cluster = "8x32x8";
  double overhead = ToSeconds(kDefaultPreemptOverhead);
  double from_day = 0, days = 0;
  SpeedFlags speed;
  uint64_t assign_models = 0;
  std::string attempts = "merge";
  std::string capacity;
  double series_step = 600;  // seconds between points of timeseries.csv (--out)
  int64_t forecast_every = 0;
  std::vector<double> forecast_margin = {kForecastMargin[0], kForecastMargin[1]};
  double forecast_step = kMarginStep;
  double forecast_half_life_h = 0;    // ForecastOptions::half_life, hours; 0: none
  double forecast_burst_gap_min = 0;  // ForecastOptions::burst_gap, minutes; 0: none
  // The trace before --from-day (LoadJobs fills it in).
  mutable std::shared_ptr<const std::vector<PastJob>> history;
  std::string ckpt_interval;  // seconds, or uniform:LO:HI
  bool ckpt_aware = false;
  std::string tenants;  // a tenants file, or "trace": quotas from the trace's GPU-time per VC
  bool no_borrow = false;
  double half_life_h = -1;  // overrides the file's half_life_hours when >= 0
  int quota_lead = -2;      // overrides the file's quota_lead when >= -1
  std::string protect;      // overrides the file's protect when given

  // The tenants of this run (off when --tenants is not given); jobs whose VC the file does
  // not name go to its users' VC or default_vc. Prints the error and returns false.
  bool LoadTenants(std::vector<JobSpec>& jobs, const Topology& topo, TenantConfig& out,
                   std::string& what) const;

  // --checkpoint-interval into [min, max] ms; prints the error and returns false.
  bool CheckpointInterval(Duration& lo, Duration& hi) const;

  // Adds the flags to a command.
  void Add(CLI::App* c);

  // Loads jobs and topology; prints the error and returns false on failure.
  bool Load(std::vector<JobSpec>& jobs, Topology& topo, std::string& source,
            std::vector<CapacityChange>& changes) const;

  // The jobs of the trace (its window of days) or the synthetic workload, and the cluster.
  bool LoadJobs(std::vector<JobSpec>& jobs, Topology& topo, std::string& source) const;
};

// A window or models of a trace given with --synthetic, which draws its own jobs and models
// (taken and ignored before; found by a tester): the error, for `sim`, `compare` and `sweep`.
Status SyntheticTakesNoTraceFlags(double from_day, double days, uint64_t assign_models);

}  // namespace tiresias
