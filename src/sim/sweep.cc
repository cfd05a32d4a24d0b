// Parameter sweeps: parallel runs, spreads over replicates, robust ranking, and the sweep's
// files (CSV, one SVG per knob, an HTML page). The grid itself is sweep_grid.cc.
#include "sim/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <thread>

#include "common/strings.h"
#include "engine/core_builder.h"
#include "sim/simulator.h"
#include "sim/svg_plot.h"

namespace tiresias {
namespace {

double TValue975(size_t df) {
  static constexpr double kT[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                                  2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                                  2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                                  2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return 0;
  if (df <= 30) return kT[df];
  if (df <= 40) return 2.021;
  if (df <= 60) return 2.000;
  if (df <= 120) return 1.980;
  return 1.960;
}

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A value for the CSV files, exactly (the shortest text that reads back as the same double:
// 6 significant digits wrote a makespan as 2.66177e+06; found by a tester).
std::string Value(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string();
}

}  // namespace

const std::vector<SweepMetric>& SweepMetrics() {
  static const std::vector<SweepMetric> kMetrics = {
      {"mean_jct", "mean JCT (s)", false,
       [](const Metrics& m) { return OrNone(m.jct, m.jct.mean); }},
      {"median_jct", "median JCT (s)", false,
       [](const Metrics& m) { return OrNone(m.jct, m.jct.median); }},
      {"p99_jct", "p99 JCT (s)", false, [](const Metrics& m) { return OrNone(m.jct, m.jct.p99); }},
      {"p999_jct", "p99.9 JCT (s)", false,
       [](const Metrics& m) { return OrNone(m.jct, m.jct.p999); }},
      {"mean_queueing", "mean queueing (s)", false,
       [](const Metrics& m) { return OrNone(m.queueing, m.queueing.mean); }},
      {"makespan", "makespan (s)", false, [](const Metrics& m) { return m.makespan; }},
      {"utilisation", "GPU utilisation", true, [](const Metrics& m) { return m.utilisation; }},
      {"preemptions", "preemptions", false,
       [](const Metrics& m) { return static_cast<double>(m.preemptions); }},
      {"worst_rho", "worst finish-time fairness rho", false,
       [](const Metrics& m) { return OrNone(m.fairness.rho, m.fairness.rho.max); }},
      {"unfair_share", "jobs with rho > 1.05", false,
       [](const Metrics& m) { return OrNone(m.fairness.rho, m.fairness.frac_unfair); }},
      {"jain_user", "Jain index, user slowdown", true,
       [](const Metrics& m) { return m.fairness.jain_user.value_or(NAN); }},
      {"jain_vc", "Jain index, VC slowdown", true,
       [](const Metrics& m) { return m.fairness.jain_vc.value_or(NAN); }},
      {"mean_slowdown", "mean placement slowdown", false,
       [](const Metrics& m) { return OrNone(m.slowdown, m.slowdown.mean); }},
      {"finished", "jobs finished", true,
       [](const Metrics& m) { return static_cast<double>(m.finished); }},
  };
  return kMetrics;
}

const SweepMetric* FindSweepMetric(const std::string& name) {
  for (const auto& m : SweepMetrics()) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

StatusOr<std::vector<SweepRun>> RunSweep(const SweepConfig& cfg) {
  struct Task {
    size_t point, cluster, replicate;
  };
  std::vector<Task> tasks;
  // Replicates outermost and points innermost would starve nothing; the order only decides
  // which runs share the cores. Points vary slowest so that the slow ones spread out.
  for (size_t r = 0; r < cfg.replicates.size(); ++r) {
    for (size_t c = 0; c < cfg.clusters.size(); ++c) {
      for (size_t p = 0; p < cfg.points.size(); ++p) tasks.push_back({p, c, r});
    }
  }
  std::vector<SweepRun> runs(tasks.size());
  std::atomic<size_t> next{0};
  std::mutex mu;
  size_t done = 0;
  Status failed = Status::Ok();
  auto worker = [&] {
    while (true) {
      const size_t i = next++;
      if (i >= tasks.size()) return;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.ok()) return;
      }
      const Task& t = tasks[i];
      const SweepPoint& p = cfg.points[t.point];
      SimConfig c;
      c.topo = cfg.clusters[t.cluster].topo;
      c.policy = p.policy;
      c.policy_opts = p.policy_opts;
      c.placement = p.placement;
      c.placement_opts = p.placement_opts;
      c.preempt_overhead = cfg.preempt_overhead;
      c.speed = cfg.speed;
      c.data = cfg.data;
      auto t0 = std::chrono::steady_clock::now();
      auto r = RunSimulation(c, *cfg.replicates[t.replicate].jobs);
      SweepRun run{t.point, t.cluster, t.replicate, {}, 0};
      if (r.ok()) {
        const Metrics m = ComputeMetrics(*r);
        for (const auto& metric : SweepMetrics()) run.values.push_back(metric.get(m));
      }
      run.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(mu);
      if (!r.ok()) {
        if (failed.ok()) {
          failed = Status(r.status().code(),
                          fmt::format("{} on {}, {}: {}", p.label, cfg.clusters[t.cluster].name,
                                      cfg.replicates[t.replicate].name, r.status().message()));
        }
        return;
      }
      runs[i] = std::move(run);
      ++done;
      if (cfg.progress) cfg.progress(done, tasks.size());
    }
  };
  const int n = std::max(1, std::min<int>(cfg.threads, static_cast<int>(tasks.size())));
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (!failed.ok()) return failed;
  return runs;
}

Spread MeanAndInterval(const std::vector<double>& values) {
  Spread s;
  double sum = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    sum += v;
    ++s.n;
  }
  if (s.n == 0) {
    s.mean = s.half_width = NAN;
    return s;
  }
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) {  // one value has no interval (it printed "± 0"; found by a tester)
    s.half_width = NAN;
    return s;
  }
  double sq = 0;
  for (double v : values) {
    if (std::isfinite(v)) sq += (v - s.mean) * (v - s.mean);
  }
  const double sd = std::sqrt(sq / static_cast<double>(s.n - 1));
  s.half_width = TValue975(s.n - 1) * sd / std::sqrt(static_cast<double>(s.n));
  return s;
}

SweepSummary Summarise(const SweepConfig& cfg, const std::vector<SweepRun>& runs) {
  const size_t nm = SweepMetrics().size();
  std::vector<std::vector<std::vector<std::vector<double>>>> vals(
      cfg.points.size(), std::vector<std::vector<std::vector<double>>>(
                             cfg.clusters.size(), std::vector<std::vector<double>>(nm)));
  for (const auto& r : runs) {
    for (size_t m = 0; m < nm && m < r.values.size(); ++m) {
      vals[r.point][r.cluster][m].push_back(r.values[m]);
    }
  }
  SweepSummary out(cfg.points.size(),
                   std::vector<std::vector<Spread>>(cfg.clusters.size(), std::vector<Spread>(nm)));
  for (size_t p = 0; p < cfg.points.size(); ++p) {
    for (size_t c = 0; c < cfg.clusters.size(); ++c) {
      for (size_t m = 0; m < nm; ++m) out[p][c][m] = MeanAndInterval(vals[p][c][m]);
    }
  }
  return out;
}

std::vector<Robustness> RankRobust(const SweepConfig& cfg, const std::vector<SweepRun>& runs,
                                   size_t metric) {
  const bool higher = SweepMetrics()[metric].higher_better;
  const size_t nr = cfg.replicates.size(), nc = cfg.clusters.size();
  // Best value of each (cluster, replicate).
  std::vector<double> best(nc * nr, NAN);
  for (const auto& r : runs) {
    const double v = r.values[metric];
    double& b = best[r.cluster * nr + r.replicate];
    if (!std::isfinite(v) || v <= 0) continue;
    if (!std::isfinite(b) || (higher ? v > b : v < b)) b = v;
  }
  std::vector<Robustness> out(cfg.points.size());
  std::vector<double> log_sum(cfg.points.size(), 0);
  std::vector<size_t> n(cfg.points.size(), 0);
  for (size_t p = 0; p < out.size(); ++p) out[p].point = p;
  for (const auto& r : runs) {
    const double v = r.values[metric], b = best[r.cluster * nr + r.replicate];
    if (!std::isfinite(v) || !std::isfinite(b) || v <= 0) continue;
    const double ratio = higher ? b / v : v / b;
    out[r.point].worst_ratio = std::max(out[r.point].worst_ratio, ratio);
    log_sum[r.point] += std::log(ratio);
    ++n[r.point];
  }
  for (size_t p = 0; p < out.size(); ++p) {
    out[p].geomean_ratio = n[p] ? std::exp(log_sum[p] / static_cast<double>(n[p])) : NAN;
    if (!n[p]) out[p].worst_ratio = NAN;
  }
  std::stable_sort(out.begin(), out.end(), [](const Robustness& a, const Robustness& b) {
    if (std::isfinite(a.worst_ratio) != std::isfinite(b.worst_ratio))
      return std::isfinite(a.worst_ratio);
    if (a.worst_ratio != b.worst_ratio) return a.worst_ratio < b.worst_ratio;
    return a.geomean_ratio < b.geomean_ratio;
  });
  return out;
}

std::vector<LinePlot> KnobPlots(const SweepConfig& cfg, const std::vector<GridAxis>& axes,
                                const std::vector<SweepRun>& runs, size_t plot_metric) {
  const auto& metrics = SweepMetrics();
  const bool higher = metrics[plot_metric].higher_better;
  const size_t nr = cfg.replicates.size();
  std::vector<double> best_of(cfg.clusters.size() * nr, NAN);  // per cluster and replicate
  for (const auto& r : runs) {
    const double v = r.values[plot_metric];
    double& b = best_of[r.cluster * nr + r.replicate];
    if (std::isfinite(v) && v > 0 && (!std::isfinite(b) || (higher ? v > b : v < b))) b = v;
  }
  // ratio[point][cluster]: the point's value over the best, one per replicate
  std::vector<std::vector<std::vector<double>>> ratio(
      cfg.points.size(), std::vector<std::vector<double>>(cfg.clusters.size()));
  for (const auto& r : runs) {
    const double v = r.values[plot_metric], b = best_of[r.cluster * nr + r.replicate];
    if (std::isfinite(v) && std::isfinite(b) && v > 0) {
      ratio[r.point][r.cluster].push_back(higher ? b / v : v / b);
    }
  }
  std::vector<LinePlot> plots;
  for (const auto& a : axes) {
    LinePlot plot{fmt::format("{}: the best configuration with each value", a.key),
                  a.key,
                  fmt::format("{} / the best's in its replicate", metrics[plot_metric].name),
                  a.values,
                  {}};
    for (size_t c = 0; c < cfg.clusters.size(); ++c) {
      PlotSeries s{cfg.clusters[c].name, {}, {}, {}};
      for (const auto& value : a.values) {
        Spread best{.mean = NAN};
        for (size_t p = 0; p < cfg.points.size(); ++p) {
          auto it = cfg.points[p].knobs.find(a.key);
          if (it == cfg.points[p].knobs.end() || it->second != value) continue;
          const Spread sp = MeanAndInterval(ratio[p][c]);
          if (std::isfinite(sp.mean) && (!std::isfinite(best.mean) || sp.mean < best.mean))
            best = sp;
        }
        s.y.push_back(best.mean);
        s.lo.push_back(best.mean - best.half_width);
        s.hi.push_back(best.mean + best.half_width);
      }
      plot.series.push_back(std::move(s));
    }
    plots.push_back(std::move(plot));
  }
  return plots;
}

Status WriteSweepDir(const std::string& dir, const SweepConfig& cfg,
                     const std::vector<GridAxis>& axes, const std::vector<SweepRun>& runs,
                     size_t plot_metric) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  // A directory used before: the plots of knobs this sweep does not have go (index.html no
  // longer shows them; found by a tester).
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("knob_") && name.ends_with(".svg")) std::filesystem::remove(e.path(), ec);
  }
  auto write = [&](const std::string& name, const std::string& text) -> Status {
    std::ofstream f(dir + "/" + name, std::ios::binary);
    f << text;
    if (!f) return IoError(fmt::format("{}/{}: write failed", dir, name));
    return Status::Ok();
  };
  const auto& metrics = SweepMetrics();
  std::string knob_cols;
  for (const auto& a : axes) {
    knob_cols += ',';
    knob_cols += Csv(a.key);
  }
  auto knobs_of = [&](const SweepPoint& p) {
    std::string s;
    for (const auto& a : axes) {
      auto it = p.knobs.find(a.key);
      s += ',';
      s += Csv(it == p.knobs.end() ? "" : it->second);
    }
    return s;
  };
  // runs.csv
  std::string text = "point,config" + knob_cols + ",cluster,replicate";
  for (const auto& m : metrics) text += std::string(",") + m.name;
  text += ",wall_seconds\n";
  for (const auto& r : runs) {
    const SweepPoint& p = cfg.points[r.point];
    text += fmt::format("{},{}{},{},{}", r.point, Csv(p.label), knobs_of(p),
                        Csv(cfg.clusters[r.cluster].name), Csv(cfg.replicates[r.replicate].name));
    for (double v : r.values) {
      text += ',';
      text += Value(v);
    }
    text += fmt::format(",{:.3f}\n", r.wall_seconds);
  }
  if (Status s = write("runs.csv", text); !s.ok()) return s;
  // summary.csv
  const SweepSummary sum = Summarise(cfg, runs);
  text = "point,config" + knob_cols + ",cluster,replicates";
  for (const auto& m : metrics) text += fmt::format(",{0}_mean,{0}_ci95", m.name);
  text += "\n";
  for (size_t p = 0; p < cfg.points.size(); ++p) {
    for (size_t c = 0; c < cfg.clusters.size(); ++c) {
      text += fmt::format("{},{}{},{},{}", p, Csv(cfg.points[p].label), knobs_of(cfg.points[p]),
                          Csv(cfg.clusters[c].name), sum[p][c][0].n);
      for (const auto& s : sum[p][c])
        text += fmt::format(",{},{}", Value(s.mean), Value(s.half_width));
      text += "\n";
    }
  }
  if (Status s = write("summary.csv", text); !s.ok()) return s;
  // robust.csv
  const auto robust = RankRobust(cfg, runs, plot_metric);
  text = fmt::format("rank,point,config{},worst_ratio_{},geomean_ratio_{}\n", knob_cols,
                     metrics[plot_metric].name, metrics[plot_metric].name);
  for (size_t i = 0; i < robust.size(); ++i) {
    const SweepPoint& p = cfg.points[robust[i].point];
    text += fmt::format("{},{},{}{},{},{}\n", i + 1, robust[i].point, Csv(p.label), knobs_of(p),
                        Value(robust[i].worst_ratio), Value(robust[i].geomean_ratio));
  }
  if (Status s = write("robust.csv", text); !s.ok()) return s;
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>tiresias sweep</title>"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
      "td:first-child{text-align:left}</style></head><body>\n<h1>tiresias sweep</h1>\n";
  html += fmt::format(
      "<p>{} configurations x {} clusters x {} replicates = {} runs; metric: {}."
      "</p>\n",
      cfg.points.size(), cfg.clusters.size(), cfg.replicates.size(), runs.size(),
      XmlEscape(metrics[plot_metric].title));
  const auto plots = KnobPlots(cfg, axes, runs, plot_metric);
  for (size_t k = 0; k < axes.size(); ++k) {
    const GridAxis& a = axes[k];
    const LinePlot& plot = plots[k];
    std::string name = a.key;
    for (char& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
    }
    const std::string svg = RenderSvg(plot);
    if (Status s = write("knob_" + name + ".svg", svg); !s.ok()) return s;
    html += "<h2>" + XmlEscape(a.key) + "</h2>\n" + svg;
  }
  html +=
      "<h2>Most robust configurations</h2>\n<table><tr><th>config</th><th>worst ratio</th>"
      "<th>geometric mean ratio</th></tr>\n";
  for (size_t i = 0; i < robust.size() && i < 20; ++i) {
    html += fmt::format("<tr><td>{}</td><td>{:.3f}</td><td>{:.3f}</td></tr>\n",
                        XmlEscape(cfg.points[robust[i].point].label), robust[i].worst_ratio,
                        robust[i].geomean_ratio);
  }
  html += "</table>\n<pre>" + XmlEscape(SweepReport(cfg, runs, plot_metric)) +
          "</pre>\n</body></html>\n";
  return write("index.html", html);
}

namespace {

// "± HALF" of a spread, or what stands for none: one value has no interval.
std::string PlusMinus(const Spread& s) {
  return std::isfinite(s.half_width) ? fmt::format("± {:.4g}", s.half_width)
                                     : std::string("(no interval)");
}

}  // namespace

std::string SweepReport(const SweepConfig& cfg, const std::vector<SweepRun>& runs, size_t metric,
                        size_t top) {
  const auto& metrics = SweepMetrics();
  const SweepSummary sum = Summarise(cfg, runs);
  std::string out;
  for (size_t c = 0; c < cfg.clusters.size(); ++c) {
    out += cfg.replicates.size() == 1
               ? fmt::format(
                     "cluster {} (1 replicate): best configuration per metric; one replicate "
                     "has no interval (--seeds or --windows give several)\n",
                     cfg.clusters[c].name)
               : fmt::format(
                     "cluster {} ({} replicates): best configuration per metric, mean ± 95% "
                     "interval\n",
                     cfg.clusters[c].name, cfg.replicates.size());
    for (size_t m = 0; m < metrics.size(); ++m) {
      size_t best = cfg.points.size();
      for (size_t p = 0; p < cfg.points.size(); ++p) {
        const double v = sum[p][c][m].mean;
        if (!std::isfinite(v)) continue;
        if (best == cfg.points.size() ||
            (metrics[m].higher_better ? v > sum[best][c][m].mean : v < sum[best][c][m].mean)) {
          best = p;
        }
      }
      if (best == cfg.points.size()) continue;
      const Spread& s = sum[best][c][m];
      out += fmt::format("  {:<32} {:>14} {:<14} {}\n", metrics[m].title,
                         fmt::format("{:.6g}", s.mean), PlusMinus(s), cfg.points[best].label);
    }
  }
  const auto robust = RankRobust(cfg, runs, metric);
  out += fmt::format(
      "most robust on {} (value / the best configuration's, per cluster and replicate):\n  {:>6} "
      "{:>8}  configuration\n",
      metrics[metric].title, "worst", "geomean");
  for (size_t i = 0; i < robust.size() && i < top; ++i) {
    out += fmt::format("  {:>6.3f} {:>8.3f}  {}\n", robust[i].worst_ratio, robust[i].geomean_ratio,
                       cfg.points[robust[i].point].label);
    for (size_t c = 0; c < cfg.clusters.size(); ++c) {
      const Spread& s = sum[robust[i].point][c][metric];
      out +=
          fmt::format("  {:>15}  {}: {:.6g} {}\n", "", cfg.clusters[c].name, s.mean, PlusMinus(s));
    }
  }
  return out;
}

}  // namespace tiresias
