// AssessForecasts (sim/forecast_check.h) on forecasts written by hand: errors, coverage, and
// the conformal margin that would make 80% of the real starts fall inside p10-p90.
#include "sim/forecast_check.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tiresias {
namespace {

TEST(ForecastCheck, ErrorsCoverageAndTheMarginThatWouldCoverEightyPercent) {
  // Five jobs forecast at 0, each with the range [p10, p90] = [240 s, 540 s] and p50 400 s;
  // naive 1000 s. They start at 300 s (inside: score ln 300 - ln 600 < 0), 500 s (inside),
  // 1140 s (late: ln 1200 - ln 600 = ln 2), 90 s (early: ln 300 - ln 150 = ln 2) and 2340 s
  // (late: ln 2400 - ln 600 = ln 4). Coverage 2/5, early 1/5, late 2/5. Errors of p50: 100,
  // 100, 740, 310, 1940: median 310 s; naive: 700, 500, 140, 910, 1340: median 700 s.
  // Below p10 by: -, -, -, ln 2, -; the rank ceil(0.9 x 6) = 6 > 5 takes the largest: ln 2.
  // After p90 by: -, -, ln 2, -, ln 4: the largest again, ln 4.
  SimResult r;
  const Time starts[] = {Seconds(300), Seconds(500), Seconds(1140), Seconds(90), Seconds(2340)};
  for (int i = 0; i < 5; ++i) {
    r.jobs.push_back(JobResult{.id = JobId(i + 1), .first_start = starts[i]});
    r.forecasts.push_back({.job = JobId(i + 1),
                           .at = 0,
                           .p10 = Seconds(240),
                           .p50 = Seconds(400),
                           .p90 = Seconds(540),
                           .naive = Seconds(1000)});
  }
  const ForecastQuality q = AssessForecasts(r);
  EXPECT_EQ(q.checked, 5u);
  EXPECT_DOUBLE_EQ(q.coverage, 0.4);
  EXPECT_DOUBLE_EQ(q.early, 0.2);
  EXPECT_DOUBLE_EQ(q.late, 0.4);
  EXPECT_DOUBLE_EQ(q.median_error_s, 310);
  EXPECT_DOUBLE_EQ(q.naive_median_error_s, 700);
  EXPECT_NEAR(q.margin_for_80[0], std::log(2.0), 1e-9);
  EXPECT_NEAR(q.margin_for_80[1], std::log(4.0), 1e-9);
}

TEST(ForecastCheck, RangesThatAlreadyCoverNeedNoMargin) {
  SimResult r;
  r.jobs.push_back(JobResult{.id = JobId(1), .first_start = Seconds(300)});
  r.forecasts.push_back(
      {.job = JobId(1), .at = 0, .p10 = 0, .p50 = Seconds(300), .p90 = Seconds(600)});
  const ForecastQuality q = AssessForecasts(r);
  EXPECT_DOUBLE_EQ(q.coverage, 1);
  EXPECT_DOUBLE_EQ(q.margin_for_80[0], 0);
  EXPECT_DOUBLE_EQ(q.margin_for_80[1], 0);
}

}  // namespace
}  // namespace tiresias
