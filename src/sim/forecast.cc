// Forecasts by forward simulation of a core (see forecast.h).
#include "sim/forecast.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

namespace tiresias {
namespace {

// splitmix64: a small, seeded, portable generator (the same draws on every standard library).
struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  size_t Below(size_t n) { return static_cast<size_t>(Uniform() * static_cast<double>(n)); }
};

// A total service (GPU-ms) for a job of `gpus` GPUs that has attained `attained`: a finished
// job's service above it, or from the prior; past everything known, twice what it has.
Service DrawService(const std::vector<Service>& history, Service attained, int gpus, Rng& rng) {
  if (history.size() >= kMinHistory) {
    auto above = std::upper_bound(history.begin(), history.end(), attained);
    if (above != history.end()) {
      return above[static_cast<ptrdiff_t>(rng.Below(static_cast<size_t>(history.end() - above)))];
    }
    return std::max<Service>(2 * attained, attained + 1);
  }
  for (int tries = 0; tries < 16; ++tries) {  // log-uniform running time, 1 min .. 1 day
    const double seconds = 60.0 * std::exp(rng.Uniform() * std::log(1440.0));
    const Service s = static_cast<Service>(seconds * kMsPerSecond) * gpus;
    if (s > attained) return s;
  }
  return std::max<Service>(2 * attained, attained + 1);
}

struct Completion {
  Time at;
  uint64_t seq;
  JobId job;
  int start_no;
  bool operator>(const Completion& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

struct Sample {
  std::unordered_map<JobId, Time> start, end;
  std::map<JobId, double> held_before_target;  // GPU-ms others held before the target started
};

StatusOr<Sample> RunSample(const Scheduler& core, Time now, const std::vector<Service>& history,
                           const ForecastOptions& o, Rng rng) {
  auto made = core.Clone(/*active_only=*/true);
  if (!made.ok()) return made.status();
  Scheduler& sim = **made;
  Sample out;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> done;
  uint64_t seq = 0;
  const bool draw_all = !o.use_given_durations && !sim.policy().needs_durations();
  for (const Job& j : sim.jobs()) {
    if (!j.spec.duration || draw_all) {
      const Service total = DrawService(history, j.AttainedAt(now), j.gpus(), rng);
      const Duration remaining = (total - j.AttainedAt(now) + j.gpus() - 1) / j.gpus();
      if (Status s = sim.AssumeDuration(j.spec.id, j.WorkDoneAt(now) + remaining); !s.ok()) {
        return s;
      }
    }
  }
  for (const Job& j : sim.jobs()) {
    if (!j.running()) continue;
    out.start[j.spec.id] = j.run_start;
    done.push({*j.ProjectedEnd(), seq++, j.spec.id, j.starts});
  }
  const Time until = now + o.horizon;
  Time t = now, last = now;
  bool target_started = o.target && out.start.contains(*o.target);
  if (target_started && o.until_target_starts) return out;
  for (;;) {
    if (o.target && !target_started && t > last) {  // who held GPUs while the target waited
      for (const Job& j : sim.jobs()) {
        if (j.running()) out.held_before_target[j.spec.id] += j.gpus() * double(t - last);
      }
    }
    last = t;
    while (!done.empty() && done.top().at == t) {
      const Completion c = done.top();
      done.pop();
      const Job* j = sim.Find(c.job);
      if (!j->running() || j->starts != c.start_no) continue;  // preempted since
      if (Status s = sim.Finish(c.job, t); !s.ok()) return s;
      out.end[c.job] = t;
    }
    if (o.target && out.end.contains(*o.target)) break;
    for (const Action& a : sim.Schedule(t)) {
      if (a.kind != Action::Kind::kStart) continue;
      const Job* j = sim.Find(a.job);
      out.start.try_emplace(a.job, t);
      if (o.target && a.job == *o.target) target_started = true;
      if (target_started && o.until_target_starts) return out;
      done.push({*j->ProjectedEnd(), seq++, a.job, j->starts});
    }
    while (!done.empty()) {  // drop completions of runs that were preempted
      const Job* j = sim.Find(done.top().job);
      if (j->running() && j->starts == done.top().start_no) break;
      done.pop();
    }
    Time next = done.empty() ? kNever : done.top().at;
    next = std::min(next, sim.NextWakeup());
    if (next == kNever || next > until) break;
    t = next;
  }
  return out;
}

}  // namespace

std::optional<Time> Percentile(const std::vector<Time>& sorted, size_t samples, double p) {
  const size_t rank = std::max<size_t>(1, static_cast<size_t>(std::ceil(p * samples)));
  if (rank > sorted.size()) return std::nullopt;
  return sorted[rank - 1];
}

StatusOr<Forecast> ForecastJobs(const Scheduler& core, Time now, const ForecastOptions& o) {
  Forecast f{.now = now, .samples = std::max(1, o.samples)};
  std::vector<Service> history;
  for (const Job& j : core.jobs()) {
    if (j.state == JobState::kFinished) history.push_back(j.AttainedAt(j.end));
  }
  std::sort(history.begin(), history.end());
  f.history = history.size() >= kMinHistory ? history.size() : 0;
  std::unordered_map<JobId, std::vector<Time>> starts, ends;
  std::map<JobId, double> held;
  double held_total = 0;
  for (int s = 0; s < f.samples; ++s) {
    auto sample = RunSample(core, now, history, o,
                            Rng{o.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(s)});
    if (!sample.ok()) return sample.status();
    for (const auto& [id, t] : sample->start) starts[id].push_back(t);
    for (const auto& [id, t] : sample->end) ends[id].push_back(t);
    for (const auto& [id, v] : sample->held_before_target) {
      if (o.target && id == *o.target) continue;
      held[id] += v;
      held_total += v;
    }
  }
  for (const Job& j : core.jobs()) {
    if (j.state != JobState::kPending && j.state != JobState::kRunning &&
        j.state != JobState::kHeld) {
      continue;
    }
    JobForecast jf;
    auto& st = starts[j.spec.id];
    auto& en = ends[j.spec.id];
    std::sort(st.begin(), st.end());
    std::sort(en.begin(), en.end());
    jf.started_fraction = static_cast<double>(st.size()) / f.samples;
    // Samples in which it did not start (end) count as "later than the horizon".
    const double ps[3] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; ++k) {
      jf.start[k] = Percentile(st, static_cast<size_t>(f.samples), ps[k]);
      jf.end[k] = Percentile(en, static_cast<size_t>(f.samples), ps[k]);
    }
    f.jobs.emplace(j.spec.id, jf);
  }
  if (o.target && held_total > 0) {
    for (const auto& [id, v] : held) f.in_the_way.push_back({id, v / held_total});
    std::sort(f.in_the_way.begin(), f.in_the_way.end(), [](const auto& a, const auto& b) {
      return a.share != b.share ? a.share > b.share : a.job < b.job;
    });
    if (f.in_the_way.size() > 5) f.in_the_way.resize(5);
  }
  return f;
}

ForecastQuality AssessForecasts(const SimResult& r) {
  std::unordered_map<JobId, Time> started;
  for (const JobResult& j : r.jobs) {
    if (j.first_start >= 0) started.emplace(j.id, j.first_start);
  }
  std::vector<double> err, naive;
  size_t covered = 0;
  for (const ForecastCheck& c : r.forecasts) {
    auto it = started.find(c.job);
    if (it == started.end()) continue;
    const Time actual = it->second;
    err.push_back(c.p50 ? std::abs(ToSeconds(*c.p50 - actual)) : ToSeconds(actual - c.at));
    naive.push_back(std::abs(ToSeconds(c.naive - actual)));
    if (c.p10 && *c.p10 <= actual && (!c.p90 || actual <= *c.p90)) ++covered;
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
  return q;
}

}  // namespace tiresias
