// Metrics of a run: JCT, queueing delay, makespan, utilisation, preemptions.
#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tiresias {
namespace {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

Stats Summarize(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.median = Quantile(v, 0.5);
  s.p95 = Quantile(v, 0.95);
  s.p99 = Quantile(v, 0.99);
  s.max = v.back();
  return s;
}

Metrics ComputeMetrics(const SimResult& r) {
  Metrics m;
  m.label = r.label;
  m.passes = r.passes;
  m.jobs = r.jobs.size();
  m.placement_note = r.placement_note;
  std::vector<double> jct, queue, slowdown;
  double nodes = 0, switches = 0, multi = 0;
  std::array<std::vector<double>, 4> jct_b, queue_b;
  Time first_submit = std::numeric_limits<Time>::max(), last_end = 0;
  double held_gpu_ms = 0, overhead_gpu_ms = 0;
  for (const auto& j : r.jobs) {
    held_gpu_ms += static_cast<double>(j.held) * j.gpus;
    overhead_gpu_ms += static_cast<double>(j.overhead) * j.gpus;
    m.preemptions += j.preemptions;
    m.promotions += j.promotions;
    m.evictions += j.evictions;
    if (!j.model_known) ++m.unknown_models;
    if (j.state == JobState::kRejected) {
      ++m.rejected;
      continue;
    }
    first_submit = std::min(first_submit, j.submit);
    if (j.state != JobState::kFinished) {
      ++m.unfinished;
      continue;
    }
    ++m.finished;
    last_end = std::max(last_end, j.end);
    double c = ToSeconds(j.end - j.submit), q = ToSeconds(j.first_start - j.submit);
    jct.push_back(c);
    queue.push_back(q);
    slowdown.push_back(j.slowdown());
    if (j.gpus > 1) {
      nodes += j.nodes;
      switches += j.switches;
      ++multi;
    }
    for (size_t b = 0; b < kSizeBuckets.size(); ++b) {
      if (j.gpus >= kSizeBuckets[b].lo && j.gpus <= kSizeBuckets[b].hi) {
        jct_b[b].push_back(c);
        queue_b[b].push_back(q);
      }
    }
  }
  m.jct = Summarize(jct);
  m.queueing = Summarize(queue);
  m.slowdown = Summarize(std::move(slowdown));
  if (multi > 0) {
    m.mean_nodes = nodes / multi;
    m.mean_switches = switches / multi;
  }
  for (size_t b = 0; b < kSizeBuckets.size(); ++b) {
    m.jct_by_size[b] = Summarize(jct_b[b]);
    m.queueing_by_size[b] = Summarize(queue_b[b]);
  }
  if (m.finished > 0) {
    m.makespan = ToSeconds(last_end - first_submit);
    if (m.makespan > 0) {
      m.utilisation = held_gpu_ms / (static_cast<double>(r.total_gpus) * (last_end - first_submit));
      m.frag_idle_gpus = r.frag_idle_gpu_ms / static_cast<double>(last_end - first_submit);
    }
  }
  m.overhead_gpu_seconds = overhead_gpu_ms / kMsPerSecond;
  return m;
}

nlohmann::json ToJson(const Stats& s) {
  return {{"n", s.n},     {"mean", s.mean}, {"median", s.median},
          {"p95", s.p95}, {"p99", s.p99},   {"max", s.max}};
}

nlohmann::json ToJson(const Metrics& m) {
  nlohmann::json by_size = nlohmann::json::object();
  for (size_t b = 0; b < kSizeBuckets.size(); ++b) {
    by_size[kSizeBuckets[b].name] = {{"jct_seconds", ToJson(m.jct_by_size[b])},
                                     {"queueing_delay_seconds", ToJson(m.queueing_by_size[b])}};
  }
  return {{"label", m.label},
          {"jobs", m.jobs},
          {"finished", m.finished},
          {"rejected", m.rejected},
          {"unfinished", m.unfinished},
          {"jct_seconds", ToJson(m.jct)},
          {"queueing_delay_seconds", ToJson(m.queueing)},
          {"by_size", by_size},
          {"makespan_seconds", m.makespan},
          {"gpu_utilisation", m.utilisation},
          {"preemptions", m.preemptions},
          {"promotions", m.promotions},
          {"evictions", m.evictions},
          {"overhead_gpu_seconds", m.overhead_gpu_seconds},
          {"scheduling_passes", m.passes},
          {"slowdown", ToJson(m.slowdown)},
          {"fragmentation_idle_gpus", m.frag_idle_gpus},
          {"mean_nodes_multi_gpu", m.mean_nodes},
          {"mean_switches_multi_gpu", m.mean_switches},
          {"unknown_model_jobs", m.unknown_models},
          {"placement_note", m.placement_note}};
}

}  // namespace tiresias
