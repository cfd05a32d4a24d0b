// The data of the simulator's HTML report (see report_data.h).
#include "sim/report_data.h"

#include <algorithm>
#include <cmath>

namespace tiresias {

nlohmann::json CdfPoints(std::vector<double> values, size_t points) {
  std::sort(values.begin(), values.end());
  nlohmann::json x = nlohmann::json::array(), y = nlohmann::json::array();
  const size_t n = values.size();
  if (n == 0 || points < 2) return {{"x", x}, {"y", y}};
  const size_t take = std::min(n, points);
  for (size_t k = 0; k < take; ++k) {
    // Rank k of take-1 spread over 0..n-1; the last one is the maximum.
    const size_t i = take == n ? k : (k * (n - 1) + (take - 2)) / (take - 1);
    x.push_back(values[i]);
    y.push_back(static_cast<double>(i + 1) / static_cast<double>(n));
  }
  return {{"x", x}, {"y", y}};
}

namespace {

nlohmann::json SeriesJson(const SimResult& r) {
  nlohmann::json t = nlohmann::json::array(), busy = t, waiting = t, running = t, per_hour = t;
  const size_t n = r.series.size();
  const size_t per = std::max<size_t>(1, (n + kSeriesPoints - 1) / kSeriesPoints);
  uint64_t before = n > 0 ? r.series.front().preemptions : 0;
  for (size_t b = 0; b < n; b += per) {
    const size_t e = std::min(n, b + per);
    double sb = 0, sw = 0, sr = 0;
    for (size_t i = b; i < e; ++i) {
      const SeriesPoint& p = r.series[i];
      sb += p.busy_gpus;
      for (int v : p.waiting) sw += v;
      for (int v : p.running) sr += v;
    }
    const double k = static_cast<double>(e - b);
    const SeriesPoint& last = r.series[e - 1];
    const double hours = ToSeconds(last.t - r.series[b].t) / 3600.0 +
                         (n > 1 ? ToSeconds(r.series[1].t - r.series[0].t) / 3600.0 : 1.0);
    t.push_back(ToSeconds(r.series[b].t) / 86400.0);
    busy.push_back(sb / k);
    waiting.push_back(sw / k);
    running.push_back(sr / k);
    per_hour.push_back(static_cast<double>(last.preemptions - before) / hours);
    before = last.preemptions;
  }
  return {{"t_days", t},
          {"busy", busy},
          {"waiting", waiting},
          {"running", running},
          {"preemptions_per_hour", per_hour}};
}

}  // namespace

nlohmann::json ReportData(const std::vector<SimResult>& runs, const std::vector<Metrics>& metrics,
                          const std::string& title, const std::string& subtitle) {
  nlohmann::json out = {{"title", title},
                        {"subtitle", subtitle},
                        {"total_gpus", runs.empty() ? 0 : runs.front().total_gpus},
                        {"size_classes", nlohmann::json::array()},
                        {"runs", nlohmann::json::array()}};
  for (const SizeBucket& b : kSizeBuckets) out["size_classes"].push_back(b.name);
  for (size_t i = 0; i < runs.size() && i < metrics.size(); ++i) {
    const SimResult& r = runs[i];
    std::vector<double> jct, queueing;
    for (const JobResult& j : r.jobs) {
      if (j.state != JobState::kFinished) continue;
      jct.push_back(ToSeconds(j.end - j.submit));
      queueing.push_back(ToSeconds(j.first_start - j.submit));
    }
    nlohmann::json by_size = nlohmann::json::array();
    for (const Stats& s : metrics[i].jct_by_size) {
      by_size.push_back(s.n > 0 ? nlohmann::json(s.mean) : nlohmann::json(nullptr));
    }
    out["runs"].push_back({{"label", r.label},
                           {"summary", ToJson(metrics[i])},
                           {"jct_cdf", CdfPoints(std::move(jct))},
                           {"queueing_cdf", CdfPoints(std::move(queueing))},
                           {"jct_by_size", by_size},
                           {"series", SeriesJson(r)}});
  }
  return out;
}

Duration ReportSeriesStep(const std::vector<JobSpec>& jobs) {
  if (jobs.empty()) return Seconds(60);
  const Duration span = jobs.back().submit - jobs.front().submit;
  // The run goes on after the last submit; 1.5x the span is a fair guess for the points.
  const Duration step = span * 3 / 2 / static_cast<Duration>(kSeriesPoints);
  return std::max<Duration>(Seconds(60), step);
}

}  // namespace tiresias
