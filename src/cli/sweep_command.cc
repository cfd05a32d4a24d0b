// `tiresias sweep`: a grid of policy and placement options x clusters x replicates (workload
// seeds or trace windows), run on every core. Writes runs.csv, summary.csv, robust.csv, a plot
// per knob (SVG) and index.html, and prints the best configuration per metric with its spread
// (mean and 95% interval over replicates) and the most robust configurations.
#include <fmt/format.h>

#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "cli/workload_args.h"
#include "common/strings.h"
#include "engine/core_builder.h"
#include "engine/file_data_source.h"
#include "sim/link_speed_model.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

struct SweepArgs {
  std::string trace;
  int synthetic = 0;
  double load = 1.2;
  std::string clusters = "8x32x8";
  std::string policy = "dlas", placement = SimConfig{}.placement;
  std::vector<std::string> opts, popts, grid;
  std::string seeds, windows;
  double from_day = 0, days = 0;
  uint64_t assign_models = 0;
  double overhead = ToSeconds(kDefaultPreemptOverhead);
  SpeedFlags speed;
  std::string metric = "mean_jct", out;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool quiet = false;
};

// The replicates: trace windows x model seeds, or synthetic seeds.
// `warning`: what the user should know about them, or left empty.
StatusOr<std::vector<Replicate>> BuildReplicates(const SweepArgs& a, int cluster_gpus,
                                                 std::string* what, std::string* warning) {
  std::vector<int64_t> seeds;
  if (!a.seeds.empty()) {
    auto s = ParseIntRange(a.seeds);
    if (!s.ok()) return InvalidArgument("--seeds: " + s.status().message());
    seeds = *s;
    // A replicate twice would count as two independent ones (a 0 spread; found by a tester).
    if (std::set<int64_t> once(seeds.begin(), seeds.end()); once.size() != seeds.size()) {
      return InvalidArgument(fmt::format("--seeds {}: a seed given twice", a.seeds));
    }
  }
  // Flags another one overrides were taken and ignored (found by a tester).
  if (!a.seeds.empty() && a.assign_models > 0) {
    return InvalidArgument(
        "--assign-models and --seeds both seed the models: --seeds gives one replicate each");
  }
  if (!a.windows.empty() && a.from_day > 0) {
    return InvalidArgument("--from-day with --windows: each window's first day is in --windows");
  }
  std::vector<Replicate> out;
  if (a.synthetic > 0) {
    if (!a.windows.empty()) return InvalidArgument("--windows needs --trace");
    if (Status s = SyntheticTakesNoTraceFlags(a.from_day, a.days, a.assign_models); !s.ok()) {
      return s;
    }
    if (seeds.empty()) seeds = {1};
    for (int64_t s : seeds) {
      auto jobs = std::make_shared<std::vector<JobSpec>>(
          SyntheticPhillyLike({.jobs = a.synthetic,
                               .seed = static_cast<uint64_t>(s),
                               .load = a.load,
                               .cluster_gpus = cluster_gpus,
                               .max_gpus = DefaultSyntheticMaxGpus(cluster_gpus)}));
      out.push_back({fmt::format("seed {}", s), std::move(jobs)});
    }
    *what = fmt::format("synthetic Philly-like, {} jobs, load {} on {} GPUs, seeds {}", a.synthetic,
                        a.load, cluster_gpus, a.seeds.empty() ? "1" : a.seeds);
    return out;
  }
  auto tr = ReadTrace(a.trace);
  if (!tr.ok()) return tr.status();
  std::vector<std::pair<double, double>> windows;  // (from day, days); days 0 = to the end
  if (!a.windows.empty()) {
    // (--days 0, "to the end", was told "--windows needs --days"; found by a tester.)
    if (a.days <= 0) {
      return InvalidArgument(
          "--windows needs --days greater than 0, the length of each window (--days 0, to the "
          "end of the trace, is one window: give --from-day instead of --windows)");
    }
    for (auto part : Split(a.windows, ',')) {
      auto d = ParseDouble(Trim(part));
      if (!d || *d < 0 || *d > kMaxDays) {  // (as --from-day: 1e300 days overflowed)
        return InvalidArgument(
            fmt::format("--windows: '{}' is not a day from 0 to {}", Trim(part), kMaxDays));
      }
      windows.emplace_back(*d, a.days);
    }
  } else {
    windows.emplace_back(a.from_day, a.days);
  }
  if (seeds.empty() && a.assign_models > 0) seeds = {static_cast<int64_t>(a.assign_models)};
  for (const auto& [from, days] : windows) {
    auto window = WindowOfDays(tr->jobs, a.trace, from, days);
    if (!window.ok()) return window.status();
    std::vector<JobSpec> base = std::move(*window);
    std::string name = "all";
    if (from > 0 || days > 0) {
      name = days > 0 ? fmt::format("days {}-{}", from, from + days)
                      : fmt::format("days {}-end", from);
    }
    if (seeds.empty()) {
      out.push_back({name, std::make_shared<const std::vector<JobSpec>>(std::move(base))});
      continue;
    }
    for (int64_t s : seeds) {
      auto jobs = std::make_shared<std::vector<JobSpec>>(base);
      // Every job names its model: the seeds assign none and the replicates are the same run
      // (5 identical replicates, an interval of 0, with no word; found by a tester).
      if (AssignModels(*jobs, static_cast<uint64_t>(s), CnnModels()) == 0 && warning->empty()) {
        *warning = fmt::format("every job of {} names its model: {} assigns none{}", a.trace,
                               a.seeds.empty() ? fmt::format("--assign-models {}", a.assign_models)
                                               : "--seeds " + a.seeds,
                               seeds.size() > 1
                                   ? fmt::format(", so the {} replicates per window are identical "
                                                 "runs; --windows gives replicates that differ",
                                                 seeds.size())
                                   : "");
      }
      out.push_back({fmt::format("{} models {}", name, s), std::move(jobs)});
    }
  }
  *what = fmt::format("{} ({} format, {} jobs){}", a.trace, tr->format, tr->jobs.size(),
                      seeds.empty() ? "" : ", models assigned (seeded) to jobs without one");
  return out;
}

int RunSweepCommand(const SweepArgs& a, int& rc) {
  auto fail = [&](const std::string& msg) {
    std::cerr << "error: " << msg << "\n";
    return rc = 2;
  };
  if (a.trace.empty() == (a.synthetic <= 0))
    return fail("give exactly one of --trace or --synthetic");
  if (a.overhead < 0) return fail("--preempt-overhead must be >= 0");
  if (a.threads < 1) return fail("--threads must be >= 1");
  const SweepMetric* metric = FindSweepMetric(a.metric);
  if (!metric) {
    std::vector<std::string> names;
    for (const auto& m : SweepMetrics()) names.push_back(m.name);
    return fail(fmt::format("--metric {}: valid metrics: {}", a.metric, Join(names, ", ")));
  }
  const size_t metric_index = static_cast<size_t>(metric - SweepMetrics().data());

  SweepConfig cfg;
  int max_gpus = 0;
  for (auto c : Split(a.clusters, ',')) {
    auto t = ResolveCluster(std::string(Trim(c)));
    if (!t.ok()) return fail(t.status().message());
    cfg.clusters.push_back({t->str(), *t});
    max_gpus = std::max(max_gpus, t->total_gpus());
  }
  if (!a.out.empty()) {
    if (Status st = CheckOutputPath("-o", a.out, OutputKind::kDirectory); !st.ok()) {
      return fail(st.message());
    }
  }
  std::vector<GridAxis> axes;
  for (const auto& g : a.grid) {
    auto axis = ParseGridAxis(g);
    if (!axis.ok()) return fail(axis.status().message());
    axes.push_back(*axis);
  }
  auto files = std::make_shared<const FileDataSource>();
  cfg.data = files;
  std::vector<std::string> skipped;
  auto points = ExpandGrid({.policy = a.policy,
                            .policy_opts = a.opts,
                            .placement = a.placement,
                            .placement_opts = a.popts},
                           axes, *files, &skipped);
  if (!points.ok()) return fail(points.status().message());
  std::set<std::string> notes;  // an option that changes nothing is said once, not dropped
  for (const auto& p : *points) {
    for (auto& n : IneffectiveOptions(p.policy, p.policy_opts, p.placement, p.placement_opts)) {
      notes.insert(std::move(n));
    }
  }
  for (const auto& n : notes) std::cerr << "note: " << n << "\n";
  cfg.points = std::move(*points);
  std::string what;
  if (a.synthetic > 0 && cfg.clusters.size() > 1) {
    return fail("--synthetic sizes its arrival rate for one cluster: give one --cluster");
  }
  std::string warning;
  auto reps = BuildReplicates(a, max_gpus, &what, &warning);
  if (!reps.ok()) return fail(reps.status().message());
  if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  cfg.replicates = std::move(*reps);
  cfg.preempt_overhead = static_cast<Duration>(std::llround(a.overhead * kMsPerSecond));
  cfg.threads = a.threads;
  auto speed = a.speed.Load();
  if (!speed.ok()) return fail(speed.status().message());
  cfg.speed = speed->first;
  const std::string& speed_what = speed->second;
  const size_t total = cfg.points.size() * cfg.clusters.size() * cfg.replicates.size();
  std::cout << fmt::format(
      "sweep: {} configurations x {} clusters x {} replicates = {} runs on {} threads\n"
      "workload: {}\npreemption overhead {} s; speed model: {}\n",
      cfg.points.size(), cfg.clusters.size(), cfg.replicates.size(), total, a.threads, what,
      a.overhead, speed_what);
  for (const auto& s : skipped) std::cout << "skipped combinations: " << s << "\n";
  std::mutex mu;
  size_t last_pct = 0;
  if (!a.quiet) {
    cfg.progress = [&](size_t done, size_t all) {
      const size_t pct = done * 10 / all;
      if (pct != last_pct) {
        last_pct = pct;
        std::lock_guard<std::mutex> lock(mu);
        std::cerr << fmt::format("  {} of {} runs\n", done, all);
      }
    };
  }
  auto t0 = std::chrono::steady_clock::now();
  auto runs = RunSweep(cfg);
  if (!runs.ok()) {
    std::cerr << "error: " << runs.status().message() << "\n";
    return rc = 1;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << SweepReport(cfg, *runs, metric_index);
  std::cout << fmt::format("{} runs in {:.1f} s wall\n", runs->size(), wall);
  if (!a.out.empty()) {
    if (Status st = WriteSweepDir(a.out, cfg, axes, *runs, metric_index); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return rc = 1;
    }
    std::cout << fmt::format(
        "wrote {0}/runs.csv, summary.csv, robust.csv, index.html and a plot per knob "
        "(knob_KEY.svg)\n",
        a.out);
  }
  return rc = 0;
}

}  // namespace

void AddSweepCommand(CLI::App& app, int& rc) {
  static SweepArgs a;
  auto* c = app.add_subcommand(
      "sweep", "run a grid of policy options x clusters x seeds or trace windows, on all cores");
  CLI::Option* trace = c->add_option("--trace", a.trace, "trace CSV (as sim reads it)");
  c->add_option("--synthetic", a.synthetic, "instead of --trace: N seeded Philly-like jobs")
      ->check(IntegerIn(1, 1'000'000));
  c->add_option("--load", a.load, "offered load for --synthetic")
      ->capture_default_str()
      ->excludes(trace)  // a trace brings its own (taken and ignored before)
      ->check(NumberIn(0, 100, /*lo_open=*/true));
  c->add_option("--cluster", a.clusters, "clusters, comma-separated (SxNxG or spec CSVs)")
      ->capture_default_str();
  c->add_option("--policy", a.policy, "ordering policy (or --grid policy=...)")
      ->capture_default_str();
  c->add_option("--opt", a.opts, "fixed policy option key=value (repeatable)");
  c->add_option("--placement", a.placement, "placement (or --grid placement=...)")
      ->capture_default_str();
  c->add_option("--popt", a.popts, "fixed placement option key=value (repeatable)");
  c->add_option("--grid", a.grid,
                "KEY=V1,V2,...: policy, placement, placement.OPTION or a policy option; '/' "
                "separates list items (thresholds=3250/7200), thresholds=LO:HI spaces K-1 "
                "thresholds geometrically for K queues (repeatable)");
  c->add_option("--seeds", a.seeds,
                "replicates, e.g. 1..5: workload seeds with --synthetic, model-assignment seeds "
                "with --trace");
  c->add_option("--windows", a.windows,
                "replicates: trace windows starting on these days, each --days long, e.g. "
                "21,35,49");
  c->add_option("--from-day", a.from_day, "one window: from this day")
      ->capture_default_str()
      ->check(NumberIn(0, 3650));
  c->add_option("--days", a.days, "window length in days (0 = to the end)")
      ->check(NumberIn(0, 3650));
  c->add_option("--assign-models", a.assign_models,
                "seed: give each job without a model a random CNN (without --seeds)")
      ->check(Unsigned());
  c->add_option("--preempt-overhead", a.overhead, "seconds of restore per resume")
      ->capture_default_str()
      ->check(NumberIn(0, 86400));
  a.speed.Add(c);
  c->add_option("--metric", a.metric,
                "metric for the robust ranking and the plots (mean_jct, p99_jct, p999_jct, "
                "makespan, worst_rho, unfair_share, jain_user, jain_vc, ...)")
      ->capture_default_str();
  c->add_option("--threads", a.threads, "parallel runs (default: every core)")
      ->check(IntegerIn(1, 1024));
  c->add_option("-o,--out", a.out, "write runs.csv, summary.csv, robust.csv, plots, index.html");
  c->add_flag("--quiet", a.quiet, "no progress lines");
  c->callback([&rc] { RunSweepCommand(a, rc); });
}

}  // namespace tiresias
