// The trace-driven simulator: simulated clock, arrivals, completions and core timers.
#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <queue>

#include "core/scheduler.h"
#include "engine/core_builder.h"
#include "engine/file_data_source.h"
#include "engine/forecast.h"

namespace tiresias {
namespace {

struct Completion {
  Time at;
  uint64_t seq;
  JobId job;
  int start_no;               // the job's start count when this completion was computed
  bool attempt_ends = false;  // an attempt ends without finishing the job (replay_attempts)
  bool operator>(const Completion& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

// The runs' projected ends, earliest first ((at, seq) is a total order: the heap's shape
// never shows). A preempted run's entry stays until it surfaces, or until such stale entries
// outnumber the running jobs and are swept out: the heap stays the size of what runs, not of
// every run ever started (a burst under las starts tens of millions).
class Completions {
 public:
  bool empty() const { return v_.empty(); }
  const Completion& top() const { return v_.front(); }
  void push(const Completion& c) {
    v_.push_back(c);
    std::push_heap(v_.begin(), v_.end(), std::greater<>());
  }
  void pop() {
    std::pop_heap(v_.begin(), v_.end(), std::greater<>());
    v_.pop_back();
  }
  // `live(c)`: the run of `c` is still the job's current one.
  template <typename Live>
  void Sweep(size_t running, Live live) {
    if (v_.size() <= 2 * running + 1024) return;
    std::erase_if(v_, [&](const Completion& c) { return !live(c); });
    std::make_heap(v_.begin(), v_.end(), std::greater<>());
  }

 private:
  std::vector<Completion> v_;
};

// Forecasts of the start of the jobs submitted at `t` (jobs[from, to)) that are sampled and
// still waiting, made on the core as it stands after this event's decisions; and the naive
// estimate: the jobs ahead of it in the order, times the mean duration of the jobs finished
// so far, divided by how many jobs of the mean size the cluster runs at once. The ranges are
// widened by the margins `tracker` has learned from the forecasts made before whose outcome
// is known by now (MarginTracker).
template <class Jobs>
Status CheckForecasts(const Scheduler& core, const Jobs& jobs, size_t from, size_t to, Time t,
                      const SimConfig& cfg, MarginTracker& tracker, SimResult& result) {
  for (size_t i = from; i < to; ++i) {
    if (i % cfg.forecast_every != 0) continue;
    const Job* j = core.Find(jobs.id(i));
    if (!j || j->state != JobState::kPending) continue;
    tracker.Resolve(t, [&](JobId id) {
      const Job* o = core.Find(id);
      StartSeen s;
      if (o && o->first_start >= 0 && o->first_start <= t) s.started = o->first_start;
      return s;
    });
    auto f = ForecastJobs(core, t,
                          {.samples = cfg.forecast_samples,
                           .seed = static_cast<uint64_t>(i) + 1,
                           .target = jobs.id(i),
                           .until_target_starts = true,
                           .use_given_durations = false,
                           .margin = {0, 0},
                           .history = cfg.forecast_history,
                           .half_life = cfg.forecast_half_life,
                           .burst_gap = cfg.forecast_burst_gap});
    if (!f.ok()) return f.status();
    const std::array<std::optional<Time>, 3> raw = f->jobs.at(jobs.id(i)).start;
    std::array<std::optional<Time>, 3> range = raw;
    WidenRange(range, t, tracker.margin());
    tracker.Record(jobs.id(i), range[0], range[2]);
    double done = 0, sum_duration = 0, sum_gpus = 0;
    for (const Job& o : core.jobs()) {
      if (o.state != JobState::kFinished) continue;
      ++done;
      sum_duration += static_cast<double>(o.ExecutedAt(o.end));
      sum_gpus += o.gpus();
    }
    const std::vector<JobId> order = core.WaitingInOrder();
    const double ahead =
        static_cast<double>(std::find(order.begin(), order.end(), jobs.id(i)) - order.begin());
    const double at_once =
        done > 0 ? std::max(1.0, core.cluster().total_usable() / (sum_gpus / done)) : 1.0;
    const double mean = done > 0 ? sum_duration / done : 0;
    result.forecasts.push_back({.job = jobs.id(i),
                                .at = t,
                                .p10 = range[0],
                                .p50 = range[1],
                                .p90 = range[2],
                                .raw_p10 = raw[0],
                                .raw_p90 = raw[2],
                                .naive = t + static_cast<Time>(ahead * mean / at_once)});
  }
  return Status::Ok();
}

// The simulator reads its jobs through one of these (JobTable, or a plain list).
struct JobList {
  const std::vector<JobSpec>& v;
  size_t size() const { return v.size(); }
  bool empty() const { return v.empty(); }
  JobId id(size_t i) const { return v[i].id; }
  Time submit(size_t i) const { return v[i].submit; }
  bool has_duration(size_t i) const { return v[i].duration.has_value(); }
  const JobSpec& spec(size_t i) const { return v[i]; }
};

template <class Jobs>
StatusOr<SimResult> Simulate(const SimConfig& cfg, const Jobs& jobs);

}  // namespace

StatusOr<SimResult> RunSimulation(const SimConfig& cfg, const std::vector<JobSpec>& jobs) {
  return Simulate(cfg, JobList{jobs});
}

StatusOr<SimResult> RunSimulation(const SimConfig& cfg, const JobTable& jobs) {
  return Simulate(cfg, jobs);
}

NameId NamePool::Intern(std::string_view s) {
  if (s.empty()) return 0;
  auto it = index_.find(s);
  if (it == index_.end()) {
    it = index_.emplace(std::string(s), static_cast<NameId>(names_.size())).first;
    names_.emplace_back(s);
  }
  return it->second;
}

Duration CheckpointIntervalOf(const SimConfig& cfg, JobId id) {
  if (cfg.ckpt_max <= 0) return 0;
  if (cfg.ckpt_max == cfg.ckpt_min) return cfg.ckpt_min;
  // splitmix64 of (seed, id): the same job gets the same interval in every run.
  uint64_t z = cfg.ckpt_seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(id.value());
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  const uint64_t span = static_cast<uint64_t>(cfg.ckpt_max - cfg.ckpt_min) + 1;
  return cfg.ckpt_min + static_cast<Duration>(z % span);
}

namespace {

template <class Jobs>
StatusOr<SimResult> Simulate(const SimConfig& cfg, const Jobs& jobs) {
  if (cfg.preempt_overhead < 0) return InvalidArgument("preempt overhead must be >= 0");
  if (cfg.ckpt_min < 0 || cfg.ckpt_max < cfg.ckpt_min || (cfg.ckpt_max > 0 && cfg.ckpt_min <= 0)) {
    return InvalidArgument("checkpoint interval: need 0 < min <= max (or none)");
  }
  const bool ckpt = cfg.ckpt_max > 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs.has_duration(i)) {
      return InvalidArgument(
          fmt::format("job {}: the simulator needs a duration", jobs.id(i).value()));
    }
    if (i && (jobs.submit(i) < jobs.submit(i - 1) ||
              (jobs.submit(i) == jobs.submit(i - 1) && jobs.id(i) <= jobs.id(i - 1)))) {
      return InvalidArgument("simulator: jobs must be sorted by (submit, id) with unique ids");
    }
  }

  FileDataSource own_files;
  auto built = BuildCore(CoreConfig{.topo = cfg.topo,
                                    .policy = cfg.policy,
                                    .policy_opts = cfg.policy_opts,
                                    .placement = cfg.placement,
                                    .placement_opts = cfg.placement_opts,
                                    .options = {.restore_overhead = cfg.preempt_overhead,
                                                .record_transitions = cfg.record_events,
                                                .checkpoint_aware = cfg.checkpoint_aware,
                                                .lose_work = ckpt},
                                    .speed = cfg.speed,
                                    .tenants = cfg.tenants,
                                    .even_split = cfg.even_split},
                         cfg.data ? *cfg.data : own_files);
  if (!built.ok()) return built.status();
  Scheduler& core = **built;
  // A job that ended is written to the result and dropped from the core (Scheduler::Forget),
  // so the core holds only the jobs in the system (a million-job replay's memory), except
  // when forecasts read the finished jobs.
  const bool forget = cfg.forecast_every == 0;
  if (!forget) core.Reserve(jobs.size());
  SimResult result;
  result.label = cfg.label.empty() ? cfg.policy + "+" + cfg.placement : cfg.label;
  result.topology = cfg.topo.str();
  result.total_gpus = cfg.topo.total_gpus();
  if (cfg.tenants.on()) {
    auto quotas = ResolveQuotas(cfg.tenants, cfg.topo.total_gpus());  // BuildCore checked them
    for (size_t v = 0; v < cfg.tenants.vcs.size(); ++v) {
      result.vc_quotas.emplace_back(cfg.tenants.vcs[v].name, (*quotas)[v]);
    }
  }
  // Results are appended as jobs end (memory is touched only as they do) with their
  // submission index in `order`, and put in submission order at the end.
  result.jobs.reserve(jobs.size());
  std::vector<uint32_t> order;
  order.reserve(jobs.size());
  // By core slot (slots are reused after Forget): the submission index of its job and the
  // placement shape (nodes, switches) of that job's last run.
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> index_of;
  std::vector<std::pair<int, int>> shape;
  auto slot_of = [&](const Job* j) { return static_cast<size_t>(j - core.jobs().data()); };
  auto write_result = [&](const Job& j, size_t i, std::pair<int, int> nodes_switches,
                          std::string_view reject) {
    order.push_back(static_cast<uint32_t>(i));
    JobResult& r = result.jobs.emplace_back();
    r.nodes = Saturate<uint16_t>(nodes_switches.first);
    r.switches = Saturate<uint16_t>(nodes_switches.second);
    r.reject_reason = result.names->Intern(reject);
    r.id = j.spec.id;
    r.gpus = j.gpus();
    r.model = result.names->Intern(j.spec.model);
    r.user = result.names->Intern(j.spec.user);
    r.vc = result.names->Intern(j.spec.vc);
    r.state = j.state;
    r.submit = j.spec.submit;
    r.first_start = j.first_start;
    r.end = j.end;
    r.preemptions = j.preemptions;
    r.evictions = Saturate<uint16_t>(j.evictions);
    r.promotions = j.promotions;
    r.restarts = Saturate<uint16_t>(j.restarts);
    r.final_queue = Saturate<int8_t>(j.queue);
    r.overhead = j.overhead;
    r.executed = j.executed;
    r.lost = j.lost;
    r.work = *j.spec.duration;
    r.model_known = !cfg.speed || cfg.speed->Knows(j.spec);
    if (j.first_start >= 0) {
      result.last_run_end = std::max(
          result.last_run_end, j.state == JobState::kFinished || j.end >= 0 ? j.end : j.last_stop);
    }
  };
  // The job ended: into the result, and out of the core unless forecasts need it.
  auto retire = [&](JobId id, std::string_view reject = {}) -> Status {
    const Job* j = core.Find(id);
    const size_t slot = slot_of(j);
    write_result(*j, index_of[slot], shape[slot], reject);
    index_of[slot] = kNone;
    return forget ? core.Forget(id) : Status::Ok();
  };

  Completions done;
  // The job of `c` when `c` is its current run's end; null when that run was preempted (or
  // the job ended and was forgotten).
  auto current = [&](const Completion& c) -> const Job* {
    const Job* j = core.Find(c.job);
    return j && j->running() && j->starts == c.start_no ? j : nullptr;
  };
  auto live = [&](const Completion& c) { return current(c) != nullptr; };
  uint64_t seq = 0;
  size_t next = 0, next_cap = 0;
  for (const CapacityChange& c : cfg.capacity) {
    if (c.node < 0 || c.node >= cfg.topo.num_nodes() || c.gpus < 0 ||
        c.gpus > cfg.topo.gpus_per_node()) {
      return InvalidArgument(
          fmt::format("capacity change at {} ms: node {} with {} GPUs is not "
                      "in {}",
                      c.at, c.node, c.gpus, cfg.topo.str()));
    }
  }
  if (!std::is_sorted(cfg.capacity.begin(), cfg.capacity.end(),
                      [](const auto& a, const auto& b) { return a.at < b.at; })) {
    return InvalidArgument("simulator: capacity changes must be sorted by time");
  }
  // With replay_attempts: the attempt each job is in, by submission index.
  std::vector<uint32_t> attempt(cfg.replay_attempts ? jobs.size() : 0, 0);
  // With the checkpoint model: each job's interval, and the jobs started (maybe running).
  std::vector<Duration> interval(ckpt ? jobs.size() : 0, 0);
  for (size_t i = 0; i < interval.size(); ++i) interval[i] = CheckpointIntervalOf(cfg, jobs.id(i));
  std::vector<uint32_t> started;
  Time last_t = 0;
  size_t ended = 0;          // jobs finished so far (for progress)
  size_t forecast_from = 0;  // jobs[forecast_from, next) were submitted at this event
  MarginTracker margins(cfg.forecast_margin, cfg.forecast_step);
  int frag_now = 0;  // GPUs idle because of fragmentation since last_t
  // Time series: the state after the last event holds until the next one; each grid point
  // before the next event gets it (counted per queue once per event, not per point).
  Time next_sample = cfg.series_step > 0 && !jobs.empty()
                         ? jobs.submit(0) / cfg.series_step * cfg.series_step
                         : kNever;
  SeriesPoint now_state;
  bool state_stale = true;
  auto sample_until = [&](Time until) {
    for (; next_sample < until; next_sample += cfg.series_step) {
      if (state_stale) {
        const ClusterState& cl = core.cluster();
        now_state.free_gpus = cl.total_free();
        now_state.unusable_gpus = result.total_gpus - cl.total_usable();
        now_state.busy_gpus = cl.total_usable() - cl.total_free();
        core.CountByQueue(now_state.waiting, now_state.running);
        state_stale = false;
      }
      now_state.preemptions = result.preemptions;
      now_state.t = next_sample;
      result.series.push_back(now_state);
    }
  };
  while (true) {
    Time t = kNever;
    if (next < jobs.size()) t = jobs.submit(next);
    if (next_cap < cfg.capacity.size()) t = std::min(t, cfg.capacity[next_cap].at);
    while (!done.empty() && !live(done.top())) done.pop();  // runs preempted since
    if (!done.empty()) t = std::min(t, done.top().at);
    t = std::min(t, core.NextWakeup());
    if (next_sample != kNever) {
      sample_until(t == kNever ? last_t + 1 : t);  // the end: one point after the last event
      state_stale = true;
    }
    if (t == kNever) break;
    ++result.events;
    if (cfg.progress && (result.events & 4095) == 0) cfg.progress(t, ended, jobs.size());
    result.frag_idle_gpu_ms += static_cast<double>(frag_now) * static_cast<double>(t - last_t);
    last_t = t;

    while (!done.empty() && done.top().at == t) {
      const Completion c = done.top();
      done.pop();
      if (const Job* j = current(c)) {
        if (c.attempt_ends) {  // the attempt failed; the job waits to be restarted
          const uint32_t ended = ++attempt[index_of[slot_of(j)]];
          if (cfg.record_events) {  // the live journal's requeue, by the trace
            result.event_log.push_back(
                {.t = t,
                 .kind = EventKind::kRequeue,
                 .job = c.job,
                 .detail = {{"by", fmt::format("the trace (attempt {} of {} ended)", ended,
                                               j->spec.attempts.size())}}});
          }
          if (Status st = core.Requeue(c.job, t); !st.ok()) return st;
          continue;
        }
        if (Status st = core.Finish(c.job, t); !st.ok()) return st;  // a core defect: stop
        if (Status st = retire(c.job); !st.ok()) return st;
        ++ended;
        if (cfg.record_events) {
          result.event_log.push_back({.t = t, .kind = EventKind::kFinish, .job = c.job});
        }
      }
    }
    // Capacity after completions, before arrivals (the core's same-time rule).
    for (; next_cap < cfg.capacity.size() && cfg.capacity[next_cap].at == t; ++next_cap) {
      const CapacityChange& c = cfg.capacity[next_cap];
      const uint64_t mask = core.UsableMaskFor(c.node, c.gpus);
      std::vector<std::pair<JobId, std::vector<GpuId>>> held;
      if (cfg.record_events) {
        for (const Job& j : core.jobs()) {
          if (j.running()) held.emplace_back(j.spec.id, j.alloc.Gpus());
        }
      }
      auto stopped = core.SetNodeAvailability(c.node, mask, t);
      if (!stopped.ok()) return stopped.status();
      if (cfg.record_events) {
        result.event_log.push_back(CapacityEvent(t, c.node, mask, "capacity change"));
        for (JobId id : *stopped) {
          auto it =
              std::find_if(held.begin(), held.end(), [&](const auto& h) { return h.first == id; });
          result.event_log.push_back(
              {.t = t,
               .kind = EventKind::kEvict,
               .job = id,
               .detail = {{"gpus", GpusToJson(it->second)},
                          {"reason", fmt::format("node {} lost GPUs", c.node)}}});
        }
      }
    }
    for (; next < jobs.size() && jobs.submit(next) == t; ++next) {
      const bool duplicate = core.Find(jobs.id(next)) != nullptr;
      const auto& spec = jobs.spec(next);  // a JobTable builds it
      Status st = core.Submit(spec, t);
      if (duplicate) {  // the core keeps the first job of that id
        Job dup{.spec = spec, .state = JobState::kRejected, .end = t};
        write_result(dup, next, {0, 0}, st.message());
      } else {
        const size_t slot = slot_of(core.Find(jobs.id(next)));
        if (index_of.size() <= slot) {
          index_of.resize(slot + 1, kNone);
          shape.resize(slot + 1);
        }
        index_of[slot] = static_cast<uint32_t>(next);
        shape[slot] = {0, 0};
        if (!st.ok()) {
          if (Status r = retire(jobs.id(next), st.message()); !r.ok()) return r;
        }
      }
      if (cfg.record_events) {
        result.event_log.push_back({.t = t,
                                    .kind = EventKind::kSubmit,
                                    .job = spec.id,
                                    .detail = {{"name", spec.name}, {"gpus", spec.gpus}}});
        if (!st.ok()) {
          result.event_log.push_back({.t = t,
                                      .kind = EventKind::kReject,
                                      .job = spec.id,
                                      .detail = {{"reason", st.message()}}});
        }
      }
    }
    if (ckpt) {  // the core learns each running job's last checkpoint before it decides
      size_t keep = 0;
      for (uint32_t slot : started) {
        const Job& j = core.jobs()[slot];
        if (!j.running()) continue;
        started[keep++] = slot;
        const Duration iv = interval[index_of[slot]];
        if (t < j.progress_start + iv) continue;
        const Time last = j.progress_start + (t - j.progress_start) / iv * iv;
        if (last <= j.ckpt_at) continue;
        if (Status st = core.Checkpointed(j.spec.id, last, t); !st.ok()) return st;
      }
      started.resize(keep);
    }
    const std::vector<Action> actions = core.Schedule(t);
    for (const Transition& tr : core.TakeTransitions()) {
      result.event_log.push_back(EventOf(tr.job, tr.at, tr.from_queue, tr.to_queue));
    }
    for (const Action& a : actions) {
      if (cfg.record_events) result.event_log.push_back(EventOf(a, t));
      if (a.kind == Action::Kind::kPreempt) ++result.preemptions;
      if (a.kind != Action::Kind::kStart) continue;
      const Job* j = core.Find(a.job);
      const size_t slot = slot_of(j);
      const uint32_t index = index_of[slot];
      if (ckpt) started.push_back(static_cast<uint32_t>(slot));
      Duration target = *j->spec.duration;  // the whole job
      bool attempt_ends = false;
      if (cfg.replay_attempts && attempt[index] + 1 < j->spec.attempts.size()) {
        target = 0;  // the work done by the end of the current attempt
        for (size_t k = 0; k <= attempt[index]; ++k) target += j->spec.attempts[k];
        attempt_ends = true;
      }
      done.push(Completion{*j->ProjectedTimeOfWork(target), seq++, a.job, j->starts, attempt_ends});
      int sw = 0, last = -1;
      for (const auto& sl : a.alloc.slices) {
        if (cfg.topo.switch_of(sl.node) != last) ++sw;
        last = cfg.topo.switch_of(sl.node);
      }
      shape[slot] = {a.alloc.node_count(), sw};  // the shape of its last run
    }
    done.Sweep(core.num_running(), live);
    if (cfg.forecast_every > 0) {
      if (Status st = CheckForecasts(core, jobs, forecast_from, next, t, cfg, margins, result);
          !st.ok()) {
        return st;
      }
      forecast_from = next;
    }
    // Fragmentation: the first waiting job would fit the free GPUs in count, yet waits.
    const Job* head = core.FirstWaiting();
    int free = core.cluster().total_free();
    frag_now = head && free > 0 && head->gpus() <= free ? free : 0;
  }

  if (cfg.progress) cfg.progress(last_t, jobs.size(), jobs.size());
  result.passes = core.passes();
  result.placement_note = core.placement().Note();
  for (size_t slot = 0; slot < index_of.size(); ++slot) {  // the jobs that never ended
    if (index_of[slot] == kNone) continue;
    write_result(core.jobs()[slot], index_of[slot], shape[slot], {});
  }
  // Into submission order, in place: each cycle of the permutation is followed once.
  for (size_t k = 0; k < order.size(); ++k) {
    while (order[k] != k) {
      const size_t to = order[k];
      std::swap(result.jobs[k], result.jobs[to]);
      std::swap(order[k], order[to]);
    }
  }
  return result;
}

}  // namespace
}  // namespace tiresias
