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
  static constexpr double kBoundSlack = 0.1;
  static constexpr int kBoundBreaks = 8;
  std::unique_ptr<OrderingPolicy> Clone() const override {
    return std::make_unique<Gittins>(*this);
  }
  Gittins(QueueDiscipline q, GittinsIndex index, Service last_quantum, bool online)
      : q_(std::move(q)), index_(std::move(index)), last_quantum_(last_quantum), online_(online) {
    if (q_.adaptive()) q_.FollowHistory(index_);
    TableRules();
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
  // The least index over the samples ahead while it stays within kBoundSlack of the index
  // now and above the index of `keep_before` (in its queue); in a better queue than
  // `keep_before`, over the rest of the queue; at or after it, while it stays at the index
  // now. Any number of samples for a job never promoted (q_base 0: from the tables);
  // otherwise at most kBoundBreaks.
  SortKey BoundKey(const Job& j, Time now, const SortKey* keep_before, Time* until) const override {
    const Service a = j.AttainedAt(now);
    double slack = kBoundSlack, at_least = 0;
    if (keep_before && j.queue < keep_before->k0) {
      slack = 1;  // ahead whatever its index
    } else if (keep_before && j.queue == keep_before->k0) {
      at_least = -keep_before->k1;
    } else if (keep_before) {
      slack = 0;
    }
    std::optional<Service> end;
    const double least = index_.LeastIndexAhead(a, QuantumAt(j, a), q_.upper(j.queue).has_value(),
                                                slack, at_least, kBoundBreaks, &j.key_hint, &end);
    *until = end ? j.WhenAttains(*end, now) : kNever;
    return {.k0 = j.queue, .k1 = -least, .submit = j.spec.submit, .id = j.spec.id};
  }
  // D: the rest of the queue's climb, or the last queue's quantum.
  Service QuantumAt(const Job& j, Service a) const {
    auto up = q_.upper(j.queue);
    return up ? *up - (a - j.q_base) : last_quantum_;
  }
  double IndexOf(const Job& j, Time now) const {
    const Service a = j.AttainedAt(now);
    return index_.Index(a, QuantumAt(j, a), &j.key_hint);
  }
  SortKey Key(const Job& j, Time now) const override {
    return {.k0 = j.queue, .k1 = -IndexOf(j, now), .submit = j.spec.submit, .id = j.spec.id};
  }
  void OnSubmit(Job& j) const override { q_.Enter(j); }
  int num_queues() const override { return q_.num_queues(); }
  std::vector<Service> queue_thresholds() const override { return q_.thresholds(); }
  std::optional<Time> NextTransition(const Job& j, Time now) const override {
    return q_.NextTransition(j, now);
  }
  bool ApplyTransition(Job& j, Time now) const override { return q_.Apply(j, now); }
  // A merge into the history changes every job's index (and adaptive thresholds).
  bool OnFinish(const Job& j) override {
    if (!online_ || !index_.Add(j.AttainedAt(j.end))) return false;
    if (q_.adaptive()) {
      q_.FollowHistory(index_);
      TableRules();
    }
    return true;
  }
  bool Relearned(Job& j, Time now) const override { return q_.adaptive() && q_.Rebucket(j, now); }
  std::string Describe(const Job& j, Time now) const override {
    return fmt::format("{}, Gittins index {:.6f}", q_.Describe(j, now), IndexOf(j, now));
  }

 private:
  // The quantum rules of jobs never promoted (q_base 0): each queue's end, and the last
  // queue's quantum.
  void TableRules() {
    std::vector<GittinsIndex::Rule> rules;
    for (int q = 0; q < q_.num_queues(); ++q) {
      auto up = q_.upper(q);
      rules.push_back(up ? GittinsIndex::Rule{true, *up}
                         : GittinsIndex::Rule{false, last_quantum_});
    }
    index_.SetRules(std::move(rules));
  }
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
            if (!samples.ok())
              return QueueDiscipline::HistoryError("policy gittins", samples.status());
            double quantum = v.Double("quantum");
            if (quantum <= 0) return InvalidArgument("policy gittins: quantum must be > 0");
            int64_t batch = v.Int("history_batch");
            if (batch < 1) return InvalidArgument("policy gittins: history_batch must be >= 1");
            GittinsIndex index(**samples, static_cast<size_t>(batch));
            if (Status st = q->CheckHistory("policy gittins", index, v.Str("history")); !st.ok()) {
              return st;
            }
            return std::unique_ptr<OrderingPolicy>(new Gittins(
                std::move(*q), std::move(index), static_cast<Service>(quantum * kMsPerSecond),
                v.Str("online") == "true"));
          }};
}

}  // namespace tiresias
