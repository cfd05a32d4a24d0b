// Parameter sweeps: grid expansion, parallel runs, spreads over replicates, robust ranking,
// and the sweep's files (CSV, one SVG per knob, an HTML page).
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

bool Declares(const std::vector<std::string>& names, const std::string& key) {
  return std::find(names.begin(), names.end(), key) != names.end();
}

std::string Slashes(std::string v) {
  std::replace(v.begin(), v.end(), '/', ',');
  return v;
}

// "LO:HI" thresholds for K queues: K-1 values spaced geometrically, whole GPU-seconds.
StatusOr<std::string> GeometricThresholds(const std::string& range, int64_t queues) {
  auto parts = Split(range, ':');
  auto lo = ParseDouble(parts[0]), hi = parts.size() == 2 ? ParseDouble(parts[1]) : std::nullopt;
  if (parts.size() != 2 || !lo || !hi || *lo <= 0 || *hi < *lo) {
    return InvalidArgument(fmt::format("thresholds={}: expected LO:HI with 0 < LO <= HI", range));
  }
  if (queues <= 1) return std::string();
  std::vector<std::string> out;
  for (int64_t i = 0; i < queues - 1; ++i) {
    const double f = queues == 2 ? 0.0 : static_cast<double>(i) / static_cast<double>(queues - 2);
    out.push_back(fmt::format("{}", std::llround(*lo * std::pow(*hi / *lo, f))));
  }
  return Join(out, ",");
}

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

// Whether `key=value` of a grid axis is a valid value on its own (its name, type and range,
// CheckOptionValues) for some policy (and placement) of the grid that it applies to; the
// first refusal otherwise. (How it goes with other options is the combinations' matter.)
Status AloneValid(const std::string& key, const std::string& value, const GridBase& base,
                  const std::vector<GridAxis>& axes,
                  const std::map<std::string, std::vector<std::string>>& options_of) {
  std::vector<std::string> placements;
  for (const auto& a : axes) {
    if (a.key == "placement") placements = a.values;
  }
  if (placements.empty()) {
    placements = {base.placement.empty() ? SimConfig{}.placement : base.placement};
  }
  Status first = Status::Ok();
  for (const auto& [policy, names] : options_of) {
    for (const auto& placement : placements) {
      Status s = Status::Ok();
      if (key == "policy") {
        s = CheckOptionValues(value, {}, placement, {});
      } else if (key == "placement") {
        s = CheckOptionValues(policy, {}, value, {});
      } else if (key.rfind("placement.", 0) == 0) {
        auto names = PlacementOptionNames(placement);
        if (names.ok() && !Declares(*names, key.substr(10))) continue;  // not this placement's
        s = CheckOptionValues(policy, {}, placement, {key.substr(10) + "=" + Slashes(value)});
      } else if (!Declares(names, key) || (key == "thresholds" && value.find(':') != value.npos)) {
        continue;
      } else {
        s = CheckOptionValues(policy, {key + "=" + Slashes(value)}, placement, {});
      }
      if (s.ok()) return s;
      if (first.ok()) first = s;
    }
  }
  return first;
}

}  // namespace

StatusOr<GridAxis> ParseGridAxis(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return InvalidArgument(fmt::format("--grid {}: expected KEY=V1,V2,...", text));
  }
  GridAxis a{text.substr(0, eq), {}};
  for (auto v : Split(std::string_view(text).substr(eq + 1), ',')) {
    v = Trim(v);
    if (v.empty()) return InvalidArgument(fmt::format("--grid {}: an empty value", text));
    a.values.emplace_back(v);
  }
  return a;
}

StatusOr<std::vector<int64_t>> ParseIntRange(const std::string& text) {
  std::vector<int64_t> out;
  for (auto part : Split(text, ',')) {
    part = Trim(part);
    auto dots = part.find("..");
    if (dots == std::string_view::npos) {
      auto v = ParseInt(part);
      if (!v) return InvalidArgument(fmt::format("'{}' is not an integer", part));
      out.push_back(*v);
      continue;
    }
    auto rest = part.substr(dots + 2);
    int64_t step = 1;
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
      auto s = ParseInt(rest.substr(slash + 1));
      if (!s || *s < 1) return InvalidArgument(fmt::format("'{}': bad step", part));
      step = *s;
      rest = rest.substr(0, slash);
    }
    auto a = ParseInt(part.substr(0, dots)), b = ParseInt(rest);
    if (!a || !b || *b < *a) {
      return InvalidArgument(fmt::format("'{}' is not a range A..B (A <= B)", part));
    }
    if ((*b - *a) / step > 100000) {  // (it said "not a range")
      return InvalidArgument(fmt::format("'{}': more than 100,000 values", part));
    }
    for (int64_t v = *a; v <= *b; v += step) out.push_back(v);
  }
  if (out.empty()) return InvalidArgument("an empty list");
  return out;
}

StatusOr<std::vector<SweepPoint>> ExpandGrid(const GridBase& base,
                                             const std::vector<GridAxis>& axes,
                                             const DataSource& data,
                                             std::vector<std::string>* skipped) {
  for (const auto& a : axes) {
    if (a.values.empty()) return InvalidArgument(fmt::format("--grid {}: no values", a.key));
  }
  std::vector<SweepPoint> out;
  std::set<std::string> seen, reasons;
  std::vector<size_t> idx(axes.size(), 0);
  // Found by a tester: an axis no policy of the grid takes (a typo) was ignored, and a value
  // valid in no combination was only "skipped", both with exit 0 and a "best" configuration.
  // An option of some policies only, or a value valid with some others only, stays.
  std::vector<bool> taken(axes.size(), false);
  std::vector<std::vector<bool>> valid(axes.size());
  for (size_t a = 0; a < axes.size(); ++a) valid[a].assign(axes[a].values.size(), false);
  std::map<std::string, std::vector<std::string>> options_of;  // each policy of the grid's
  for (bool more = true; more;) {
    SweepPoint p{.policy = base.policy,
                 .placement = base.placement.empty() ? SimConfig{}.placement : base.placement};
    std::map<std::string, std::string> opts, popts;
    auto put = [](std::map<std::string, std::string>& m, const std::string& kv) {
      auto eq = kv.find('=');
      m[kv.substr(0, eq)] = eq == std::string::npos ? "" : kv.substr(eq + 1);
    };
    for (const auto& o : base.policy_opts) put(opts, o);
    for (const auto& o : base.placement_opts) put(popts, o);
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].key == "policy") p.policy = axes[a].values[idx[a]];
      if (axes[a].key == "placement") p.placement = axes[a].values[idx[a]];
    }
    auto declared = PolicyOptionNames(p.policy);
    if (!declared.ok()) return declared.status();
    options_of[p.policy] = *declared;
    std::string range;  // thresholds=LO:HI, resolved once the queue count is known
    std::vector<bool> applied(axes.size(), false);  // the axes this combination's policy takes
    for (size_t a = 0; a < axes.size(); ++a) {
      const std::string& key = axes[a].key;
      const std::string& v = axes[a].values[idx[a]];
      if (key == "policy" || key == "placement" || key.rfind("placement.", 0) == 0 ||
          Declares(*declared, key)) {
        taken[a] = applied[a] = true;
      }
      if (key == "policy" || key == "placement") {
        p.knobs[key] = v;
      } else if (v == "-") {
        p.knobs[key] = v;  // the option is not given: its default (or another axis) holds
      } else if (key.rfind("placement.", 0) == 0) {
        popts[key.substr(10)] = Slashes(v);
        p.knobs[key] = v;
      } else if (Declares(*declared, key)) {
        if (key == "thresholds" && v.find(':') != std::string::npos) {
          range = v;
        } else {
          opts[key] = Slashes(v);
        }
        p.knobs[key] = v;
      }
    }
    bool ok = true;
    if (!range.empty()) {
      if (!opts.contains("queues")) {
        return InvalidArgument(fmt::format(
            "--grid thresholds={}: a LO:HI range needs the number of queues (--grid queues=... "
            "or --opt queues=K)",
            range));
      }
      auto k = ParseInt(opts["queues"]);
      auto th = GeometricThresholds(range, k ? *k : 0);
      if (!th.ok()) return th.status();
      if (th->empty()) {
        opts.erase("thresholds");
      } else {
        opts["thresholds"] = *th;
      }
    }
    for (const auto& [k, v] : opts) p.policy_opts.push_back(k + "=" + v);
    for (const auto& [k, v] : popts) p.placement_opts.push_back(k + "=" + v);
    p.label = p.policy;
    for (const auto& o : p.policy_opts) p.label += " " + o;
    p.label += " +" + p.placement;
    for (const auto& o : p.placement_opts) p.label += " " + o;
    if (Status st = ValidatePolicies(p.policy, p.policy_opts, p.placement, p.placement_opts, data);
        !st.ok()) {
      reasons.insert(st.message());
      ok = false;
    }
    if (ok) {
      // (A value another policy ignores is not shown valid: fifo with queues=0.)
      for (size_t a = 0; a < axes.size(); ++a) {
        if (applied[a]) valid[a][idx[a]] = true;
      }
    }
    if (ok && seen.insert(p.label).second) out.push_back(std::move(p));
    // Next combination: the last axis varies fastest.
    more = false;
    for (size_t a = axes.size(); a-- > 0;) {
      if (++idx[a] < axes[a].values.size()) {
        more = true;
        break;
      }
      idx[a] = 0;
    }
  }
  if (skipped) skipped->assign(reasons.begin(), reasons.end());
  const std::string why =
      reasons.empty() ? std::string()
                      : ": " + Join(std::vector<std::string>(reasons.begin(), reasons.end()), "; ");
  for (size_t a = 0; a < axes.size(); ++a) {
    if (!taken[a]) {
      std::vector<std::string> each;
      for (const auto& [policy, names] : options_of) {
        each.push_back(fmt::format("{}: {}", policy, names.empty() ? "none" : Join(names, ", ")));
      }
      return InvalidArgument(fmt::format("--grid {}: no policy of the sweep has this option ({})",
                                         axes[a].key, Join(each, "; ")));
    }
    for (size_t k = 0; k < axes[a].values.size(); ++k) {
      if (valid[a][k] || axes[a].values[k] == "-" || out.empty()) continue;
      // Refused in every combination: an error when refused on its own too (a typo, a value
      // out of range), else a combination matter (skipped, as above).
      if (Status alone = AloneValid(axes[a].key, axes[a].values[k], base, axes, options_of);
          !alone.ok()) {
        return InvalidArgument(
            fmt::format("--grid {}={}: {}", axes[a].key, axes[a].values[k], alone.message()));
      }
    }
  }
  if (out.empty()) {
    return InvalidArgument("the grid has no valid configuration" + why);
  }
  return out;
}

const std::vector<SweepMetric>& SweepMetrics() {
  static const std::vector<SweepMetric> kMetrics = {
      {"mean_jct", "mean JCT (s)", false, [](const Metrics& m) { return m.jct.mean; }},
      {"median_jct", "median JCT (s)", false, [](const Metrics& m) { return m.jct.median; }},
      {"p99_jct", "p99 JCT (s)", false, [](const Metrics& m) { return m.jct.p99; }},
      {"p999_jct", "p99.9 JCT (s)", false, [](const Metrics& m) { return m.jct.p999; }},
      {"mean_queueing", "mean queueing (s)", false,
       [](const Metrics& m) { return m.queueing.mean; }},
      {"makespan", "makespan (s)", false, [](const Metrics& m) { return m.makespan; }},
      {"utilisation", "GPU utilisation", true, [](const Metrics& m) { return m.utilisation; }},
      {"preemptions", "preemptions", false,
       [](const Metrics& m) { return static_cast<double>(m.preemptions); }},
      {"worst_rho", "worst finish-time fairness rho", false,
       [](const Metrics& m) { return m.fairness.rho.max; }},
      {"unfair_share", "jobs with rho > 1.05", false,
       [](const Metrics& m) { return m.fairness.frac_unfair; }},
      {"jain_user", "Jain index, user slowdown", true,
       [](const Metrics& m) { return m.fairness.jain_user.value_or(NAN); }},
      {"jain_vc", "Jain index, VC slowdown", true,
       [](const Metrics& m) { return m.fairness.jain_vc.value_or(NAN); }},
      {"mean_slowdown", "mean placement slowdown", false,
       [](const Metrics& m) { return m.slowdown.mean; }},
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
    s.mean = NAN;
    return s;
  }
  s.mean = sum / static_cast<double>(s.n);
  if (s.n < 2) return s;
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

std::string SweepReport(const SweepConfig& cfg, const std::vector<SweepRun>& runs, size_t metric,
                        size_t top) {
  const auto& metrics = SweepMetrics();
  const SweepSummary sum = Summarise(cfg, runs);
  std::string out;
  for (size_t c = 0; c < cfg.clusters.size(); ++c) {
    out += fmt::format(
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
      out += fmt::format("  {:<32} {:>14} ± {:<12} {}\n", metrics[m].title,
                         fmt::format("{:.6g}", s.mean), fmt::format("{:.4g}", s.half_width),
                         cfg.points[best].label);
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
      out += fmt::format("  {:>15}  {}: {:.6g} ± {:.4g}\n", "", cfg.clusters[c].name, s.mean,
                         s.half_width);
    }
  }
  return out;
}

}  // namespace tiresias
