// Forecasts by forward simulation of a core (see forecast.h).
#include "engine/forecast.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <queue>
#include <string_view>

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

// How far a tail past what is known reaches (PriorDraw, ServiceModel::Draw): at most this many
// times where it starts.
constexpr double kTailCap = 1000;

// The survival a draw lands on: uniform on [0, s_a) with `u` (S > attained, whose survival is
// s_a), or, `known`, on [known_floor, s_a) where s_a is above it (no draw past what is known).
double TargetSurvival(double s_a, double known_floor, double u, bool known) {
  return known && s_a > known_floor ? known_floor + (s_a - known_floor) * u : s_a * u;
}

// Before kMinHistory jobs have finished: running time (per GPU) log-uniform from 1 minute to 1
// day, with a tail past the day that lasts as long again as it has lasted, P(S > s) =
// T x day / s, joined where the two densities (per unit of ln s) meet: T = 1 / (1 + ln 1440),
// 12% of jobs run past a day. Conditioned on S > attained; u uniform on [0, 1). `known`:
// within the day (ServiceModel::Draw).
Service PriorDraw(Service attained, int gpus, double u, bool known) {
  constexpr double kMin = 60, kDay = 86400;
  const double span = std::log(kDay / kMin);
  const double tail = 1 / (1 + span);
  auto surv = [&](double s) {
    if (s <= kMin) return 1.0;
    if (s <= kDay) return 1 - (1 - tail) * std::log(s / kMin) / span;
    return tail * kDay / s;
  };
  const double a = static_cast<double>(attained) / gpus / kMsPerSecond;
  const double s_a = surv(a);
  // The running time whose survival is target.
  const double target = TargetSurvival(s_a, tail, u, known);
  // In the tail at most kTailCap times the larger of a day and what it has run.
  const double seconds = target >= tail
                             ? kMin * std::exp((1 - target) / (1 - tail) * span)
                             : tail * kDay / std::max(target, surv(std::max(a, kDay)) / kTailCap);
  return std::max<Service>(static_cast<Service>(seconds * kMsPerSecond) * gpus, attained + 1);
}

// The distribution of a job's total service (GPU-ms), estimated by Kaplan-Meier from the
// finished jobs (their service) and the jobs still in the system (at least what they have
// attained: censored), so that long jobs that have not finished yet are not forgotten (a
// history of finished jobs alone is biased towards short ones).
class ServiceModel {
 public:
  // Kaplan-Meier with weights: at each value, the weight that ended there over the weight
  // still at risk (equal weights: the plain estimate, to the bit).
  ServiceModel(std::vector<ServiceSeen> finished, std::vector<ServiceSeen> censored) {
    auto by_value = [](const ServiceSeen& a, const ServiceSeen& b) { return a.value < b.value; };
    std::sort(finished.begin(), finished.end(), by_value);
    std::sort(censored.begin(), censored.end(), by_value);
    finished_ = finished.size();
    double at_risk = 0;
    for (const auto& f : finished) at_risk += f.weight;
    for (const auto& c : censored) at_risk += c.weight;
    double surv = 1.0;
    size_t c = 0;
    for (size_t i = 0; i < finished.size();) {
      size_t k = i;
      double ended = 0;
      for (; k < finished.size() && finished[k].value == finished[i].value; ++k) {
        ended += finished[k].weight;
      }
      // Censored below this value left the risk set before it.
      for (; c < censored.size() && censored[c].value < finished[i].value; ++c) {
        at_risk -= censored[c].weight;
      }
      if (at_risk > 0) surv *= std::max(0.0, 1.0 - ended / at_risk);
      points_.push_back({finished[i].value, surv});
      at_risk -= ended;
      i = k;
    }
  }
  size_t finished() const { return finished_; }

  // A total service for a job that has attained `attained`: S > attained drawn from the
  // conditional distribution. Past the last finished value L (mass the history cannot place:
  // jobs that ran longer than any that ended), a tail that lasts as long again as it has
  // lasted: P(S > s | S > L) = L / s (a Pareto tail of index 1, median 2L, p90 10L; L is the
  // larger of that value and what the job has attained), at most kTailCap x L. A prior before
  // kMinHistory finished (PriorDraw). `known`: S <= L, where the history knows (made-up
  // arrivals: each drawn with a tail of its own, the forecast's invented load could ask for
  // more GPUs than there are).
  // `u`, when given, is the uniform to use (jobs of one burst share it).
  Service Draw(Service attained, int gpus, Rng& rng, std::optional<double> u = {},
               bool known = false) const {
    if (finished_ < kMinHistory) return PriorDraw(attained, gpus, u ? *u : rng.Uniform(), known);
    // S(attained): the survival just after the last point <= attained.
    auto first_above = std::upper_bound(points_.begin(), points_.end(), attained,
                                        [](Service v, const Point& p) { return v < p.value; });
    const double s_a = first_above == points_.begin() ? 1.0 : std::prev(first_above)->surv;
    const double uniform = u ? *u : rng.Uniform();
    const Point& last = points_.back();  // kMinHistory finished jobs: there are points
    // The first value with survival <= target.
    const double target = TargetSurvival(s_a, last.surv, uniform, known);
    auto hit = std::partition_point(first_above, points_.end(),
                                    [&](const Point& p) { return p.surv > target; });
    if (hit != points_.end()) return hit->value;
    // target is uniform on [0, S(L)) here; target / S(L) is the tail's own uniform.
    const double tail = std::min(s_a, last.surv);
    const double v = tail > 0 ? target / tail : uniform;
    const double from = static_cast<double>(std::max(attained, last.value));
    const double s = from / std::max(v, 1.0 / kTailCap);
    return std::max<Service>(static_cast<Service>(s), attained + 1);
  }

 private:
  struct Point {
    Service value;
    double surv;  // P(S > value)
  };
  std::vector<Point> points_;
  size_t finished_ = 0;
};

// The group of a VC's jobs of one size class (1, 2-4, 5-8, more GPUs). Jobs of no VC have no
// group at all (everyone's: a size class over everyone's jobs was measured worse, README).
std::optional<std::string> SizeGroup(const std::string& vc, int gpus) {
  if (vc.empty()) return std::nullopt;
  const int cls = gpus <= 1 ? 1 : gpus <= 4 ? 4 : gpus <= 8 ? 8 : 9;
  return vc + '\x1f' + std::to_string(cls);
}

// Adds a job's service to everyone's, its VC's and its VC size class's (finished or censored).
void AddSeen(ForecastInput& in, const std::string& vc, int gpus, bool finished, ServiceSeen seen) {
  (finished ? in.finished : in.censored).push_back(seen);
  if (vc.empty()) return;  // everyone's only
  auto& group = in.by_group[vc];
  (finished ? group.first : group.second).push_back(seen);
  auto& size = in.by_group[*SizeGroup(vc, gpus)];
  (finished ? size.first : size.second).push_back(seen);
}

// A job's service is drawn from its VC's jobs of its size class when they number
// kMinGroupHistory finished, else from its VC's when they do, else from everyone's (a sweep of
// one-GPU jobs is not drawn from its VC's multi-day gangs).
class ModelSet {
 public:
  explicit ModelSet(const ForecastInput& in) : all_(in.finished, in.censored) {
    for (const auto& [group, fc] : in.by_group) {
      if (fc.first.size() >= kMinGroupHistory)
        groups_.emplace(group, ServiceModel(fc.first, fc.second));
    }
  }
  const ServiceModel& For(const JobSpec& j) const {
    if (auto key = SizeGroup(j.vc, j.gpus)) {
      if (auto it = groups_.find(*key); it != groups_.end()) return it->second;
    }
    auto it = groups_.find(j.vc);
    return it == groups_.end() ? all_ : it->second;
  }
  const ServiceModel& all() const { return all_; }

 private:
  ServiceModel all_;
  std::unordered_map<std::string, ServiceModel> groups_;
};

// Ids of jobs that a forecast makes up (future arrivals): far above any real id.
constexpr int64_t kPhantomIds = int64_t{1} << 60;

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

// Jobs that arrive after `now` in a copy: the submissions of the last arrival_window, repeated
// window after window (each with a fresh id and a drawn duration).
struct Arrivals {
  std::vector<JobSpec> recent;  // submitted in [now - window, now), by submit
  Duration window = 0;
  Duration span = 0;  // none later than now + span
};

// The most work `j` can do by its time limit (ForecastOptions::time_limits): what it has done
// plus the run time it has left (at least 1 ms), or nullopt without a limit.
std::optional<Duration> WorkCap(const Job& j, Time now, const ForecastOptions& o) {
  const auto it = o.time_limits.find(j.spec.id);
  if (it == o.time_limits.end()) return std::nullopt;
  const Time at = std::max(now, j.progress_start);
  return j.WorkDoneAt(at) + std::max<Duration>(1, it->second - j.ExecutedAt(at));
}

// The margins widen both sides of a range; but a job ends after it starts, with a duration
// given and used (capped by its time limit) not before that work is done after its earliest
// start, and with a time limit not after its latest start plus the run time it has left and
// the grace its stop may take.
void ClampEnds(const Job& j, Time now, const ForecastOptions& o, bool needs_durations,
               JobForecast& jf) {
  const Time at = std::max(now, j.progress_start);
  if (jf.start[0]) {
    Time earliest = std::max(now, *jf.start[0]);
    if (j.spec.duration && (o.use_given_durations || needs_durations)) {
      const Duration work = std::min(*j.spec.duration, WorkCap(j, now, o).value_or(kNever));
      earliest += std::max<Duration>(0, work - j.WorkDoneAt(at));
    }
    for (auto& e : jf.end) {
      if (e && *e < earliest) e = earliest;
    }
  }
  const auto limit = o.time_limits.find(j.spec.id);
  if (limit != o.time_limits.end() && jf.start[2]) {
    const Time latest = std::max(at, *jf.start[2]) +
                        std::max<Duration>(0, limit->second - j.ExecutedAt(at)) + o.stop_grace;
    for (auto& e : jf.end) {
      if (!e || *e > latest) e = latest;  // (unknown: it ends by its limit all the same)
    }
  }
}

StatusOr<Sample> RunSample(const Scheduler& active, Time now, const ModelSet& model,
                           const Arrivals& arrivals, const ForecastOptions& o, Rng rng) {
  auto made = active.Clone();
  if (!made.ok()) return made.status();
  Scheduler& sim = **made;
  Sample out;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> done;
  uint64_t seq = 0;
  const bool draw_all = !o.use_given_durations && !sim.policy().needs_durations();
  // In submit order when bursts share draws (ForecastOptions::burst_gap): per VC and size,
  // the last submit seen and its burst's uniform.
  std::vector<const Job*> drawn;
  for (const Job& j : sim.jobs()) drawn.push_back(&j);
  if (o.burst_gap > 0) {
    std::stable_sort(drawn.begin(), drawn.end(),
                     [](const Job* a, const Job* b) { return a->spec.submit < b->spec.submit; });
  }
  std::map<std::pair<std::string_view, int>, std::pair<Time, double>> bursts;
  for (const Job* jp : drawn) {
    const Job& j = *jp;
    const std::optional<Duration> cap = WorkCap(j, now, o);
    if (j.spec.duration && !draw_all && cap && *j.spec.duration > *cap &&
        !sim.policy().needs_durations()) {
      if (Status s = sim.AssumeDuration(j.spec.id, *cap); !s.ok()) return s;  // its limit
    }
    if (!j.spec.duration || draw_all) {
      std::optional<double> u;
      if (o.burst_gap > 0) {
        auto [it, fresh] = bursts.try_emplace({j.spec.vc, j.gpus()}, j.spec.submit, 0.0);
        if (fresh || j.spec.submit - it->second.first > o.burst_gap) {
          it->second.second = rng.Uniform();
        }
        it->second.first = j.spec.submit;
        u = it->second.second;
      }
      const Service total = model.For(j.spec).Draw(j.AttainedAt(now), j.gpus(), rng, u);
      const Duration remaining = (total - j.AttainedAt(now) + j.gpus() - 1) / j.gpus();
      const Duration work = std::min(j.WorkDoneAt(now) + remaining, cap.value_or(kNever));
      if (Status s = sim.AssumeDuration(j.spec.id, work); !s.ok()) {
        return s;
      }
    }
  }
  // Who held GPUs while the target waited: each run in this copy, from its start (or now) to
  // its end, clipped at the target's start, adds GPUs x its length (one sum per run, not one
  // per event and running job: a backlog of thousands made that quadratic).
  bool holding = o.target.has_value();
  std::unordered_map<JobId, std::pair<Time, int>> run_since;  // running: since when, GPUs
  auto run_began = [&](const Job& j, Time at) {
    if (holding) run_since[j.spec.id] = {at, j.gpus()};
  };
  auto run_ended = [&](JobId id, Time at) {
    if (!holding) return;
    auto it = run_since.find(id);
    if (it == run_since.end()) return;
    if (at > it->second.first) {
      out.held_before_target[id] += it->second.second * double(at - it->second.first);
    }
    run_since.erase(it);
  };
  auto stop_holding = [&](Time at) {  // the target started, or the copy ends
    if (!holding) return;
    for (const auto& [id, since] : run_since) {
      if (at > since.first) out.held_before_target[id] += since.second * double(at - since.first);
    }
    run_since.clear();
    holding = false;
  };
  size_t open = 0;  // real jobs that may still end in this copy (a held one never starts)
  for (const Job& j : sim.jobs()) {
    if (j.state == JobState::kPending || j.running()) ++open;
    if (!j.running()) continue;
    // Started, but its progress begins later (a live daemon's job that waits for processes
    // told to stop to let its GPUs go, or for the engine): it starts then at the latest.
    out.start[j.spec.id] = j.progress_start > now ? j.progress_start : j.run_start;
    done.push({*j.ProjectedEnd(), seq++, j.spec.id, j.starts});
    run_began(j, now);
  }
  const Time until = now + o.horizon;
  // The next phantom arrival: recent[k] shifted by (round + 1) windows.
  size_t k = 0;
  int64_t round = 0;
  uint64_t phantom = 0;
  auto next_arrival = [&]() -> Time {
    if (arrivals.recent.empty() || arrivals.window <= 0) return kNever;
    const Time at = arrivals.recent[k].submit + (round + 1) * arrivals.window;
    return at - now > arrivals.span ? kNever : at;
  };
  Time t = now;
  bool target_started = o.target && out.start.contains(*o.target);
  if (target_started) stop_holding(now);
  if (target_started && o.until_target_starts) return out;
  for (;;) {
    while (!done.empty() && done.top().at == t) {
      const Completion c = done.top();
      done.pop();
      const Job* j = sim.Find(c.job);
      if (!j->running() || j->starts != c.start_no) continue;  // preempted since
      run_ended(c.job, t);
      if (Status s = sim.Finish(c.job, t); !s.ok()) return s;
      if (c.job.value() < kPhantomIds) {
        out.end[c.job] = t;
        --open;
      }
    }
    if (open == 0) {  // only made-up jobs are left
      stop_holding(t);
      break;
    }
    if (o.target && out.end.contains(*o.target)) break;
    for (; next_arrival() == t; ++phantom) {
      JobSpec spec = arrivals.recent[k];
      spec.id = JobId(kPhantomIds + static_cast<int64_t>(phantom));
      spec.submit = t;
      if (!spec.duration || draw_all) {
        spec.duration =
            (model.For(spec).Draw(0, spec.gpus, rng, {}, /*known=*/true) + spec.gpus - 1) /
            spec.gpus;
      }
      (void)sim.Submit(spec, t);  // one that could never fit is rejected, as it was
      if (++k == arrivals.recent.size()) {
        k = 0;
        ++round;
      }
    }
    for (const Action& a : sim.Schedule(t)) {
      if (a.kind != Action::Kind::kStart) {
        run_ended(a.job, t);
        continue;
      }
      const Job* j = sim.Find(a.job);
      if (a.job.value() < kPhantomIds) out.start.try_emplace(a.job, t);
      run_began(*j, t);
      if (o.target && a.job == *o.target) {
        target_started = true;
        stop_holding(t);
      }
      if (target_started && o.until_target_starts) return out;
      done.push({*j->ProjectedEnd(), seq++, a.job, j->starts});
    }
    while (!done.empty()) {  // drop completions of runs that were preempted
      const Job* j = sim.Find(done.top().job);
      if (j->running() && j->starts == done.top().start_no) break;
      done.pop();
    }
    Time next = done.empty() ? kNever : done.top().at;
    next = std::min({next, sim.NextWakeup(), next_arrival()});
    if (next == kNever || next > until) {
      stop_holding(t);
      break;
    }
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

std::vector<PastJob> PastJobsBefore(const std::vector<JobSpec>& jobs, Time from) {
  std::vector<PastJob> past;
  for (const JobSpec& j : jobs) {
    if (j.submit >= from || !j.duration) continue;
    past.push_back({.service = *j.duration * j.gpus,
                    .gpus = j.gpus,
                    .vc = j.vc,
                    .submit = j.submit - from,
                    .end = j.submit + *j.duration - from});
  }
  return past;
}

StatusOr<ForecastInput> PrepareForecast(const Scheduler& core, Time now, const ForecastOptions& o) {
  ForecastInput in;
  auto active = core.Clone(/*active_only=*/true);
  if (!active.ok()) return active.status();
  in.active = std::move(*active);
  // A job's weight in the duration estimate (ForecastOptions::half_life).
  auto weight = [&](Time submit) {
    return o.half_life > 0 ? std::exp2(-static_cast<double>(std::max<Time>(0, now - submit)) /
                                       static_cast<double>(o.half_life))
                           : 1.0;
  };
  if (o.history) {
    for (const PastJob& p : *o.history) {
      const bool ended = !p.end || *p.end <= now;
      Service value = p.service;
      if (!ended) {  // attained by now, at the pace of its whole run
        value = p.submit && *p.end > *p.submit
                    ? static_cast<Service>(static_cast<double>(p.service) *
                                           static_cast<double>(std::max<Time>(0, now - *p.submit)) /
                                           static_cast<double>(*p.end - *p.submit))
                    : 0;
      }
      AddSeen(in, p.vc, p.gpus, ended, {value, p.submit ? weight(*p.submit) : 1.0});
    }
  }
  for (const Job& j : core.jobs()) {
    if (j.state == JobState::kFinished) {
      AddSeen(in, j.spec.vc, j.gpus(), true, {j.AttainedAt(j.end), weight(j.spec.submit)});
    }
    if (j.state == JobState::kPending || j.state == JobState::kRunning ||
        j.state == JobState::kHeld) {
      AddSeen(in, j.spec.vc, j.gpus(), false, {j.AttainedAt(now), weight(j.spec.submit)});
    }
    if (o.arrival_window > 0 && j.spec.submit >= now - o.arrival_window && j.spec.submit < now &&
        j.state != JobState::kRejected) {
      in.recent.push_back(j.spec);
    }
  }
  std::sort(in.recent.begin(), in.recent.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
  return in;
}

StatusOr<Forecast> ForecastJobs(const Scheduler& core, Time now, const ForecastOptions& o) {
  auto in = PrepareForecast(core, now, o);
  if (!in.ok()) return in.status();
  return RunForecast(*in, now, o);
}

StatusOr<Forecast> RunForecast(const ForecastInput& in, Time now, const ForecastOptions& o) {
  Forecast f{.now = now, .samples = std::max(1, o.samples)};
  const ModelSet model(in);
  const Arrivals arrivals{.recent = in.recent, .window = o.arrival_window, .span = o.arrival_span};
  f.history = model.all().finished() >= kMinHistory ? model.all().finished() : 0;
  std::unordered_map<JobId, std::vector<Time>> starts, ends;
  std::map<JobId, double> held;
  double held_total = 0;
  for (int s = 0; s < f.samples; ++s) {
    auto sample = RunSample(*in.active, now, model, arrivals, o,
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
  for (const Job& j : in.active->jobs()) {
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
    if (!j.running()) WidenRange(jf.start, now, o.margin);  // (a running job's start is known)
    WidenRange(jf.end, now, o.margin);
    ClampEnds(j, now, o, in.active->policy().needs_durations(), jf);
    f.jobs.emplace(j.spec.id, jf);
  }
  if (o.target && held_total > 0) {
    for (const auto& [id, v] : held) {
      if (f.jobs.contains(id)) {
        f.in_the_way.push_back({id, v / held_total});
      } else {
        f.arrivals_share += v / held_total;  // a made-up arrival (found by a review: listed by
      }                                      // an id no job has)
    }
    std::sort(f.in_the_way.begin(), f.in_the_way.end(), [](const auto& a, const auto& b) {
      return a.share != b.share ? a.share > b.share : a.job < b.job;
    });
    if (f.in_the_way.size() > 5) f.in_the_way.resize(5);
  }
  return f;
}

}  // namespace tiresias
