// The data of the simulator's HTML report (`sim|compare --report`), as one JSON document the
// page draws (web/src/report.js): per run its summary (summary.json's fields), the JCT and
// queueing-delay CDFs reduced to at most kCdfPoints points, mean JCT by job size, and the
// time series averaged into at most kSeriesPoints buckets. Bounded so that the report of the
// full Philly trace stays well under 5 MB whatever the number of jobs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/metrics.h"
#include "sim/simulator.h"

namespace tiresias {

inline constexpr size_t kCdfPoints = 400;
inline constexpr size_t kSeriesPoints = 1500;

// A CDF of `values` as {x: [...], y: [...]}: the sorted values at evenly spaced ranks (all of
// them when there are at most `points`), y = the fraction of values <= x; the largest value
// is always the last point (y = 1).
nlohmann::json CdfPoints(std::vector<double> values, size_t points = kCdfPoints);

// runs[i] with metrics[i].
nlohmann::json ReportData(const std::vector<SimResult>& runs, const std::vector<Metrics>& metrics,
                          const std::string& title, const std::string& subtitle);

// A series step for a report of `jobs` (sorted by submit): about kSeriesPoints points over
// the submission span and a bit beyond, at least a minute.
Duration ReportSeriesStep(const std::vector<JobSpec>& jobs);

}  // namespace tiresias
