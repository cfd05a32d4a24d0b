// Simulator speed and memory: the full Philly trace (82,247 jobs) replayed with dlas and
// gittins on 8x32x8 (2,048 GPUs) and 2x32x8 (512 GPUs, heavy contention), with the fixed
// configurations these figures have always measured and with the shipped defaults, plus the
// cost of reading the CSV, of writing a run's output (`sim --out`) and the first 20,000 jobs
// on 752 GPUs. bench/scale_bench.cc has bursts, a million jobs and the growth curve. Prints wall
// time per replay and the process's peak memory. Skips with a message when ../shared is absent.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "policy/registry.h"
#include "replay.h"
#include "sim/link_speed_model.h"
#include "sim/metrics.h"
#include "sim/report.h"
#include "sim/simulator.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

using bench::kPhilly;
using bench::PhillyJobs;
using bench::Replay;

void BM_ReadPhilly(benchmark::State& state) {
  if (!std::filesystem::exists(kPhilly)) {
    state.SkipWithError("../shared/traces/philly.csv is absent");
    return;
  }
  for (auto _ : state) {
    auto t = ReadTrace(kPhilly);
    benchmark::DoNotOptimize(t);
  }
}

void BM_Replay(benchmark::State& state, const std::string& policy, const std::string& cluster) {
  const auto* jobs = PhillyJobs();
  if (!jobs) {
    state.SkipWithError("../shared/traces/philly.csv is absent");
    return;
  }
  SimConfig cfg;
  cfg.topo = *Topology::Parse(cluster);
  cfg.policy = policy;
  // The configurations these figures have always measured (count placement, the options'
  // defaults before version 2), so that they stay comparable across versions.
  cfg.policy_opts = PinDefaults(policy, {}, 1);
  cfg.placement = "count";
  cfg.preempt_overhead = 0;
  Replay(state, cfg, *jobs);
}

// The first 20,000 Philly jobs on 752 GPUs (1x94x8), dlas as BM_Replay: the public
// simulator's scale (it takes 399 s for this).
void BM_Philly20k(benchmark::State& state) {
  const auto* philly = PhillyJobs();
  if (!philly) {
    state.SkipWithError("../shared/traces/philly.csv is absent");
    return;
  }
  const std::vector<JobSpec> jobs(philly->begin(), philly->begin() + 20000);
  SimConfig cfg;
  cfg.topo = *Topology::Parse("1x94x8");
  cfg.policy = "dlas";
  cfg.policy_opts = PinDefaults("dlas", {}, 1);
  cfg.placement = "count";
  cfg.preempt_overhead = 0;
  Replay(state, cfg, jobs);
}

// What `sim --out` adds: jobs.csv (82,247 rows), jct_cdf.csv, timeseries.csv and summary.json
// of a full Philly replay (dlas, 2x32x8, 600 s series steps), written to a temporary directory.
void BM_WriteRunDir(benchmark::State& state) {
  const auto* jobs = PhillyJobs();
  if (!jobs) {
    state.SkipWithError("../shared/traces/philly.csv is absent");
    return;
  }
  SimConfig cfg;
  cfg.topo = *Topology::Parse("2x32x8");
  cfg.policy = "dlas";
  cfg.policy_opts = PinDefaults("dlas", {}, 1);
  cfg.placement = "count";
  cfg.preempt_overhead = 0;
  cfg.series_step = 600 * kMsPerSecond;
  auto r = RunSimulation(cfg, *jobs);
  if (!r.ok()) {
    state.SkipWithError(r.status().message().c_str());
    return;
  }
  const Metrics m = ComputeMetrics(*r);
  const std::string dir =
      (std::filesystem::temp_directory_path() / fmt::format("tiresias_bench_out_{}", getpid()))
          .string();
  for (auto _ : state) {
    if (Status st = WriteRunDir(dir, *r, m, nlohmann::json::object()); !st.ok()) {
      state.SkipWithError(st.message().c_str());
      break;
    }
  }
  std::filesystem::remove_all(dir);
}

// The shipped defaults as a user runs them (`sim --policy P`): profile-based placement, the
// options' defaults, the 30 s preemption overhead; no models assigned (the trace has none).
void BM_ReplayDefaults(benchmark::State& state, const std::string& policy,
                       const std::string& cluster) {
  const auto* jobs = PhillyJobs();
  if (!jobs) {
    state.SkipWithError("../shared/traces/philly.csv is absent");
    return;
  }
  SimConfig cfg;
  cfg.topo = *Topology::Parse(cluster);
  cfg.policy = policy;
  Replay(state, cfg, *jobs);
}

// With placement that reads the topology and the speed model on (every job given a CNN model,
// seeded): the speed target must hold for these too.
void BM_ReplayPlaced(benchmark::State& state, const std::string& policy,
                     const std::string& placement, const std::string& cluster) {
  const auto* philly = PhillyJobs();
  auto speed = LoadLinkSpeedModel(DefaultProfilesPath(), DefaultComputeTimesPath(),
                                  LinkBandwidths{}, CommMode::kParameterServer);
  if (!philly || !speed.ok()) {
    state.SkipWithError("../shared/traces/philly.csv or ../shared/profiles is absent");
    return;
  }
  std::vector<JobSpec> jobs = *philly;
  AssignModels(jobs, 1, CnnModels());
  SimConfig cfg;
  cfg.topo = *Topology::Parse(cluster);
  cfg.policy = policy;
  cfg.policy_opts = PinDefaults(policy, {}, 1);  // what these figures have always measured
  cfg.placement = placement;
  cfg.preempt_overhead = 0;
  cfg.speed = *speed;
  Replay(state, cfg, jobs);
}

BENCHMARK(BM_ReadPhilly)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplayPlaced, dlas_consolidate_speed_2x32x8, "dlas", "consolidate", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK_CAPTURE(BM_ReplayPlaced, dlas_tiresias_speed_2x32x8, "dlas", "tiresias", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK_CAPTURE(BM_ReplayPlaced, gittins_tiresias_speed_2x32x8, "gittins", "tiresias", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK_CAPTURE(BM_Replay, dlas_8x32x8, "dlas", "8x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_Replay, dlas_2x32x8, "dlas", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_Replay, gittins_8x32x8, "gittins", "8x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK_CAPTURE(BM_Replay, gittins_2x32x8, "gittins", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK(BM_Philly20k)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK(BM_WriteRunDir)->Unit(benchmark::kMillisecond)->Iterations(5);
BENCHMARK_CAPTURE(BM_Replay, fifo_2x32x8, "fifo", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK_CAPTURE(BM_ReplayDefaults, dlas_defaults_2x32x8, "dlas", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);
BENCHMARK_CAPTURE(BM_ReplayDefaults, gittins_defaults_2x32x8, "gittins", "2x32x8")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace
}  // namespace tiresias

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::cout << "peak memory (max RSS): " << ru.ru_maxrss / 1024 << " MiB\n";
  return 0;
}
