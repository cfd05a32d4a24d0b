// Metrics of a run, as algorithms.md defines them: JCT = end - submit, queueing delay =
// first start - submit, makespan = last end - first submit (the end of the last run: a job's
// finish, or the stop of a run whose job never finished, such as one stranded by capacity),
// GPU utilisation = GPU-time held / (GPUs x makespan), preemptions, promotions, GPU-time lost to
// restore overhead and to work since the last checkpoint (the checkpoint model). Mean, median, p95,
// p99, p99.9 (linear interpolation between order statistics), overall and by job size. Fairness, as
// researchers report it today: finish-time fairness (Themis: rho = JCT / the JCT with a 1/N share
// of the cluster, N = jobs in the system), Jain's index over per-user and per-VC mean JCT slowdown
// (JCT / packed duration), queueing delay per VC. Placement: slowdown (achieved vs packed speed)
// per finished job, GPUs idle because of fragmentation (time-averaged over the makespan), nodes and
// switches spanned by multi-GPU jobs, and how many jobs the speed model did not know (run at packed
// speed).
#pragma once

#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace tiresias {

struct Stats {
  size_t n = 0;
  double mean = 0, median = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
};
Stats Summarize(std::vector<double> values);
// `v`, a figure of `s`, or NaN ("-" in the tables, null in summary.json) when `s` is over no
// value: a statistic over no job is not 0.
inline double OrNone(const Stats& s, double v) {
  return s.n > 0 ? v : std::numeric_limits<double>::quiet_NaN();
}
// The q-quantile of sorted values (linear interpolation between order statistics).
double Quantile(const std::vector<double>& sorted, double q);

// Jain's fairness index (sum x)^2 / (n sum x^2) of positive values: 1 when all are equal,
// 1/n when one has everything. nullopt for no values.
std::optional<double> JainIndex(const std::vector<double>& values);

inline constexpr double kRhoUnfair = 1.05;  // Themis' reading of "worse than a fair share"

struct Fairness {
  // Finish-time fairness per finished job: rho = JCT / T_fair, T_fair = packed duration x
  // max(1, G x N / C) where N is the time-average number of jobs in the system (submitted,
  // not finished, itself included) over the job's stay and C the cluster's GPUs: the JCT it
  // would have with C/N GPUs (no faster than with its G). rho <= 1: no worse than a 1/N share.
  Stats rho;
  double frac_unfair = 0;  // share of finished jobs with rho > kRhoUnfair
  // Jain's index over groups' mean JCT slowdown (JCT / packed duration); nullopt when no job
  // names a user (VC).
  std::optional<double> jain_user, jain_vc;
  // Jain's index over each VC's GPU-time received / entitled (with tenants).
  std::optional<double> jain_vc_share;
  size_t users = 0, vcs = 0;
};

struct VcStats {
  std::string vc;
  size_t finished = 0;
  Stats jct;                 // seconds
  Stats queueing;            // seconds
  double mean_slowdown = 0;  // JCT / packed duration
  // Finish-time fairness of its finished jobs: mean rho, share with rho > kRhoUnfair.
  double mean_rho = 0, frac_unfair = 0;
  // GPU-hours its jobs held (every job, finished or not), and with tenants its quota and the
  // GPU-hours it was entitled to (quota x makespan); -1 without tenants.
  double gpu_hours = 0;
  int quota = -1;
  double entitled_gpu_hours = -1;
};

struct SizeBucket {
  const char* name;
  int lo, hi;  // GPUs, inclusive
};
inline constexpr std::array<SizeBucket, 4> kSizeBuckets = {
    {{"1 GPU", 1, 1}, {"2-4 GPUs", 2, 4}, {"5-8 GPUs", 5, 8}, {">8 GPUs", 9, 1 << 30}}};

struct Metrics {
  std::string label;
  size_t jobs = 0, finished = 0, rejected = 0, unfinished = 0;
  Stats jct, queueing;  // seconds, finished jobs
  std::array<Stats, 4> jct_by_size, queueing_by_size;
  double makespan = 0;     // seconds
  double utilisation = 0;  // 0..1
  int64_t preemptions = 0, promotions = 0;
  int64_t restarts = 0;   // attempts that ended without finishing their job (replayed attempts)
  int64_t evictions = 0;  // runs stopped by capacity changes (sim --capacity)
  double overhead_gpu_seconds = 0;
  double lost_gpu_hours = 0;  // progress lost to preemptions (the checkpoint model)
  uint64_t passes = 0;
  Stats slowdown;                            // finished jobs; 1 = packed speed
  double frag_idle_gpus = 0;                 // mean GPUs idle because of fragmentation
  double mean_nodes = 0, mean_switches = 0;  // finished multi-GPU jobs, last run
  size_t multi_gpu = 0;                      // finished multi-GPU jobs (0: no mean_nodes)
  size_t unknown_models = 0;                 // jobs the speed model did not know
  std::string placement_note;
  Fairness fairness;
  std::vector<VcStats> by_vc;  // finished jobs with a VC, by VC name
};

Metrics ComputeMetrics(const SimResult& r);
// rho of every finished job, in the order of r.jobs (0 for jobs that did not finish).
std::vector<double> FinishTimeFairness(const SimResult& r);
nlohmann::json ToJson(const Metrics& m);
nlohmann::json ToJson(const Stats& s);

}  // namespace tiresias
