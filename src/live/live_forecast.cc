// LiveScheduler's forecasts (engine/forecast.h) for explain and `ls -o wide`: the core's active
// jobs are copied under the lock, the copies run forward without it, and the result is cached
// for a few seconds so that a burst of reads costs one forecast.
#include <fmt/format.h>

#include "engine/forecast.h"
#include "live/live_scheduler.h"

namespace tiresias {
namespace {

constexpr int kSamples = 16;
constexpr Duration kCacheFor = Seconds(5);

nlohmann::json Range(const std::array<std::optional<Time>, 3>& r, int64_t epoch) {
  auto wall = [&](const std::optional<Time>& t) -> nlohmann::json {
    return t ? nlohmann::json(*t + epoch) : nlohmann::json(nullptr);
  };
  return {{"p10_ms", wall(r[0])}, {"p50_ms", wall(r[1])}, {"p90_ms", wall(r[2])}};
}

}  // namespace

StatusOr<nlohmann::json> LiveScheduler::Estimate(JobId id) {
  std::unique_lock lk(mu_);
  auto it = records_.find(id);
  if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
  if (IsTerminal(it->second.state)) return nlohmann::json(nullptr);
  // Past its time limit, stopping: the core ended its run; nothing is left to forecast.
  if (it->second.timing_out) {
    return nlohmann::json{{"unknown", "past its time limit, stopping (it ends timed out)"}};
  }
  // Held back (its user's hold, a dependency, its array's limit): when that ends is not the
  // scheduler's to forecast (a forecast would keep it held for ever: "not within a year", and
  // name running jobs as in its way).
  if (std::string held = HeldReason(it->second); !held.empty()) {
    return nlohmann::json{{"unknown", std::move(held)}};
  }
  return ForecastFor(lk, id, std::nullopt);
}

StatusOr<nlohmann::json> LiveScheduler::WhatIfSubmit(int gpus, std::optional<Duration> run,
                                                     const std::string& user, const std::string& vc,
                                                     std::optional<Duration> time_limit) {
  std::unique_lock lk(mu_);
  // An id no job has or will have: the next one, which this job would get.
  const JobId id(store_->NextJobId());
  // In the VC a submission of `user` would get (tenants: its quota, its borrowing).
  JobRecord as{.user = user, .gpus = gpus};
  if (Status s = ResolveVc(vc, as); !s.ok()) return s;
  JobSpec spec{.id = id,
               .gpus = gpus,
               .submit = Now(),
               .name = "whatif",
               .user = as.user,
               .vc = as.vc,
               .duration = run};
  if (auto why = sched_->placement().NeverFitsReason(spec, sched_->topology())) {
    return InvalidArgument(fmt::format("a {}-GPU job could never run here: {}", gpus, *why));
  }
  return ForecastFor(lk, id, spec, time_limit);
}

ForecastOptions LiveScheduler::OptionsNow() const {
  ForecastOptions o{.samples = kSamples, .margin = margins_.margin(), .stop_grace = cfg_.grace};
  for (const auto& [id, rec] : open_) {
    if (rec->time_limit) o.time_limits[id] = *rec->time_limit;
  }
  return o;
}

StatusOr<ForecastInput> LiveScheduler::PrepareNow(const ForecastOptions& o, Time now) const {
  auto in = PrepareForecast(*sched_, now, o);
  if (in.ok()) RestoreStoppingGpus(*in->active, now);
  return in;
}

void LiveScheduler::ResolveForecasts(Time now) {
  margins_.Resolve(now, [&](JobId id) {
    const Job* j = sched_->Find(id);
    StartSeen s;
    if (!j) {
      s.gone = true;
    } else if (j->first_start >= 0 && j->first_start <= now) {
      s.started = j->first_start;
    } else {
      s.gone = j->ended();
    }
    return s;
  });
  SaveMargins();
}

void LiveScheduler::RecordForecast(JobId id, const std::array<std::optional<Time>, 3>& range) {
  const Job* j = sched_->Find(id);
  if (!j || j->first_start >= 0 || j->state != JobState::kPending || margins_.Pending(id)) return;
  margins_.Record(id, range[0], range[2]);
  SaveMargins();
}

void LiveScheduler::SaveMargins() {
  std::string now = margins_.ToJson().dump();
  // (Not into a journal moved from its path: serve is paused then, and a read such as
  // `ls -o wide` may get here outside a step's transaction.)
  if (now == margins_saved_ || !store_->InPlace().ok()) return;
  // Lost on a failed write, the margins are only relearned: a warning, not a fault.
  if (Status s = store_->SetMeta(kMarginsKey, now); !s.ok()) {
    Warn(fmt::format("forecast margins not saved: {}", s.message()));
    return;
  }
  margins_saved_ = std::move(now);
}

StatusOr<nlohmann::json> LiveScheduler::ForecastFor(std::unique_lock<std::mutex>& lk, JobId id,
                                                    std::optional<JobSpec> extra,
                                                    std::optional<Duration> extra_limit) {
  const Time now = Now();
  const int64_t epoch = store_->epoch_ms();
  ResolveForecasts(now);
  ForecastOptions opts = OptionsNow();
  opts.seed = static_cast<uint64_t>(id.value());
  opts.target = id;
  if (extra && extra_limit) opts.time_limits[extra->id] = *extra_limit;
  auto in = PrepareNow(opts, now);
  if (!in.ok()) return in.status();
  lk.unlock();
  if (extra) {
    if (Status s = in->active->Submit(*extra, now); !s.ok()) return s;
    (void)in->active->Schedule(now);
  }
  auto f = RunForecast(*in, now, opts);
  if (!f.ok()) return f.status();
  lk.lock();
  const auto found = f->jobs.find(id);
  if (found == f->jobs.end()) {  // not among the core's active jobs (not expected: Estimate)
    return FailedPrecondition(fmt::format("job {}: not waiting or running", JobRefOf(id)));
  }
  const JobForecast& jf = found->second;
  if (!extra) RecordForecast(id, jf.start);
  nlohmann::json way = nlohmann::json::array();
  for (const InTheWay& w : f->in_the_way) {
    auto r = records_.find(w.job);
    way.push_back({{"id", w.job.value()},
                   {"ref", r == records_.end() ? w.job.str() : RefOf(r->second)},
                   {"name", r == records_.end() ? "" : r->second.name},
                   {"user", r == records_.end() ? "" : r->second.user},
                   {"share", w.share}});
  }
  const std::array<double, 2> margin = opts.margin;
  // (A job the core started that waits for GPUs to be let go, or for the engine, is not.)
  const auto rec = records_.find(id);
  return nlohmann::json{
      {"running", rec != records_.end() && rec->second.state == LiveState::kRunning},
      {"start", Range(jf.start, epoch)},
      {"end", Range(jf.end, epoch)},
      {"samples", f->samples},
      {"history", f->history},
      {"in_the_way", way},
      {"arrivals_share", f->arrivals_share},
      {"margins", {margin[0], margin[1]}},
      {"margins_learned_from", margins_.resolved()},
      {"method",
       fmt::format("{} forward simulations of the scheduler from now; durations drawn from {} "
                   "given what each job has attained; jobs keep arriving as in the last 6 h; "
                   "p10 and p90 widened by margins adapted to {} outcomes of earlier forecasts",
                   f->samples,
                   f->history > 0 ? fmt::format("the service of {} finished jobs", f->history)
                                  : std::string("a wide prior (fewer than 20 jobs finished)"),
                   margins_.resolved())}};
}

std::map<JobId, int64_t> LiveScheduler::StartEstimates() {
  std::unique_lock lk(mu_);
  const Time now = Now();
  if (estimates_at_ && now - *estimates_at_ < kCacheFor) return estimates_;
  const int64_t epoch = store_->epoch_ms();
  ResolveForecasts(now);
  const ForecastOptions opts = OptionsNow();
  auto in = PrepareNow(opts, now);
  if (!in.ok()) return {};
  lk.unlock();
  auto f = RunForecast(*in, now, opts);
  lk.lock();
  if (!f.ok()) return {};
  estimates_.clear();
  for (const auto& [id, jf] : f->jobs) {
    if (jf.start[1]) estimates_[id] = *jf.start[1] + epoch;
    RecordForecast(id, jf.start);
  }
  estimates_at_ = now;
  return estimates_;
}

}  // namespace tiresias
