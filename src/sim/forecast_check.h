// How start forecasts (engine/forecast.h) made at submit in a simulation
// (SimConfig::forecast_every) compare with what happened: `sim --forecast-every N`.
#pragma once

#include "sim/simulator.h"

namespace tiresias {

// How the start forecasts of a run (SimConfig::forecast_every) did against the real starts:
// absolute errors of the p50 and of the naive estimate (jobs that never started are left out),
// and how often the real start fell inside p10..p90 (an unset p90 = later than the horizon).
struct ForecastQuality {
  size_t checked = 0;
  double median_error_s = 0, mean_error_s = 0;
  double naive_median_error_s = 0, naive_mean_error_s = 0;
  double coverage = 0;         // 0..1
  double early = 0, late = 0;  // started before p10, after p90
};
ForecastQuality AssessForecasts(const SimResult& r);

}  // namespace tiresias
