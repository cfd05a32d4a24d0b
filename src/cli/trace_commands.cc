// `tiresias trace`: convert public traces to the simulator's format (convert), describe a
// trace (stats: jobs, GPU mix, duration percentiles, offered load on a cluster), and write a
// seeded synthetic trace fitted to one (synth).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/workload_args.h"
#include "common/strings.h"
#include "sim/metrics.h"
#include "trace/convert.h"
#include "trace/synthetic.h"
#include "trace/trace_reader.h"

namespace tiresias {
namespace {

struct ConvertArgs {
  std::string from, out, throughputs, worker_type = "v100";
  std::vector<std::string> files;
};

int RunConvert(const ConvertArgs& a) {
  StatusOr<Converted> c = InvalidArgument("");
  if (a.from == "philly-joblog") {
    if (a.files.size() != 1) {
      std::cerr << "error: philly-joblog takes one file (cluster_job_log)\n";
      return 2;
    }
    c = ConvertPhillyJobLog(a.files[0]);
  } else if (a.from == "helios") {
    if (a.files.size() != 1) {
      std::cerr << "error: helios takes one file (cluster_log.csv)\n";
      return 2;
    }
    c = ConvertHelios(a.files[0]);
  } else if (a.from == "alibaba-pai-2020") {
    c = ConvertAlibabaPai(a.files);
  } else {
    if (a.files.size() != 1) {
      std::cerr << "error: gavel takes one .trace file\n";
      return 2;
    }
    c = ConvertGavel(a.files[0], a.throughputs, a.worker_type);
  }
  if (!c.ok()) {
    std::cerr << "error: " << c.status().message() << "\n";
    return 2;
  }
  std::cout << c->report.Summary();
  if (c->jobs.empty()) {
    std::cerr << "error: no job left to write\n";
    return 1;
  }
  if (Status st = WriteTraceCsv(c->jobs, a.out); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return 1;
  }
  std::cout << fmt::format("wrote {} ({} jobs; `tiresias sim --trace {}` replays it)\n", a.out,
                           c->jobs.size(), a.out);
  return 0;
}

struct StatsArgs {
  std::string file, cluster;
  double from_day = 0, days = 0;
  std::string figures;  // "", "text" or "cc"
};

// The GPUs all the jobs ask for together.
double SumGpus(const std::vector<JobSpec>& jobs) {
  double n = 0;
  for (const JobSpec& j : jobs) n += j.gpus;
  return n;
}

std::string Secs(double s) {
  if (s >= 86400) return fmt::format("{:.1f} d", s / 86400);
  if (s >= 3600) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 60) return fmt::format("{:.1f} min", s / 60);
  return fmt::format("{:.0f} s", s);
}

void PrintFiguresCc(const WorkloadFigures& f) {
  std::cout << "// Fitted by `tiresias trace stats " << f.source << " --figures cc`.\n";
  std::cout << "f.sizes = {";
  for (size_t i = 0; i < f.sizes.size(); ++i) {
    std::cout << (i ? ", " : "") << "{" << f.sizes[i].first << ", " << f.sizes[i].second << "}";
  }
  std::cout << "};\n";
  for (size_t c = 0; c < f.durations.size(); ++c) {
    std::cout << "f.durations[" << c << "] = {";
    for (size_t i = 0; i < f.durations[c].size(); ++i) {
      std::cout << (i ? ", " : "") << fmt::format("{:.0f}", f.durations[c][i]);
    }
    std::cout << "};\n";
  }
  std::cout << "f.vcs = {";
  for (size_t i = 0; i < f.vcs.size(); ++i) {
    std::cout << (i ? ", " : "") << "{\"" << f.vcs[i].first << "\", " << f.vcs[i].second << "}";
  }
  std::cout << "};\n";
}

int RunStats(const StatsArgs& a) {
  auto tr = ReadTrace(a.file);
  if (!tr.ok()) {
    std::cerr << "error: " << tr.status().message() << "\n";
    return 2;
  }
  auto in_window = WindowOfDays(std::move(tr->jobs), a.file, a.from_day, a.days);
  if (!in_window.ok()) {  // (it said "no jobs", naming neither the window nor the trace)
    std::cerr << "error: " << in_window.status().message() << "\n";
    return 2;  // a usage error, as sim's
  }
  std::vector<JobSpec> jobs = std::move(*in_window);
  std::string window = "";
  if (a.from_day > 0 || a.days > 0) {
    window = fmt::format(", days {}..{}", a.from_day,
                         a.days > 0 ? fmt::format("{}", a.from_day + a.days) : "end");
  }
  if (a.figures == "cc") {
    PrintFiguresCc(FitFigures(jobs, a.file));
    return 0;
  }
  std::map<int, int64_t> sizes;
  std::map<std::string, int64_t> vcs, users;
  std::vector<double> dur, gpu_time;
  std::array<std::vector<double>, 4> dur_by;
  double total = 0;
  int64_t with_attempts = 0, models = 0;
  for (const auto& j : jobs) {
    ++sizes[j.gpus];
    if (!j.vc.empty()) ++vcs[j.vc];
    if (!j.user.empty()) ++users[j.user];
    if (j.attempts.size() > 1) ++with_attempts;
    if (!j.model.empty()) ++models;
    const double d = j.duration ? ToSeconds(*j.duration) : 0;
    dur.push_back(d);
    gpu_time.push_back(d * j.gpus);
    total += d * j.gpus;
    for (size_t b = 0; b < kSizeBuckets.size(); ++b) {
      if (j.gpus >= kSizeBuckets[b].lo && j.gpus <= kSizeBuckets[b].hi) dur_by[b].push_back(d);
    }
  }
  const double span = ToSeconds(jobs.back().submit - jobs.front().submit);
  std::cout << fmt::format("{} ({} format{}): {} jobs submitted over {}\n", a.file, tr->format,
                           window, jobs.size(), Secs(span));
  std::cout << fmt::format(
      "  models named: {}, users: {}, virtual clusters: {}, jobs with "
      "several attempts: {}\n",
      models, users.size(), vcs.size(), with_attempts);
  std::cout << "  GPU mix (GPUs: jobs, share of jobs, share of GPU-time):\n";
  std::map<int, double> gt;
  for (const auto& j : jobs) gt[j.gpus] += (j.duration ? ToSeconds(*j.duration) : 0) * j.gpus;
  for (const auto& [g, n] : sizes) {
    std::cout << fmt::format("    {:>5}: {:>8}  {:6.2f}%  {:6.2f}%\n", g, n,
                             100.0 * n / static_cast<double>(jobs.size()),
                             total > 0 ? 100.0 * gt[g] / total : 0);
  }
  auto line = [](const std::string& name, std::vector<double> v) {
    if (v.empty()) return std::string();
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    return fmt::format("    {:<14} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", name,
                       v.size(), Secs(sum / static_cast<double>(v.size())), Secs(Quantile(v, 0.1)),
                       Secs(Quantile(v, 0.5)), Secs(Quantile(v, 0.9)), Secs(Quantile(v, 0.99)),
                       Secs(Quantile(v, 0.999)), Secs(v.back()));
  };
  std::cout << fmt::format(
      "  durations:\n    {:<14} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10} "
      "{:>10} {:>10}\n",
      "", "jobs", "mean", "p10", "p50", "p90", "p99", "p99.9", "max");
  std::cout << line("all", dur);
  for (size_t b = 0; b < kSizeBuckets.size(); ++b)
    std::cout << line(kSizeBuckets[b].name, dur_by[b]);
  std::cout << line("GPU-time", gpu_time);
  std::cout << fmt::format("  total GPU-time {:.0f} GPU-hours\n", total / 3600);
  if (!a.cluster.empty()) {
    auto topo = ResolveCluster(a.cluster);
    if (!topo.ok()) {
      std::cerr << "error: " << topo.status().message() << "\n";
      return 2;
    }
    const int g = topo->total_gpus();
    if (span > 0) {
      std::cout << fmt::format(
          "  offered load on {} ({} GPUs): {:.3f} (GPU-time / (GPUs x the {} submission "
          "span))\n",
          topo->str(), g, total / (g * span), Secs(span));
    } else {  // (it printed 0.000 over a 0 s span; found by a tester)
      std::cout << fmt::format(
          "  offered load on {} ({} GPUs): undefined (every job is submitted at the same "
          "time: GPU-time / (GPUs x a 0 s submission span)); the jobs ask {:.3f} x the "
          "cluster's GPUs at once\n",
          topo->str(), g, SumGpus(jobs) / static_cast<double>(g));
    }
    int64_t too_big = 0;
    for (const auto& j : jobs) too_big += j.gpus > g;
    if (too_big) std::cout << fmt::format("  {} jobs ask for more GPUs than it has\n", too_big);
  }
  if (!vcs.empty()) {
    std::vector<std::pair<int64_t, std::string>> top;
    for (const auto& [v, n] : vcs) top.emplace_back(n, v);
    std::sort(top.rbegin(), top.rend());
    std::cout << "  largest virtual clusters:";
    for (size_t i = 0; i < top.size() && i < 8; ++i) {
      std::cout << fmt::format(" {} ({})", top[i].second, top[i].first);
    }
    std::cout << "\n";
  }
  return 0;
}

struct SynthArgs {
  int64_t jobs = 10000;
  double load = 0.9;
  std::string cluster = "8x32x8", out, like;
  uint64_t seed = 1;
  int max_gpus = 0;  // 0: not given (the flag takes 1 and up)
  bool no_models = false;
};

int RunSynth(const SynthArgs& a) {
  auto topo = ResolveCluster(a.cluster);
  if (!topo.ok()) {
    std::cerr << "error: " << topo.status().message() << "\n";
    return 2;
  }
  if (a.jobs < 1 || !(a.load > 0)) {
    std::cerr << "error: --jobs must be >= 1 and --load > 0\n";
    return 2;
  }
  WorkloadFigures fitted;
  if (!a.like.empty()) {
    auto tr = ReadTrace(a.like);
    if (!tr.ok()) {
      std::cerr << "error: --like " << tr.status().message() << "\n";
      return 2;
    }
    fitted = FitFigures(tr->jobs, a.like);
  }
  SyntheticConfig cfg{
      .jobs = a.jobs,
      .seed = a.seed,
      .load = a.load,
      .cluster_gpus = topo->total_gpus(),
      .max_gpus = a.max_gpus > 0 ? a.max_gpus : DefaultSyntheticMaxGpus(topo->total_gpus()),
      .figures = a.like.empty() ? nullptr : &fitted,
      .models = !a.no_models};
  auto load = WriteSyntheticCsv(cfg, a.out);
  if (!load.ok()) {
    std::cerr << "error: " << load.status().message() << "\n";
    return 1;
  }
  // One job (or jobs all drawn at 0 s) spans no time: no load can be offered over it (it
  // said "drawn 0.000" with no word; found by a tester).
  const bool spanless = std::isnan(*load);
  std::cout << fmt::format(
      "wrote {}: {} jobs, seed {}, fitted to {}; offered load on {} ({} GPUs): target {}, "
      "drawn {}\n",
      a.out, a.jobs, a.seed, a.like.empty() ? PhillyFigures().source : a.like, topo->str(),
      topo->total_gpus(), a.load, spanless ? "undefined" : fmt::format("{:.3f}", *load));
  if (spanless) {
    std::cerr << fmt::format(
        "warning: every job is submitted at 0 s: with no submission span the load is undefined "
        "and --load {} could not be met; give more --jobs\n",
        a.load);
  }
  return 0;
}

}  // namespace

void AddTraceCommands(CLI::App& app, int& rc) {
  auto* trace = app.add_subcommand("trace", "convert, describe and synthesise traces");
  trace->require_subcommand(1);

  static ConvertArgs ca;
  auto* conv = trace->add_subcommand(
      "convert",
      "convert a public trace to the simulator's format (every left-out record counted)");
  conv->add_option("--from", ca.from, "philly-joblog, helios, alibaba-pai-2020 or gavel")
      ->required()
      ->check(CLI::IsMember({"philly-joblog", "helios", "alibaba-pai-2020", "gavel"}));
  conv->add_option("files", ca.files,
                   "philly-joblog: cluster_job_log; helios: cluster_log.csv; alibaba-pai-2020: "
                   "pai_job_table.csv pai_task_table.csv; gavel: FILE.trace")
      ->required();
  conv->add_option("-o,--out", ca.out, "output CSV")->required();
  conv->add_option("--throughputs", ca.throughputs,
                   "gavel: the throughputs JSON that turns steps into seconds");
  conv->add_option("--worker-type", ca.worker_type, "gavel: worker type of the throughputs")
      ->capture_default_str();
  conv->callback([&rc] { rc = RunConvert(ca); });

  static StatsArgs sa;
  auto* stats = trace->add_subcommand(
      "stats", "jobs, GPU mix, duration percentiles, users and VCs, offered load on a cluster");
  stats->add_option("file", sa.file, "trace CSV (as sim reads it)")->required();
  stats->add_option("--cluster", sa.cluster, "SxNxG or a cluster spec: report the offered load");
  stats->add_option("--from-day", sa.from_day, "only jobs submitted from this day")
      ->check(NumberIn(0, kMaxDays));
  stats->add_option("--days", sa.days, "only this many days (0 = to the end)")
      ->check(NumberIn(0, kMaxDays));
  stats->add_option("--figures", sa.figures, "cc: print the figures trace synth fits, as C++")
      ->check(CLI::IsMember({"cc"}));
  stats->callback([&rc] { rc = RunStats(sa); });

  static SynthArgs ya;
  auto* synth = trace->add_subcommand(
      "synth",
      "write a seeded synthetic trace fitted to Philly (or --like TRACE) at a target load");
  synth->add_option("--jobs", ya.jobs, "number of jobs")
      ->capture_default_str()
      ->check(IntegerIn(1, 100'000'000));
  synth->add_option("--load", ya.load, "offered load on the cluster (GPU demand / GPUs)")
      ->capture_default_str()
      ->check(NumberIn(0, 100, /*lo_open=*/true));
  synth->add_option("--cluster", ya.cluster, "SxNxG or a cluster spec")->capture_default_str();
  synth->add_option("--seed", ya.seed, "seed (the same seed gives the same file anywhere)")
      ->capture_default_str()
      ->check(Unsigned());
  synth->add_option("--like", ya.like, "fit the GPU mix, durations and VCs to this trace");
  // (0 was taken and read as the default; found by a tester. No job is smaller than 1 GPU.)
  synth
      ->add_option("--max-gpus", ya.max_gpus,
                   "leave out larger jobs (default: 32, or the cluster's size when smaller, as "
                   "sim --synthetic)")
      ->check(IntegerIn(1, 1'000'000));
  synth->add_flag("--no-models", ya.no_models, "do not give jobs a CNN model");
  synth->add_option("-o,--out", ya.out, "output CSV")->required();
  synth->callback([&rc] { rc = RunSynth(ya); });
}

}  // namespace tiresias
