// What a forecast costs (issue: "the estimate for one job on a cluster with 1,000 jobs in the
// system returns in well under 100 ms"): a dlas core (defaults, tiresias placement) on
// 4x8x8 = 256 GPUs with 300 finished jobs of history and 1,000 Philly-like jobs in the
// system, one explain-style forecast of the last job (16 forward simulations, durations
// drawn), and the all-jobs forecast behind `ls -o wide`.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "engine/core_builder.h"
#include "engine/file_data_source.h"
#include "engine/forecast.h"
#include "trace/synthetic.h"

namespace tiresias {
namespace {

std::unique_ptr<Scheduler> BusyCore(Time& now, JobId& last) {
  FileDataSource files;
  auto built = BuildCore(
      CoreConfig{.topo = *Topology::Create(4, 8, 8), .policy = "dlas", .placement = "tiresias"},
      files);
  std::unique_ptr<Scheduler> core = std::move(*built);
  auto jobs = SyntheticPhillyLike({.jobs = 1300, .seed = 7, .load = 3.0, .cluster_gpus = 256});
  // The first 300 run to the end (history); the other 1,000 arrive at once afterwards.
  for (int i = 0; i < 300; ++i) (void)core->Submit(jobs[i], 0);
  now = 0;
  for (auto acts = core->Schedule(0);;) {
    Time next = kNever;
    for (const Job& j : core->jobs()) {
      if (j.running()) next = std::min(next, *j.ProjectedEnd());
    }
    next = std::min(next, core->NextWakeup());
    if (next == kNever) break;
    now = next;
    for (const Job& j : core->jobs()) {
      if (j.running() && *j.ProjectedEnd() == now) (void)core->Finish(j.spec.id, now);
    }
    acts = core->Schedule(now);
  }
  for (int i = 300; i < 1300; ++i) {
    JobSpec s = jobs[i];
    s.submit = now;
    (void)core->Submit(s, now);
    last = s.id;
  }
  (void)core->Schedule(now);
  return core;
}

void BM_ForecastOneJob(benchmark::State& state) {
  Time now;
  JobId last;
  auto core = BusyCore(now, last);
  for (auto _ : state) {
    auto f =
        ForecastJobs(*core, now, {.samples = 16, .target = last, .use_given_durations = false});
    benchmark::DoNotOptimize(f);
  }
  state.counters["jobs_in_system"] = static_cast<double>(core->num_running() + core->num_waiting());
}
BENCHMARK(BM_ForecastOneJob)->Unit(benchmark::kMillisecond);

void BM_ForecastAllJobs(benchmark::State& state) {
  Time now;
  JobId last;
  auto core = BusyCore(now, last);
  for (auto _ : state) {
    auto f = ForecastJobs(*core, now, {.samples = 16, .use_given_durations = false});
    benchmark::DoNotOptimize(f);
  }
}
BENCHMARK(BM_ForecastAllJobs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tiresias
