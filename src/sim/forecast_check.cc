// How start forecasts made at submit compare with what happened (see forecast_check.h).
#include "sim/forecast_check.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace tiresias {

ForecastQuality AssessForecasts(const SimResult& r) {
  std::unordered_map<JobId, Time> started;
  for (const JobResult& j : r.jobs) {
    if (j.first_start >= 0) started.emplace(j.id, j.first_start);
  }
  std::vector<double> err, naive, below, above;
  size_t covered = 0, early = 0, late = 0;
  const auto scale = [](Time t, Time at) {
    return std::log(ToSeconds(std::max<Time>(0, t - at)) + 60);
  };
  for (const ForecastCheck& c : r.forecasts) {
    auto it = started.find(c.job);
    if (it == started.end()) continue;
    const Time actual = it->second;
    err.push_back(c.p50 ? std::abs(ToSeconds(*c.p50 - actual)) : ToSeconds(actual - c.at));
    naive.push_back(std::abs(ToSeconds(c.naive - actual)));
    if (c.p10 && *c.p10 <= actual && (!c.p90 || actual <= *c.p90)) ++covered;
    if (c.p10 && actual < *c.p10) ++early;
    if (c.p90 && actual > *c.p90) ++late;
    // How far before p10 and after p90 it fell (negative: not), on the margins' scale; an
    // unset p10 (it started in no sample) is a range that starts at the horizon, an unset p90
    // one that ends there.
    const double a = scale(actual, c.at);
    below.push_back(c.p10 ? scale(*c.p10, c.at) - a : 1e9);
    above.push_back(c.p90 ? a - scale(*c.p90, c.at) : -1e9);
  }
  ForecastQuality q{.checked = err.size()};
  if (err.empty()) return q;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  q.median_error_s = median(err);
  q.mean_error_s = mean(err);
  q.naive_median_error_s = median(naive);
  q.naive_mean_error_s = mean(naive);
  q.coverage = static_cast<double>(covered) / static_cast<double>(err.size());
  q.early = static_cast<double>(early) / static_cast<double>(err.size());
  q.late = static_cast<double>(late) / static_cast<double>(err.size());
  // On each side the ceil(0.9 (n + 1))-th smallest score (the finite-sample conformal
  // quantile), 0 when the range already does.
  for (auto [scores, out] :
       {std::pair{&below, &q.margin_for_80[0]}, std::pair{&above, &q.margin_for_80[1]}}) {
    std::sort(scores->begin(), scores->end());
    const size_t n = scores->size();
    const size_t rank =
        std::min(n, static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n + 1))));
    *out = std::max(0.0, (*scores)[rank - 1]);
  }
  return q;
}

}  // namespace tiresias
