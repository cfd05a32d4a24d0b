// How start forecasts (engine/forecast.h) made at submit in a simulation
// (SimConfig::forecast_every) compare with what happened: `sim --forecast-every N`.
#pragma once

#include <array>

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
  // The further margins (ForecastOptions::margin, added to the ones the forecasts were made
  // with) under which at most 10% of the real starts fall before p10, and 10% after p90: on
  // each side the 90% conformal quantile of how far outside they fell (with margins 0: what
  // this run alone would call for; scripts/fit_forecast_margin.py fits over many runs).
  std::array<double, 2> margin_for_80 = {0, 0};
};
ForecastQuality AssessForecasts(const SimResult& r);

}  // namespace tiresias
