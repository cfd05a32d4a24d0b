// Speed at scale (issue 15): what a pass costs when the queue is long.
// - BM_Burst: 100,000 Philly-like jobs submitted at the same instant on 2x32x8, every policy
//   with its shipped defaults (as `sim --policy P` runs it).
// - BM_CoreRound: the core alone, 10,000 GPUs (10x125x8) and 100,000 waiting jobs; each event
//   finishes the running job that ends first, submits a new one and runs a pass. Reports the
//   amortised cost per event (us_per_event).
// - BM_Million: `tiresias sim --synthetic 1000000` (seeded, Philly-like, 8x32x8, load 0.9) as a
//   child process per policy: wall time and the child's peak memory (max RSS, MiB).
// - BM_Growth: replay time of Philly prefixes (10k, 20k, 40k, all 82k jobs; dlas, 2x32x8) and of
//   the synthetic trace at 100k, 300k and 1M jobs (dlas, 8x32x8), with the fitted exponent b of
//   time = c x n^b per family (b = 1: linear).
// Skips with a message when ../shared is absent.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <queue>

#include "engine/core_builder.h"
#include "engine/file_data_source.h"
#include "policy/registry.h"
#include "replay.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

extern char** environ;

namespace tiresias {
namespace {

using bench::kPhilly;

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::vector<JobSpec> SyntheticJobs(int64_t n, const Topology& topo) {
  return SyntheticPhillyLike({.jobs = n,
                              .seed = 1,
                              .load = 0.9,
                              .cluster_gpus = topo.total_gpus(),
                              .max_gpus = std::min(32, topo.total_gpus())});
}

void BM_Burst(benchmark::State& state, const std::string& policy) {
  if (!std::filesystem::exists(kPhilly)) {
    state.SkipWithError("../shared/traces/philly.csv is absent (its figures shape the jobs)");
    return;
  }
  const Topology topo = *Topology::Parse("2x32x8");
  std::vector<JobSpec> jobs = SyntheticJobs(100000, topo);
  for (JobSpec& j : jobs) j.submit = 0;  // (submit, id) order still holds: ids ascend
  SimConfig cfg;
  cfg.topo = topo;
  cfg.policy = policy;
  bench::Replay(state, cfg, jobs);
}

// The core alone: 100,000 jobs wait on 10,000 GPUs; each event one running job finishes (the
// one that ends first), one job arrives, and a pass runs.
void BM_CoreRound(benchmark::State& state, const std::string& policy) {
  if (!std::filesystem::exists(kPhilly)) {
    state.SkipWithError("../shared/traces/philly.csv is absent (its figures shape the jobs)");
    return;
  }
  const Topology topo = *Topology::Parse("10x125x8");
  constexpr int kWaiting = 100000, kEvents = 20000;
  std::vector<JobSpec> jobs = SyntheticJobs(kWaiting + 10000 + kEvents, topo);
  FileDataSource files;
  auto built = BuildCore({.topo = topo, .policy = policy, .placement = "count"}, files);
  if (!built.ok()) {
    state.SkipWithError(built.status().message().c_str());
    return;
  }
  Scheduler& core = **built;
  core.Reserve(jobs.size());
  using Done = std::pair<Time, int64_t>;  // projected end, job
  std::priority_queue<Done, std::vector<Done>, std::greater<>> done;
  int64_t preemptions = 0;
  auto apply = [&](const std::vector<Action>& actions) {
    for (const Action& a : actions) {
      preemptions += a.kind == Action::Kind::kPreempt;
      if (a.kind != Action::Kind::kStart) continue;
      const Job* j = core.Find(a.job);
      done.emplace(*j->ProjectedEnd(), a.job.value());
    }
  };
  // Fill the cluster, then queue kWaiting jobs behind it.
  size_t next = 0;
  for (; next < 20000; ++next) {
    jobs[next].submit = 0;
    (void)core.Submit(jobs[next], 0);
  }
  apply(core.Schedule(0));
  for (; core.num_waiting() < kWaiting; ++next) {
    jobs[next].submit = 0;
    (void)core.Submit(jobs[next], 0);
  }
  apply(core.Schedule(0));
  Time t = 0;
  int events = 0;
  double secs = 0;
  for (auto _ : state) {
    preemptions = 0;
    const auto start = std::chrono::steady_clock::now();
    for (events = 0; events < kEvents && next < jobs.size(); ++events) {
      while (!done.empty()) {  // drop the ends of runs preempted since
        const Job* j = core.Find(JobId(done.top().second));
        if (j->running() && j->ProjectedEnd() == done.top().first) break;
        done.pop();
      }
      t = std::min(std::max(t + 1, done.empty() ? t + 1 : done.top().first), core.NextWakeup());
      if (!done.empty() && done.top().first <= t) {  // one finishes, one arrives
        (void)core.Finish(JobId(done.top().second), t);
        done.pop();
        jobs[next].submit = t;
        (void)core.Submit(jobs[next++], t);
      }
      apply(core.Schedule(t));
    }
    secs = Seconds(std::chrono::steady_clock::now() - start);
  }
  state.counters["us_per_event"] = secs * 1e6 / std::max(events, 1);
  state.counters["preemptions_per_event"] = static_cast<double>(preemptions) / std::max(events, 1);
  state.counters["waiting"] = static_cast<double>(core.num_waiting());
  state.counters["running"] = static_cast<double>(core.num_running());
}

// Runs `tiresias sim ARGS` as a child; its wall time and peak memory (MiB), or false.
bool RunCli(const std::vector<std::string>& args, double* secs, double* mib) {
  std::vector<std::string> argv = {TIRESIAS_BINARY, "sim"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid;
  const int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return false;
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) return false;
  *secs = Seconds(std::chrono::steady_clock::now() - start);
  *mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void BM_Million(benchmark::State& state, const std::string& policy) {
  if (!std::filesystem::exists(kPhilly)) {
    state.SkipWithError("../shared/traces/philly.csv is absent (its figures shape the jobs)");
    return;
  }
  double secs = 0, mib = 0;
  for (auto _ : state) {
    if (!RunCli({"--synthetic", "1000000", "--seed", "1", "--load", "0.9", "--cluster", "8x32x8",
                 "--policy", policy},
                &secs, &mib)) {
      state.SkipWithError("tiresias sim --synthetic 1000000 failed");
      return;
    }
    state.SetIterationTime(secs);
  }
  state.counters["peak_MiB"] = mib;
}

// Least squares of log(time) on log(n): the exponent b of time = c x n^b.
double FitExponent(const std::vector<std::pair<double, double>>& points) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double k = static_cast<double>(points.size());
  for (const auto& [n, t] : points) {
    const double x = std::log(n), y = std::log(t);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

void BM_Growth(benchmark::State& state) {
  auto philly = ReadTrace(kPhilly);
  if (!philly.ok()) {
    state.SkipWithError("../shared/traces/philly.csv is absent");
    return;
  }
  auto replay = [](const std::vector<JobSpec>& jobs, const std::string& cluster) {
    SimConfig cfg;
    cfg.topo = *Topology::Parse(cluster);
    cfg.policy = "dlas";
    cfg.policy_opts = PinDefaults("dlas", {}, 1);
    cfg.placement = "count";
    cfg.preempt_overhead = 0;
    const auto start = std::chrono::steady_clock::now();
    auto r = RunSimulation(cfg, jobs);
    benchmark::DoNotOptimize(r);
    return Seconds(std::chrono::steady_clock::now() - start);
  };
  std::vector<std::pair<double, double>> prefixes, synthetic;
  for (auto _ : state) {
    prefixes.clear();
    synthetic.clear();
    for (size_t n : {10000, 20000, 40000, 82247}) {
      std::vector<JobSpec> jobs(
          philly->jobs.begin(),
          philly->jobs.begin() + static_cast<ptrdiff_t>(std::min(n, philly->jobs.size())));
      prefixes.emplace_back(static_cast<double>(jobs.size()), replay(jobs, "2x32x8"));
    }
    const Topology big = *Topology::Parse("8x32x8");
    for (int64_t n : {100000, 300000, 1000000}) {
      synthetic.emplace_back(static_cast<double>(n), replay(SyntheticJobs(n, big), "8x32x8"));
    }
  }
  std::cout << "growth (dlas, count placement, no overhead; seconds of replay):\n";
  for (const auto& [n, t] : prefixes) std::cout << fmt::format("  philly {:>8.0f} {:.3f}\n", n, t);
  for (const auto& [n, t] : synthetic) {
    std::cout << fmt::format("  synthetic {:>8.0f} {:.3f}\n", n, t);
  }
  const double bp = FitExponent(prefixes), bs = FitExponent(synthetic);
  std::cout << fmt::format(
      "  fitted time = c x n^b: Philly prefixes b = {:.2f}, synthetic b = {:.2f}\n", bp, bs);
  state.counters["b_philly"] = bp;
  state.counters["b_synthetic"] = bs;
}

BENCHMARK_CAPTURE(BM_Burst, fifo, "fifo")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, fifo_backfill, "fifo-backfill")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, sjf, "sjf")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, srtf, "srtf")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, srsf, "srsf")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, las, "las")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, las2d, "las2d")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, dlas, "dlas")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Burst, gittins, "gittins")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CoreRound, dlas, "dlas")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CoreRound, gittins, "gittins")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_CoreRound, srtf, "srtf")->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, fifo, "fifo")
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, fifo_backfill, "fifo-backfill")
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, sjf, "sjf")->UseManualTime()->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, srtf, "srtf")
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, srsf, "srsf")
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, las, "las")->UseManualTime()->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, las2d, "las2d")
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, dlas, "dlas")
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Million, gittins, "gittins")
    ->UseManualTime()
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK(BM_Growth)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace tiresias
