// LiveMetrics: the Prometheus families of serve and the cluster's time series.
#include "live/live_metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>

namespace tiresias {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Histogram;

// Job times from a minute to a month; latencies from 100 us to 10 s.
const Histogram::BucketBoundaries kJobBuckets = {60,    300,   900,   1800,   3600,   7200,
                                                 14400, 28800, 86400, 172800, 604800, 2592000};
const Histogram::BucketBoundaries kLatencyBuckets = {0.0001, 0.0005, 0.001, 0.005, 0.01,
                                                     0.05,   0.1,    0.5,   1,     10};

}  // namespace

LiveMetrics::LiveMetrics(Duration sample_every, size_t keep)
    : registry_(std::make_shared<prometheus::Registry>()),
      jobs_(BuildGauge().Name("tiresias_jobs").Help("Jobs by state").Register(*registry_)),
      waiting_(BuildGauge()
                   .Name("tiresias_jobs_waiting")
                   .Help("Waiting jobs by queue (Q1 is the highest priority)")
                   .Register(*registry_)),
      gpus_(BuildGauge()
                .Name("tiresias_gpus")
                .Help("GPUs by state: busy, free, fragmented (free while the first waiting job "
                      "fits them in count but has no slot), unavailable")
                .Register(*registry_)),
      vc_gpus_(BuildGauge()
                   .Name("tiresias_vc_gpus")
                   .Help("GPUs per virtual cluster: its quota, running (its jobs hold), borrowed "
                         "(running beyond its quota) and waiting (its waiting jobs ask for)")
                   .Register(*registry_)),
      vc_jobs_(BuildGauge()
                   .Name("tiresias_vc_jobs")
                   .Help("Jobs per virtual cluster, running or waiting")
                   .Register(*registry_)),
      vc_usage_(BuildGauge()
                    .Name("tiresias_vc_usage_gpu_hours")
                    .Help("GPU-hours a virtual cluster used, decayed with the fair-share "
                          "half-life (0 without one)")
                    .Register(*registry_)),
      disk_free_(BuildGauge()
                     .Name("tiresias_state_disk_free_bytes")
                     .Help("Bytes free on the file system of serve's state directory")
                     .Register(*registry_)
                     .Add({})),
      disk_reserve_(BuildGauge()
                        .Name("tiresias_state_disk_reserve_bytes")
                        .Help("Bytes serve keeps in reserve there for its journal "
                              "(serve --disk-reserve; released while low)")
                        .Register(*registry_)
                        .Add({})),
      disk_low_(BuildGauge()
                    .Name("tiresias_state_disk_low")
                    .Help("1 while that file system is nearly full and new jobs are refused")
                    .Register(*registry_)
                    .Add({})),
      preemptions_(BuildCounter()
                       .Name("tiresias_preemptions_total")
                       .Help("Jobs told to stop so that others could run")
                       .Register(*registry_)
                       .Add({})),
      lost_gpu_seconds_(BuildCounter()
                            .Name("tiresias_preemption_lost_gpu_seconds_total")
                            .Help("GPU-seconds of work lost to preemptions: progress since the "
                                  "last reported checkpoint of runs killed at the grace deadline "
                                  "or stopped at a checkpoint")
                            .Register(*registry_)
                            .Add({})),
      promotions_(BuildCounter()
                      .Name("tiresias_promotions_total")
                      .Help("Waiting jobs promoted back to Q1 (starvation)")
                      .Register(*registry_)
                      .Add({})),
      demotions_(BuildCounter()
                     .Name("tiresias_demotions_total")
                     .Help("Running jobs demoted to a lower queue")
                     .Register(*registry_)
                     .Add({})),
      ended_(BuildCounter()
                 .Name("tiresias_jobs_ended_total")
                 .Help("Jobs that ended, by final state")
                 .Register(*registry_)),
      jct_seconds_(BuildHistogram()
                       .Name("tiresias_job_completion_seconds")
                       .Help("Job completion time (submit to end) of jobs that finished, failed or "
                             "timed out (not cancelled)")
                       .Register(*registry_)
                       .Add({}, kJobBuckets)),
      queueing_seconds_(BuildHistogram()
                            .Name("tiresias_job_queueing_seconds")
                            .Help("Queueing delay (submit to first start) of ended jobs")
                            .Register(*registry_)
                            .Add({}, kJobBuckets)),
      pass_seconds_(BuildHistogram()
                        .Name("tiresias_scheduling_pass_seconds")
                        .Help("Time of one scheduling pass of the core")
                        .Register(*registry_)
                        .Add({}, kLatencyBuckets)),
      commit_seconds_(BuildHistogram()
                          .Name("tiresias_journal_commit_seconds")
                          .Help("Time of one journal commit that wrote something (the loop's empty "
                                "ones, 50 a second, are not counted)")
                          .Register(*registry_)
                          .Add({}, kLatencyBuckets)),
      request_seconds_(BuildHistogram()
                           .Name("tiresias_api_request_seconds")
                           .Help("API request latency by route")
                           .Register(*registry_)),
      request_errors_(BuildCounter()
                          .Name("tiresias_api_errors_total")
                          .Help("API requests answered with an error status, by route")
                          .Register(*registry_)),
      sample_every_(sample_every),
      keep_(keep) {
  // Each end state's series from the start, at 0 (it was absent after a restart until a job
  // ended so: a rate() or a dashboard panel of it had no data).
  for (const char* state : {"finished", "failed", "cancelled", "timeout"}) {
    ended_.Add({{"state", state}});
  }
}

void LiveMetrics::SetStateDisk(int64_t free_bytes, int64_t reserve_bytes, bool low) {
  disk_free_.Set(static_cast<double>(free_bytes));
  disk_reserve_.Set(static_cast<double>(reserve_bytes));
  disk_low_.Set(low ? 1 : 0);
}

std::string LiveMetrics::Text() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void LiveMetrics::JobEnded(const std::string& state, double jct_s, double queueing_s) {
  ended_.Add({{"state", state}}).Increment();
  if (state != "cancelled") jct_seconds_.Observe(jct_s);
  if (queueing_s >= 0) queueing_seconds_.Observe(queueing_s);
}

void LiveMetrics::ObserveRequest(const std::string& route, const std::string& method, int status,
                                 double seconds) {
  request_seconds_.Add({{"route", route}, {"method", method}}, kLatencyBuckets).Observe(seconds);
  if (status >= 400) {
    request_errors_.Add({{"route", route}, {"method", method}, {"status", std::to_string(status)}})
        .Increment();
  }
}

void LiveMetrics::SetJobs(const std::map<std::string, int>& by_state,
                          const std::map<std::string, int>& waiting_by_queue) {
  for (const auto& [state, n] : by_state) jobs_.Add({{"state", state}}).Set(n);
  for (const auto& [queue, n] : waiting_by_queue) waiting_.Add({{"queue", queue}}).Set(n);
}

void LiveMetrics::SetGpus(int busy, int free, int fragmented, int unavailable) {
  gpus_.Add({{"state", "busy"}}).Set(busy);
  gpus_.Add({{"state", "free"}}).Set(free);
  gpus_.Add({{"state", "fragmented"}}).Set(fragmented);
  gpus_.Add({{"state", "unavailable"}}).Set(unavailable);
}

void LiveMetrics::SetVcs(const std::vector<VcUsage>& vcs) {
  std::vector<std::string> names;
  for (const VcUsage& v : vcs) {
    names.push_back(v.name);
    vc_gpus_.Add({{"vc", v.name}, {"state", "quota"}}).Set(v.quota);
    vc_gpus_.Add({{"vc", v.name}, {"state", "running"}}).Set(v.running_gpus);
    vc_gpus_.Add({{"vc", v.name}, {"state", "borrowed"}}).Set(v.borrowed());
    vc_gpus_.Add({{"vc", v.name}, {"state", "waiting"}}).Set(v.waiting_gpus);
    vc_jobs_.Add({{"vc", v.name}, {"state", "running"}}).Set(v.running_jobs);
    vc_jobs_.Add({{"vc", v.name}, {"state", "waiting"}}).Set(v.waiting_jobs);
    vc_usage_.Add({{"vc", v.name}}).Set(v.decayed_gpu_hours);
  }
  for (const std::string& old : vc_names_) {
    if (std::find(names.begin(), names.end(), old) != names.end()) continue;
    for (const char* st : {"quota", "running", "borrowed", "waiting"}) {
      vc_gpus_.Remove(&vc_gpus_.Add({{"vc", old}, {"state", st}}));
    }
    for (const char* st : {"running", "waiting"}) {
      vc_jobs_.Remove(&vc_jobs_.Add({{"vc", old}, {"state", st}}));
    }
    vc_usage_.Remove(&vc_usage_.Add({{"vc", old}}));
  }
  vc_names_ = std::move(names);
}

void LiveMetrics::Sample(ClusterSample s, bool force) {
  std::lock_guard lk(series_mu_);
  if (!force && !series_.empty() && s.wall_ms - series_.back().wall_ms < sample_every_) return;
  series_.push_back(std::move(s));
  while (series_.size() > keep_) series_.pop_front();
}

nlohmann::json LiveMetrics::Series(int64_t after_wall_ms) const {
  std::lock_guard lk(series_mu_);
  nlohmann::json out = nlohmann::json::array();
  for (const ClusterSample& s : series_) {
    if (s.wall_ms <= after_wall_ms) continue;
    out.push_back({{"time_ms", s.wall_ms},
                   {"gpus_total", s.gpus_total},
                   {"gpus_busy", s.gpus_busy},
                   {"gpus_fragmented", s.gpus_fragmented},
                   {"running", s.running},
                   {"waiting_by_queue", s.waiting_by_queue},
                   {"preemptions", s.preemptions}});
  }
  return out;
}

}  // namespace tiresias
