// Reports of simulation runs: a summary table, a side-by-side comparison with ratios to the
// first run, and the files written by --out (jobs.csv, jct_cdf.csv, summary.json,
// timeseries.csv) and --events.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/metrics.h"
#include "sim/simulator.h"

namespace tiresias {

std::string SummaryTable(const Metrics& m);
std::string CompareTable(const std::vector<Metrics>& runs);
// Per VC, for runs with tenants: quota, then each run's mean JCT and GPU-time received over
// entitled; Jain's index across VCs below. "" when no run has quotas.
std::string VcTable(const std::vector<Metrics>& runs);
std::string JobsCsv(const SimResult& r);
// The JCT CDF of finished jobs: "fraction,jct_seconds", fractions 0.000 to 1.000 by 0.001.
std::string JctCdfCsv(const SimResult& r);
// The cluster over time (SimResult::series): time_s, busy/free/unusable GPUs, running and
// waiting jobs in all and per queue (running_q1.., waiting_q1..), and preemptions since the
// previous row.
std::string SeriesCsv(const SimResult& r);
// The start forecasts made at submit (SimConfig::forecast_every) with the real starts, in
// seconds: job_id,at_s,p10_s,p50_s,p90_s,naive_s,start_s,raw_p10_s,raw_p90_s (empty: unset /
// never started; raw_: before the margins).
std::string ForecastsCsv(const SimResult& r);
// Writes DIR/jobs.csv, DIR/jct_cdf.csv, DIR/summary.json and, with a series,
// DIR/timeseries.csv, with forecasts DIR/forecasts.csv (creating DIR).
Status WriteRunDir(const std::string& dir, const SimResult& r, const Metrics& m,
                   const nlohmann::json& config);
// Writes an event log as JSON Lines (core/event_log.h), one event per line.
Status WriteEventLog(const std::string& path, const std::vector<Event>& events);

}  // namespace tiresias
