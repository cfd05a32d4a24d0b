// Reports of simulation runs: tables, per-job CSV and summary.json.
#include "sim/report.h"

#include <fcntl.h>
#include <fmt/compile.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <unordered_map>

namespace tiresias {
namespace {

// A mean, or NaN ("-" in the tables) over no jobs (an empty size bucket said 0.00).
double MeanOrNone(const Stats& s) {
  return OrNone(s, s.mean);
}

// `v` as `spec` formats it, or "-" for NaN (a figure over no job: null in summary.json).
std::string Fixed(double v, const char* spec) {
  return std::isnan(v) ? std::string("-") : fmt::format(fmt::runtime(spec), v);
}

// A mean over the `n` finished multi-GPU jobs, NaN over none.
double MultiGpu(const Metrics& m, double v) {
  return m.multi_gpu > 0 ? v : NAN;
}

struct Row {
  std::string name;
  double (*get)(const Metrics&);
  const char* fmt;
};

const std::vector<Row>& Rows() {
  static const std::vector<Row> kRows = {
      {"jobs finished", [](const Metrics& m) { return double(m.finished); }, "{:.0f}"},
      {"jobs rejected", [](const Metrics& m) { return double(m.rejected); }, "{:.0f}"},
      {"mean JCT (s)", [](const Metrics& m) { return MeanOrNone(m.jct); }, "{:.2f}"},
      {"median JCT (s)", [](const Metrics& m) { return OrNone(m.jct, m.jct.median); }, "{:.2f}"},
      {"p95 JCT (s)", [](const Metrics& m) { return OrNone(m.jct, m.jct.p95); }, "{:.2f}"},
      {"p99 JCT (s)", [](const Metrics& m) { return OrNone(m.jct, m.jct.p99); }, "{:.2f}"},
      {"p99.9 JCT (s)", [](const Metrics& m) { return OrNone(m.jct, m.jct.p999); }, "{:.2f}"},
      {"mean queueing (s)", [](const Metrics& m) { return MeanOrNone(m.queueing); }, "{:.2f}"},
      {"p95 queueing (s)", [](const Metrics& m) { return OrNone(m.queueing, m.queueing.p95); },
       "{:.2f}"},
      {"mean JCT 1 GPU (s)", [](const Metrics& m) { return MeanOrNone(m.jct_by_size[0]); },
       "{:.2f}"},
      {"mean JCT 2-4 (s)", [](const Metrics& m) { return MeanOrNone(m.jct_by_size[1]); }, "{:.2f}"},
      {"mean JCT 5-8 (s)", [](const Metrics& m) { return MeanOrNone(m.jct_by_size[2]); }, "{:.2f}"},
      {"mean JCT >8 (s)", [](const Metrics& m) { return MeanOrNone(m.jct_by_size[3]); }, "{:.2f}"},
      {"makespan (s)", [](const Metrics& m) { return m.makespan; }, "{:.0f}"},
      {"GPU utilisation", [](const Metrics& m) { return m.utilisation; }, "{:.3f}"},
      {"preemptions", [](const Metrics& m) { return double(m.preemptions); }, "{:.0f}"},
      {"promotions", [](const Metrics& m) { return double(m.promotions); }, "{:.0f}"},
      {"overhead (GPU-s)", [](const Metrics& m) { return m.overhead_gpu_seconds; }, "{:.0f}"},
      {"lost work (GPU-h)", [](const Metrics& m) { return m.lost_gpu_hours; }, "{:.1f}"},
      {"mean slowdown", [](const Metrics& m) { return MeanOrNone(m.slowdown); }, "{:.3f}"},
      {"p95 slowdown", [](const Metrics& m) { return OrNone(m.slowdown, m.slowdown.p95); },
       "{:.3f}"},
      {"frag-idle GPUs (avg)", [](const Metrics& m) { return m.frag_idle_gpus; }, "{:.1f}"},
      {"nodes/job (>1 GPU)", [](const Metrics& m) { return MultiGpu(m, m.mean_nodes); }, "{:.2f}"},
      {"switches/job (>1 GPU)", [](const Metrics& m) { return MultiGpu(m, m.mean_switches); },
       "{:.2f}"},
      {"unknown-model jobs", [](const Metrics& m) { return double(m.unknown_models); }, "{:.0f}"},
      {"worst rho (FTF)",
       [](const Metrics& m) { return OrNone(m.fairness.rho, m.fairness.rho.max); }, "{:.2f}"},
      {"jobs rho > 1.05",
       [](const Metrics& m) { return OrNone(m.fairness.rho, m.fairness.frac_unfair); }, "{:.3f}"},
      {"Jain user slowdown", [](const Metrics& m) { return m.fairness.jain_user.value_or(NAN); },
       "{:.3f}"},
      {"Jain VC slowdown", [](const Metrics& m) { return m.fairness.jain_vc.value_or(NAN); },
       "{:.3f}"},
  };
  return kRows;
}

}  // namespace

std::string SummaryTable(const Metrics& m) {
  std::string out = fmt::format("{}: {} jobs\n", m.label, m.jobs);
  out += fmt::format("  {:<20} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "", "mean", "median", "p95",
                     "p99", "p99.9");
  auto line = [&](const std::string& name, const Stats& s) {
    if (s.n == 0) return;
    out += fmt::format("  {:<20} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f}\n", name, s.mean,
                       s.median, s.p95, s.p99, s.p999);
  };
  line("JCT (s)", m.jct);
  line("queueing delay (s)", m.queueing);
  for (size_t b = 0; b < kSizeBuckets.size(); ++b) {
    line(fmt::format("JCT {} (s)", kSizeBuckets[b].name), m.jct_by_size[b]);
  }
  out += fmt::format("  finished {}  rejected {}  unfinished {}\n", m.finished, m.rejected,
                     m.unfinished);
  if (m.evictions > 0) {
    out += fmt::format("  evictions {} (runs stopped by capacity changes)\n", m.evictions);
  }
  out += fmt::format(
      "  makespan {:.0f} s  GPU utilisation {:.3f}  preemptions {}  promotions {}"
      "  overhead {:.0f} GPU-s{}\n",
      m.makespan, m.utilisation, m.preemptions, m.promotions, m.overhead_gpu_seconds,
      m.restarts ? fmt::format("  restarts (replayed attempts) {}", m.restarts) : "");
  if (m.lost_gpu_hours > 0) {
    out +=
        fmt::format("  work lost to preemption {:.1f} GPU-h (progress since the last checkpoint)\n",
                    m.lost_gpu_hours);
  }
  // A figure over no job is "-", as summary.json's null (it printed 0.000; found by a tester).
  const Stats& rho = m.fairness.rho;
  out += fmt::format(
      "  slowdown mean {} p95 {}  fragmentation-idle GPUs {:.1f}  nodes/job {}"
      "  switches/job {} (jobs > 1 GPU)\n",
      Fixed(MeanOrNone(m.slowdown), "{:.3f}"), Fixed(OrNone(m.slowdown, m.slowdown.p95), "{:.3f}"),
      m.frag_idle_gpus, Fixed(MultiGpu(m, m.mean_nodes), "{:.2f}"),
      Fixed(MultiGpu(m, m.mean_switches), "{:.2f}"));
  auto jain = [](const std::optional<double>& v, size_t n) {
    return v ? fmt::format("{:.3f} over {}", *v, n) : std::string("- (none named)");
  };
  out += fmt::format(
      "  finish-time fairness rho mean {} worst {}, {}% of jobs above {:.2f}; Jain "
      "index of mean slowdown per user {}, per VC {}\n",
      Fixed(MeanOrNone(rho), "{:.2f}"), Fixed(OrNone(rho, rho.max), "{:.2f}"),
      Fixed(OrNone(rho, 100 * m.fairness.frac_unfair), "{:.1f}"), kRhoUnfair,
      jain(m.fairness.jain_user, m.fairness.users), jain(m.fairness.jain_vc, m.fairness.vcs));
  if (!m.by_vc.empty()) {
    std::vector<const VcStats*> vcs;
    for (const auto& v : m.by_vc) vcs.push_back(&v);
    // Largest mean delay first, as the line says (it was by job count; found by a tester);
    // equal delays by job count, then name.
    std::stable_sort(vcs.begin(), vcs.end(), [](auto* a, auto* b) {
      if (a->queueing.mean != b->queueing.mean) return a->queueing.mean > b->queueing.mean;
      return a->finished > b->finished;
    });
    out += "  mean queueing delay by VC (largest first; all in summary.json):";
    for (size_t i = 0; i < vcs.size() && i < 6; ++i) {
      out += fmt::format(" {} {:.0f} s ({} jobs){}", vcs[i]->vc, vcs[i]->queueing.mean,
                         vcs[i]->finished, i + 1 < std::min<size_t>(vcs.size(), 6) ? "," : "");
    }
    out += "\n";
  }
  if (m.unknown_models > 0) {
    out +=
        fmt::format("  {} jobs had no model profile and ran at packed speed\n", m.unknown_models);
  }
  if (!m.placement_note.empty()) out += "  " + m.placement_note + "\n";
  return out;
}

std::string VcTable(const std::vector<Metrics>& runs) {
  std::map<std::string, int> quota;  // VC -> quota (from the first run that has one)
  for (const auto& r : runs) {
    for (const auto& v : r.by_vc) {
      if (v.quota >= 0 && !quota.contains(v.vc)) quota[v.vc] = v.quota;
    }
  }
  if (quota.empty()) return "";
  std::vector<std::string> names;
  for (const auto& r : runs) {
    for (const auto& v : r.by_vc) {
      if (std::find(names.begin(), names.end(), v.vc) == names.end()) names.push_back(v.vc);
    }
  }
  std::stable_sort(names.begin(), names.end(), [&](const auto& a, const auto& b) {
    return (quota.contains(a) ? quota[a] : -1) > (quota.contains(b) ? quota[b] : -1);
  });
  size_t w = 14;
  for (const auto& r : runs) w = std::max(w, r.label.size() + 2);
  std::string out = "per VC: mean JCT (s) / GPU-time received over entitled (quota x makespan)\n";
  out += fmt::format("{:<10} {:>6}", "VC", "quota");
  for (const auto& r : runs) out += fmt::format(" {:>{}}", r.label, w + 7);
  out += '\n';
  for (const auto& name : names) {
    out += fmt::format("{:<10} {:>6}", name,
                       quota.contains(name) ? std::to_string(quota[name]) : std::string("-"));
    for (const auto& r : runs) {
      const VcStats* v = nullptr;
      for (const auto& x : r.by_vc) {
        if (x.vc == name) v = &x;
      }
      std::string cell = "-";
      if (v) {
        cell = fmt::format("{:.0f}", v->jct.mean);
        cell += v->entitled_gpu_hours > 0
                    ? fmt::format(" / {:.2f}", v->gpu_hours / v->entitled_gpu_hours)
                    : std::string(" /    -");
      }
      out += fmt::format(" {:>{}}", cell, w + 7);
    }
    out += '\n';
  }
  auto opt = [](const std::optional<double>& x) {
    return x ? fmt::format("{:.3f}", *x) : std::string("-");
  };
  out += fmt::format("{:<17}", "Jain (slowdown)");
  for (const auto& r : runs) out += fmt::format(" {:>{}}", opt(r.fairness.jain_vc), w + 7);
  out += fmt::format("\n{:<17}", "Jain (recv/ent)");
  for (const auto& r : runs) out += fmt::format(" {:>{}}", opt(r.fairness.jain_vc_share), w + 7);
  return out + '\n';
}

std::string CompareTable(const std::vector<Metrics>& runs) {
  if (runs.empty()) return "";
  size_t w = 18;
  for (const auto& r : runs) w = std::max(w, r.label.size() + 2);
  std::string out = fmt::format("{:<20}", "metric");
  for (size_t i = 0; i < runs.size(); ++i) {
    out += fmt::format(" {:>{}}", runs[i].label, w);
    if (i) out += fmt::format(" {:>7}", "ratio");
  }
  out += '\n';
  for (const Row& row : Rows()) {
    out += fmt::format("{:<20}", row.name);
    double base = row.get(runs[0]);
    for (size_t i = 0; i < runs.size(); ++i) {
      double v = row.get(runs[i]);
      out += fmt::format(" {:>{}}", Fixed(v, row.fmt), w);
      if (i) {
        out += base != 0 && !std::isnan(v) && !std::isnan(base) ? fmt::format(" {:>7.3f}", v / base)
                                                                : fmt::format(" {:>7}", "-");
      }
    }
    out += '\n';
  }
  for (const auto& r : runs) {
    if (!r.placement_note.empty()) out += fmt::format("{}: {}\n", r.label, r.placement_note);
  }
  return out;
}

namespace {

// Appends ms as seconds with 3 decimals, or nothing for a time that did not happen (< 0).
// Integer arithmetic: the text "{:.3f}" gives for ms / 1000.0, without formatting a double.
void AppendSecs(fmt::memory_buffer& out, Time ms) {
  if (ms >= 0) fmt::format_to(fmt::appender(out), FMT_COMPILE("{}.{:03}"), ms / 1000, ms % 1000);
}

// Appends x as "{:.3f}" (digits 3) or "{:.4f}" (digits 4) does. fmt formats a double at a
// fixed precision digit by digit (Dragon4), the bulk of a jobs.csv; x x 10^digits rounded to
// an integer is the same text unless it lies within 10^-6 of a tie (the product's rounding
// error is below 10^-7 under 10^9), which goes to fmt, as do negative and huge values.
void AppendFixed(fmt::memory_buffer& out, double x, int digits) {
  const int64_t scale = digits == 3 ? 1000 : 10000;
  const double v = x * static_cast<double>(scale);
  const double r = std::nearbyint(v);
  if (x >= 0 && v < 1e9 && std::abs(std::abs(v - r) - 0.5) > 1e-6) {
    const auto n = static_cast<int64_t>(r);
    if (digits == 3) {
      fmt::format_to(fmt::appender(out), FMT_COMPILE("{}.{:03}"), n / scale, n % scale);
    } else {
      fmt::format_to(fmt::appender(out), FMT_COMPILE("{}.{:04}"), n / scale, n % scale);
    }
  } else if (digits == 3) {
    fmt::format_to(fmt::appender(out), "{:.3f}", x);
  } else {
    fmt::format_to(fmt::appender(out), "{:.4f}", x);
  }
}

}  // namespace

std::string JctCdfCsv(const SimResult& r) {
  std::vector<double> jct;
  for (const auto& j : r.jobs) {
    if (j.state == JobState::kFinished) jct.push_back(ToSeconds(j.end - j.submit));
  }
  std::sort(jct.begin(), jct.end());
  fmt::memory_buffer out;
  fmt::format_to(fmt::appender(out), "fraction,jct_seconds\n");
  for (int p = 0; !jct.empty() && p <= 1000; ++p) {
    AppendFixed(out, p / 1000.0, 3);
    out.push_back(',');
    AppendFixed(out, Quantile(jct, p / 1000.0), 3);
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

// One buffer, formatted in place: no string per field or row, no double formatted digit by
// digit.
std::string JobsCsv(const SimResult& r) {
  fmt::memory_buffer out;
  out.reserve(r.jobs.size() * 110 + 256);
  const auto put = fmt::appender(out);
  fmt::format_to(
      put,
      "id,gpus,model,state,submit,first_start,end,jct,queueing_delay,preemptions,promotions,"
      "final_queue,overhead,slowdown,nodes,switches,restarts,lost_gpu_hours,vc\n");
  for (const auto& j : r.jobs) {
    const bool done = j.state == JobState::kFinished;
    fmt::format_to(put, FMT_COMPILE("{},{},{},{},"), j.id.value(), j.gpus, r.name(j.model),
                   ToString(j.state));
    AppendSecs(out, j.submit);
    out.push_back(',');
    AppendSecs(out, j.first_start);
    out.push_back(',');
    AppendSecs(out, j.end);
    out.push_back(',');
    if (done) AppendSecs(out, j.end - j.submit);
    out.push_back(',');
    if (j.first_start >= 0) AppendSecs(out, j.first_start - j.submit);
    fmt::format_to(put, FMT_COMPILE(",{},{},{},"), j.preemptions, j.promotions, j.final_queue + 1);
    AppendSecs(out, j.overhead);
    out.push_back(',');
    if (done) AppendFixed(out, j.slowdown(), 4);
    fmt::format_to(put, FMT_COMPILE(",{},{},{},"), j.nodes, j.switches, j.restarts);
    AppendFixed(out, static_cast<double>(j.lost) / (3600.0 * kMsPerSecond), 4);
    out.push_back(',');
    out.append(r.name(j.vc));
    out.push_back('\n');
  }
  return fmt::to_string(out);
}

namespace {

// Writes `text` to `path` (created or truncated); an error names the path and the reason.
Status WriteText(const std::string& path, const std::string& text, const char* what) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(fmt::format("{}: cannot write {}: {}", path, what, strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return IoError(fmt::format("{}: cannot write {}: {}", path, what, strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) {
    return IoError(fmt::format("{}: cannot write {}: {}", path, what, strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

std::string SeriesCsv(const SimResult& r) {
  fmt::memory_buffer out;
  const size_t k = r.series.empty() ? 0 : r.series.front().waiting.size();
  fmt::format_to(fmt::appender(out),
                 "time_s,busy_gpus,free_gpus,unusable_gpus,running_jobs,waiting_jobs");
  for (size_t q = 1; q <= k; ++q) fmt::format_to(fmt::appender(out), ",running_q{}", q);
  for (size_t q = 1; q <= k; ++q) fmt::format_to(fmt::appender(out), ",waiting_q{}", q);
  fmt::format_to(fmt::appender(out), ",preemptions\n");
  uint64_t before = 0;
  for (const SeriesPoint& p : r.series) {
    int running = 0, waiting = 0;
    for (int n : p.running) running += n;
    for (int n : p.waiting) waiting += n;
    fmt::format_to(fmt::appender(out), "{},{},{},{},{},{}", ToSeconds(p.t), p.busy_gpus,
                   p.free_gpus, p.unusable_gpus, running, waiting);
    for (int n : p.running) fmt::format_to(fmt::appender(out), ",{}", n);
    for (int n : p.waiting) fmt::format_to(fmt::appender(out), ",{}", n);
    fmt::format_to(fmt::appender(out), ",{}\n", p.preemptions - before);
    before = p.preemptions;
  }
  return fmt::to_string(out);
}

std::string ForecastsCsv(const SimResult& r) {
  std::unordered_map<JobId, Time> started;
  for (const JobResult& j : r.jobs) started.emplace(j.id, j.first_start);
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out),
                 "job_id,at_s,p10_s,p50_s,p90_s,naive_s,start_s,raw_p10_s,raw_p90_s\n");
  const auto t = [](std::optional<Time> v) {
    return v && *v >= 0 ? fmt::format("{}", ToSeconds(*v)) : std::string();
  };
  for (const ForecastCheck& c : r.forecasts) {
    auto it = started.find(c.job);
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{},{}\n", c.job.value(),
                   ToSeconds(c.at), t(c.p10), t(c.p50), t(c.p90), ToSeconds(c.naive),
                   t(it == started.end() ? std::nullopt : std::optional<Time>(it->second)),
                   t(c.raw_p10), t(c.raw_p90));
  }
  return fmt::to_string(out);
}

Status WriteRunDir(const std::string& dir, const SimResult& r, const Metrics& m,
                   const nlohmann::json& config) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError(fmt::format("{}: cannot create: {}", dir, ec.message()));
  if (Status st = WriteText(dir + "/jobs.csv", JobsCsv(r), "the jobs table"); !st.ok()) return st;
  if (Status st = WriteText(dir + "/jct_cdf.csv", JctCdfCsv(r), "the JCT CDF"); !st.ok()) {
    return st;
  }
  // A file this run has no content for is removed: an earlier run's in the same directory
  // would read as this one's (found by a tester: a fifo run's forecasts.csv beside dlas').
  const auto optional = [&](const std::string& name, bool have, auto text,
                            const char* what) -> Status {
    const std::string path = dir + "/" + name;
    if (have) return WriteText(path, text(r), what);
    if (std::filesystem::remove(path, ec); ec) {
      return IoError(
          fmt::format("{}: cannot remove an earlier run's file: {}", path, ec.message()));
    }
    return Status::Ok();
  };
  if (Status st = optional("timeseries.csv", !r.series.empty(), SeriesCsv, "the time series");
      !st.ok()) {
    return st;
  }
  if (Status st =
          optional("forecasts.csv", !r.forecasts.empty(), ForecastsCsv, "the start forecasts");
      !st.ok()) {
    return st;
  }
  nlohmann::json summary = ToJson(m);
  summary["config"] = config;
  return WriteText(dir + "/summary.json", summary.dump(2) + "\n", "the summary");
}

Status WriteEventLog(const std::string& path, const std::vector<Event>& events) {
  std::string text;
  for (const Event& e : events) {
    text += ToJsonLine(e);
    text += '\n';
  }
  return WriteText(path, text, "the event log");
}

}  // namespace tiresias
