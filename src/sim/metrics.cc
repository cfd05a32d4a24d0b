// Metrics of a run: JCT, queueing delay, makespan, utilisation, preemptions, fairness.
#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace tiresias {

double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

std::optional<double> JainIndex(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double sum = 0, sq = 0;
  for (double x : v) {
    sum += x;
    sq += x * x;
  }
  if (sq <= 0) return 1.0;
  return sum * sum / (static_cast<double>(v.size()) * sq);
}

std::vector<double> FinishTimeFairness(const SimResult& r) {
  // n(t), the jobs in the system: +1 at submit, -1 when a job leaves (finished or cancelled).
  // One sweep over the submits (jobs come in submission order) merged with the sorted ends
  // reads the area under n(t) at every job's submit and end: area(end) - area(submit) over
  // the JCT is the time-average N over the job's stay.
  const size_t n_jobs = r.jobs.size();
  std::vector<uint32_t> by_submit;
  std::vector<std::pair<Time, uint32_t>> ends;
  by_submit.reserve(n_jobs);
  ends.reserve(n_jobs);
  for (uint32_t i = 0; i < n_jobs; ++i) {
    const auto& j = r.jobs[i];
    if (j.state == JobState::kRejected) continue;
    by_submit.push_back(i);
    if (j.end >= 0) ends.emplace_back(j.end, i);
  }
  auto submit_of = [&](uint32_t i) { return r.jobs[i].submit; };
  if (!std::is_sorted(by_submit.begin(), by_submit.end(),
                      [&](uint32_t a, uint32_t b) { return submit_of(a) < submit_of(b); })) {
    std::stable_sort(by_submit.begin(), by_submit.end(),
                     [&](uint32_t a, uint32_t b) { return submit_of(a) < submit_of(b); });
  }
  std::sort(ends.begin(), ends.end());
  std::vector<int64_t> area_submit(n_jobs, 0), area_end(n_jobs, 0);  // job-ms
  int64_t n = 0, area = 0;
  Time last = 0;
  bool started = false;
  size_t si = 0, ei = 0;
  while (si < by_submit.size() || ei < ends.size()) {
    const Time t =
        ei == ends.size() || (si < by_submit.size() && submit_of(by_submit[si]) < ends[ei].first)
            ? submit_of(by_submit[si])
            : ends[ei].first;
    if (started) area += n * (t - last);
    started = true;
    last = t;
    for (; si < by_submit.size() && submit_of(by_submit[si]) == t; ++si) {
      area_submit[by_submit[si]] = area;
      ++n;
    }
    for (; ei < ends.size() && ends[ei].first == t; ++ei) {
      area_end[ends[ei].second] = area;
      --n;
    }
  }
  std::vector<double> rho(r.jobs.size(), 0.0);
  const double gpus = std::max(1, r.total_gpus);
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    const auto& j = r.jobs[i];
    if (j.state != JobState::kFinished || j.work <= 0) continue;
    const Time jct = j.end - j.submit;
    const double jobs_in_system =
        jct > 0 ? std::max(1.0, static_cast<double>(area_end[i] - area_submit[i]) /
                                    static_cast<double>(jct))
                : 1.0;
    const double fair = static_cast<double>(j.work) * std::max(1.0, j.gpus * jobs_in_system / gpus);
    rho[i] = static_cast<double>(jct) / fair;
  }
  return rho;
}

Stats Summarize(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  s.max = *std::max_element(v.begin(), v.end());
  // The quantiles as Quantile() reads them from the sorted values, without sorting: each
  // needs the order statistics lo and lo + 1, found in increasing order by nth_element on
  // what is left to the right of the last one (linear on average).
  size_t from = 0;
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    std::nth_element(v.begin() + static_cast<ptrdiff_t>(from),
                     v.begin() + static_cast<ptrdiff_t>(lo), v.end());
    const double a = v[lo];
    const double b = lo + 1 < v.size()
                         ? *std::min_element(v.begin() + static_cast<ptrdiff_t>(lo) + 1, v.end())
                         : a;
    from = lo + 1 < v.size() ? lo + 1 : lo;
    return a + (b - a) * (pos - static_cast<double>(lo));
  };
  s.median = at(0.5);
  s.p95 = at(0.95);
  s.p99 = at(0.99);
  s.p999 = at(0.999);
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
  struct Group {
    std::vector<double> queueing, jct, rho;
    double slowdown_sum = 0;
    double held_gpu_ms = 0;  // every job of the group, finished or not
    size_t n = 0;
  };
  std::map<std::string_view, Group> users, vcs;  // views into r.names
  Time first_submit = std::numeric_limits<Time>::max(), last_end = 0;
  double held_gpu_ms = 0, overhead_gpu_ms = 0;
  for (const auto& j : r.jobs) {
    held_gpu_ms += static_cast<double>(j.held()) * j.gpus;
    if (j.vc) vcs[r.name(j.vc)].held_gpu_ms += static_cast<double>(j.held()) * j.gpus;
    overhead_gpu_ms += static_cast<double>(j.overhead) * j.gpus;
    m.lost_gpu_hours += static_cast<double>(j.lost) / (3600.0 * kMsPerSecond);
    m.preemptions += j.preemptions;
    m.promotions += j.promotions;
    m.restarts += j.restarts;
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
    const double jct_slowdown = j.work > 0 ? static_cast<double>(j.end - j.submit) / j.work : 1.0;
    if (j.user) {
      Group& g = users[r.name(j.user)];
      g.slowdown_sum += jct_slowdown;
      ++g.n;
    }
    if (j.vc) {
      Group& g = vcs[r.name(j.vc)];
      g.queueing.push_back(q);
      g.jct.push_back(c);
      g.slowdown_sum += jct_slowdown;
      ++g.n;
    }
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
  m.multi_gpu = static_cast<size_t>(multi);
  if (multi > 0) {
    m.mean_nodes = nodes / multi;
    m.mean_switches = switches / multi;
  }
  for (size_t b = 0; b < kSizeBuckets.size(); ++b) {
    m.jct_by_size[b] = Summarize(jct_b[b]);
    m.queueing_by_size[b] = Summarize(queue_b[b]);
  }
  // The makespan ends with the last run, finished or not: a run whose job never finished
  // (stranded by --capacity) held GPUs too, and its GPU-time is in held_gpu_ms (every job
  // stranded read as makespan 0, utilisation 0; found by a tester).
  last_end = std::max(last_end, r.last_run_end);
  if (first_submit != std::numeric_limits<Time>::max() && last_end > first_submit) {
    m.makespan = ToSeconds(last_end - first_submit);
    m.utilisation = held_gpu_ms / (static_cast<double>(r.total_gpus) * (last_end - first_submit));
    m.frag_idle_gpus = r.frag_idle_gpu_ms / static_cast<double>(last_end - first_submit);
  }
  m.overhead_gpu_seconds = overhead_gpu_ms / kMsPerSecond;

  std::vector<double> rho;
  rho.reserve(m.finished);
  const std::vector<double> all_rho = FinishTimeFairness(r);
  size_t unfair = 0;
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    if (r.jobs[i].state != JobState::kFinished) continue;
    rho.push_back(all_rho[i]);
    if (r.jobs[i].vc) vcs[r.name(r.jobs[i].vc)].rho.push_back(all_rho[i]);
    if (all_rho[i] > kRhoUnfair) ++unfair;
  }
  m.fairness.rho = Summarize(std::move(rho));
  if (m.finished > 0) m.fairness.frac_unfair = static_cast<double>(unfair) / m.finished;
  auto jain = [](const std::map<std::string_view, Group>& groups) {
    std::vector<double> mean;
    for (const auto& [name, g] : groups) mean.push_back(g.slowdown_sum / g.n);
    return JainIndex(mean);
  };
  m.fairness.users = users.size();
  m.fairness.jain_user = jain(users);
  std::map<std::string, int, std::less<>> quota(r.vc_quotas.begin(), r.vc_quotas.end());
  std::vector<double> share;  // received / entitled, VCs with a quota
  for (auto& [name, g] : vcs) {
    if (g.n > 0) {
      VcStats v{.vc = std::string(name),
                .finished = g.n,
                .jct = Summarize(g.jct),
                .queueing = Summarize(std::move(g.queueing)),
                .mean_slowdown = g.slowdown_sum / g.n,
                .gpu_hours = g.held_gpu_ms / (3600.0 * kMsPerSecond)};
      size_t unfair = 0;
      for (double x : g.rho) unfair += x > kRhoUnfair;
      v.mean_rho = Summarize(g.rho).mean;
      v.frac_unfair = g.rho.empty() ? 0 : static_cast<double>(unfair) / g.rho.size();
      if (auto it = quota.find(name); it != quota.end()) {
        v.quota = it->second;
        v.entitled_gpu_hours = it->second * m.makespan / 3600.0;
        if (v.entitled_gpu_hours > 0) share.push_back(v.gpu_hours / v.entitled_gpu_hours);
      }
      m.by_vc.push_back(std::move(v));
    }
  }
  std::erase_if(vcs, [](const auto& kv) { return kv.second.n == 0; });
  m.fairness.vcs = vcs.size();
  m.fairness.jain_vc = jain(vcs);
  m.fairness.jain_vc_share = JainIndex(share);
  return m;
}

nlohmann::json ToJson(const Stats& s) {
  if (s.n == 0) {  // no value: null, not 0 (a run where no job finished read as a JCT of 0 s)
    return {{"n", 0},         {"mean", nullptr}, {"median", nullptr}, {"p95", nullptr},
            {"p99", nullptr}, {"p999", nullptr}, {"max", nullptr}};
  }
  return {{"n", s.n},     {"mean", s.mean}, {"median", s.median}, {"p95", s.p95},
          {"p99", s.p99}, {"p999", s.p999}, {"max", s.max}};
}

nlohmann::json ToJson(const Metrics& m) {
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  // A figure over `n` finished jobs: null over none, as ToJson(Stats).
  auto over = [](size_t n, double v) { return n > 0 ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json by_vc = nlohmann::json::object();
  for (const auto& v : m.by_vc) {
    by_vc[v.vc] = {
        {"finished", v.finished},
        {"jct_seconds", ToJson(v.jct)},
        {"queueing_delay_seconds", ToJson(v.queueing)},
        {"mean_jct_slowdown", over(v.finished, v.mean_slowdown)},
        {"finish_time_fairness",
         {{"mean_rho", over(v.finished, v.mean_rho)},
          {"frac_unfair", over(v.finished, v.frac_unfair)}}},
        {"gpu_hours_received", v.gpu_hours},
        {"quota_gpus", v.quota >= 0 ? nlohmann::json(v.quota) : nlohmann::json()},
        {"gpu_hours_entitled",
         v.entitled_gpu_hours >= 0 ? nlohmann::json(v.entitled_gpu_hours) : nlohmann::json()}};
  }
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
          {"restarts", m.restarts},
          {"evictions", m.evictions},
          {"overhead_gpu_seconds", m.overhead_gpu_seconds},
          {"lost_gpu_hours", m.lost_gpu_hours},
          {"scheduling_passes", m.passes},
          {"slowdown", ToJson(m.slowdown)},
          {"fragmentation_idle_gpus", m.frag_idle_gpus},
          {"mean_nodes_multi_gpu", over(m.multi_gpu, m.mean_nodes)},
          {"mean_switches_multi_gpu", over(m.multi_gpu, m.mean_switches)},
          {"unknown_model_jobs", m.unknown_models},
          {"placement_note", m.placement_note},
          {"fairness",
           {{"finish_time_fairness_rho", ToJson(m.fairness.rho)},
            {"worst_rho", over(m.fairness.rho.n, m.fairness.rho.max)},
            {"fraction_rho_above_1_05", over(m.fairness.rho.n, m.fairness.frac_unfair)},
            {"jain_user_slowdown", opt(m.fairness.jain_user)},
            {"jain_vc_slowdown", opt(m.fairness.jain_vc)},
            {"jain_vc_gpu_time_share", opt(m.fairness.jain_vc_share)},
            {"users", m.fairness.users},
            {"vcs", m.fairness.vcs}}},
          {"by_vc", by_vc}};
}

}  // namespace tiresias
