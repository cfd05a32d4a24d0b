// What `tiresias serve` measures, for Prometheus (/metrics) and the dashboard's charts.
// Counters and histograms are updated by the loop as things happen (passes, commits,
// preemptions, queue changes, jobs ending); gauges (jobs by state and queue, GPUs busy, free
// and fragmented) are set from the live state at each scrape. A time series of the cluster
// (one sample every `sample_every`, the last day kept) feeds the dashboard's charts.
// Thread-safe (prometheus-cpp's metrics are; the series has its own lock).
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/time.h"
#include "core/scheduler.h"

namespace tiresias {

struct ClusterSample {
  int64_t wall_ms = 0;
  int gpus_total = 0, gpus_busy = 0, gpus_fragmented = 0;
  int running = 0;
  std::vector<int> waiting_by_queue;  // Q1..QK
  int64_t preemptions = 0;            // cumulative
};

class LiveMetrics {
 public:
  explicit LiveMetrics(Duration sample_every = Seconds(2), size_t keep = 43200);

  prometheus::Registry& registry() { return *registry_; }
  // The Prometheus text exposition of everything registered.
  std::string Text() const;

  void ObservePass(double seconds) { pass_seconds_.Observe(seconds); }
  void ObserveCommit(double seconds) { commit_seconds_.Observe(seconds); }
  void CountPreemption() { preemptions_.Increment(); }
  // GPU-seconds of work lost by preempted jobs (killed at the grace deadline, or stopped at a
  // reported checkpoint: the progress since it).
  void CountLost(double gpu_seconds) {
    if (gpu_seconds > 0) lost_gpu_seconds_.Increment(gpu_seconds);
  }
  void CountTransition(bool promotion) { (promotion ? promotions_ : demotions_).Increment(); }
  // A job ended: finished or failed (its JCT and queueing delay), or cancelled.
  void JobEnded(const std::string& state, double jct_s, double queueing_s);
  void ObserveRequest(const std::string& route, const std::string& method, int status,
                      double seconds);

  // Gauges, set at each scrape from the live state.
  void SetJobs(const std::map<std::string, int>& by_state,
               const std::map<std::string, int>& waiting_by_queue);
  void SetGpus(int busy, int free, int fragmented, int unavailable);
  // Per VC (serve --tenants): GPUs by state (quota, running, borrowed, waiting), jobs running
  // and waiting, decayed usage. VCs no longer configured are dropped.
  void SetVcs(const std::vector<VcUsage>& vcs);
  // The state directory's file system: bytes free, the reserve kept for the journal (serve
  // --disk-reserve), and 1 while it is low (new jobs refused).
  void SetStateDisk(int64_t free_bytes, int64_t reserve_bytes, bool low);

  // Whether a sample taken at `wall_ms` would be kept (cheap; the caller then builds it).
  bool SampleDue(int64_t wall_ms) const {
    std::lock_guard lk(series_mu_);
    return series_.empty() || wall_ms - series_.back().wall_ms >= sample_every_;
  }
  // Adds a sample if `sample_every` passed since the last one (or `force`).
  void Sample(ClusterSample s, bool force = false);
  // Samples with wall_ms > after, oldest first.
  nlohmann::json Series(int64_t after_wall_ms) const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>& jobs_;
  prometheus::Family<prometheus::Gauge>& waiting_;
  prometheus::Family<prometheus::Gauge>& gpus_;
  prometheus::Family<prometheus::Gauge>& vc_gpus_;
  prometheus::Family<prometheus::Gauge>& vc_jobs_;
  prometheus::Family<prometheus::Gauge>& vc_usage_;
  prometheus::Gauge& disk_free_;
  prometheus::Gauge& disk_reserve_;
  prometheus::Gauge& disk_low_;
  std::vector<std::string> vc_names_;  // the VCs the gauges were last set for
  prometheus::Counter& preemptions_;
  prometheus::Counter& lost_gpu_seconds_;
  prometheus::Counter& promotions_;
  prometheus::Counter& demotions_;
  prometheus::Family<prometheus::Counter>& ended_;
  prometheus::Histogram& jct_seconds_;
  prometheus::Histogram& queueing_seconds_;
  prometheus::Histogram& pass_seconds_;
  prometheus::Histogram& commit_seconds_;
  prometheus::Family<prometheus::Histogram>& request_seconds_;
  prometheus::Family<prometheus::Counter>& request_errors_;

  mutable std::mutex series_mu_;
  Duration sample_every_;
  size_t keep_;
  std::deque<ClusterSample> series_;
};

}  // namespace tiresias
