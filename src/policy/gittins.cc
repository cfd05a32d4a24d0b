// gittins: Discretized 2D-Gittins (Tiresias-G). The queues, demotion and promotion of dlas;
// inside a queue, the highest Gittins index first, with quantum D = the queue's upper
// threshold minus the job's service in its climb (the last queue uses `quantum`). The index
// comes from a GPU-time history and may learn from completed jobs (online=true); with
// threshold_quantiles the queue thresholds are quantiles of the same history and move with it.
#include <fmt/format.h>

#include "core/topology.h"
#include "policy/gittins_index.h"
#include "policy/queue_discipline.h"
#include "policy/registry.h"

namespace tiresias {
namespace {

class Gittins : public OrderingPolicy {
 public:
  std::unique_ptr<OrderingPolicy> Clone() const override {
    return std::make_unique<Gittins>(*this);
  }
  Gittins(QueueDiscipline q, GittinsIndex index, Service last_quantum, bool online)
      : q_(std::move(q)), index_(std::move(index)), last_quantum_(last_quantum), online_(online) {
    if (q_.adaptive()) q_.FollowHistory(index_);
  }
  std::string_view name() const override { return "gittins"; }
  bool preemptive() const override { return true; }
  bool key_changes_while_running() const override { return true; }
  bool k0_changes_only_at_transitions() const override { return true; }
  // Until the service reaches the next sample of the history the index only grows (the
  // queue's quantum is fixed, or ends at the queue's threshold): GittinsIndex::NextBreak.
  bool running_keys_never_increase() const override { return true; }
  Time KeyBoundUntil(const Job& j, Time now) const override {
    auto next = index_.NextBreak(j.AttainedAt(now), j.key_hint);  // Key(j, now) left it there
    return next ? j.WhenAttains(*next, now) : kNever;             // kNever: index 0 for good
  }
  double IndexOf(const Job& j, Time now) const {
    const Service a = j.AttainedAt(now);
    auto up = q_.upper(j.queue);
    Service quantum = up ? *up - (a - j.q_base) : last_quantum_;
    return index_.Index(a, quantum, &j.key_hint);
  }
  SortKey Key(const Job& j, Time now) const override {
    return {.k0 = j.queue, .k1 = -IndexOf(j, now), .submit = j.spec.submit, .id = j.spec.id};
  }
  void OnSubmit(Job& j) const override { q_.Enter(j); }
  int num_queues() const override { return q_.num_queues(); }
  std::optional<Time> NextTransition(const Job& j, Time now) const override {
    return q_.NextTransition(j, now);
  }
  bool ApplyTransition(Job& j, Time now) const override { return q_.Apply(j, now); }
  // A merge into the history changes every job's index (and adaptive thresholds).
  bool OnFinish(const Job& j) override {
    if (!online_ || !index_.Add(j.AttainedAt(j.end))) return false;
    if (q_.adaptive()) q_.FollowHistory(index_);
    return true;
  }
  bool Relearned(Job& j, Time now) const override { return q_.adaptive() && q_.Rebucket(j, now); }
  std::string Describe(const Job& j, Time now) const override {
    return fmt::format("{}, Gittins index {:.6f}", q_.Describe(j, now), IndexOf(j, now));
  }

 private:
  QueueDiscipline q_;
  GittinsIndex index_;
  Service last_quantum_;
  bool online_;
};

}  // namespace

PolicyInfo GittinsInfo() {
  auto opts = QueueDiscipline::Options(kGittinsDefaultThresholds, kGittinsDefaultKnob);
  opts.push_back({"quantum",
                  OptionSpec::Type::kDouble,
                  "36000",
                  "quantum D of the last queue, GPU-seconds",
                  {},
                  0.001,
                  kMaxGpuSeconds});
  for (auto& o : QueueDiscipline::HistoryOptions()) opts.push_back(std::move(o));
  return {"gittins",
          "Discretized 2D-Gittins (Tiresias-G): dlas queues, Gittins index inside a queue", opts,
          [](const OptionValues& v,
             const DataSource& data) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
            auto q = QueueDiscipline::FromOptions("policy gittins", v, kGittinsDefaultThresholds);
            if (!q.ok()) return q.status();
            auto samples = data.GpuTimeHistory(v.Str("history"));
            if (!samples.ok()) return samples.status();
            double quantum = v.Double("quantum");
            if (quantum <= 0) return InvalidArgument("policy gittins: quantum must be > 0");
            int64_t batch = v.Int("history_batch");
            if (batch < 1) return InvalidArgument("policy gittins: history_batch must be >= 1");
            return std::unique_ptr<OrderingPolicy>(new Gittins(
                std::move(*q), GittinsIndex(**samples, static_cast<size_t>(batch)),
                static_cast<Service>(quantum * kMsPerSecond), v.Str("online") == "true"));
          }};
}

}  // namespace tiresias
