// dlas: Discretized 2D-LAS (Tiresias-L). Queues by attained GPU-time, higher queues first;
// within a queue running jobs first, then submit time (queue_order=running-first, the public
// simulator's rule and our default), or FIFO by submit time (queue_order=fifo, the paper's).
// Demotion and PROMOTEKNOB promotion fire as timers. With threshold_quantiles the thresholds are
// quantiles of a GPU-time history (and, online, of the jobs that completed), re-derived at every
// merge.
#include <fmt/format.h>

#include "policy/gittins_index.h"
#include "policy/queue_discipline.h"
#include "policy/registry.h"

namespace tiresias {
namespace {

class Dlas : public OrderingPolicy {
 public:
  std::unique_ptr<OrderingPolicy> Clone() const override { return std::make_unique<Dlas>(*this); }
  Dlas(QueueDiscipline q, bool running_first, std::optional<GittinsIndex> history, bool online)
      : q_(std::move(q)),
        running_first_(running_first),
        history_(std::move(history)),
        online_(online) {
    if (history_) q_.FollowHistory(*history_);
  }
  std::string_view name() const override { return "dlas"; }
  bool preemptive() const override { return true; }
  // The key changes only at transitions (or start/stop for running-first), never in between.
  bool key_changes_while_running() const override { return false; }
  SortKey Key(const Job& j, Time) const override {
    return {.k0 = j.queue,
            .k2 = running_first_ && !j.running() ? 1 : 0,
            .submit = j.spec.submit,
            .id = j.spec.id};
  }
  void OnSubmit(Job& j) const override { q_.Enter(j); }
  int num_queues() const override { return q_.num_queues(); }
  std::vector<Service> queue_thresholds() const override { return q_.thresholds(); }
  std::optional<Time> NextTransition(const Job& j, Time now) const override {
    return q_.NextTransition(j, now);
  }
  bool ApplyTransition(Job& j, Time now) const override { return q_.Apply(j, now); }
  // Thresholds that follow the history move when a batch of completed jobs is merged.
  bool OnFinish(const Job& j) override {
    if (!online_ || !history_ || !history_->Add(j.AttainedAt(j.end))) return false;
    q_.FollowHistory(*history_);
    return true;
  }
  bool Relearned(Job& j, Time now) const override { return q_.adaptive() && q_.Rebucket(j, now); }
  std::string Describe(const Job& j, Time now) const override { return q_.Describe(j, now); }

 private:
  QueueDiscipline q_;
  bool running_first_;
  std::optional<GittinsIndex> history_;  // threshold_quantiles only
  bool online_;
};

}  // namespace

PolicyInfo DlasInfo() {
  auto opts = QueueDiscipline::Options(kDlasDefaultThresholds, kDlasDefaultKnob);
  opts.push_back({"queue_order",
                  OptionSpec::Type::kChoice,
                  "running-first",
                  "order inside a queue: running-first (running jobs ahead of waiting ones, then "
                  "submit time: fewer preemptions) or fifo (submit time: the paper's rule)",
                  {"running-first", "fifo"}});
  for (auto& o : QueueDiscipline::HistoryOptions()) {
    o.help = "threshold_quantiles: " + o.help;
    o.needs.insert(o.needs.begin(), "threshold_quantiles");  // fixed thresholds read no history
    opts.push_back(std::move(o));
  }
  return {"dlas", "Discretized 2D-LAS (Tiresias-L): multi-level queues by attained GPU-time", opts,
          [](const OptionValues& v,
             const DataSource& data) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
            auto q = QueueDiscipline::FromOptions("policy dlas", v, kDlasDefaultThresholds);
            if (!q.ok()) return q.status();
            std::optional<GittinsIndex> history;
            if (q->adaptive()) {  // the history is read only when thresholds follow it
              auto samples = data.GpuTimeHistory(v.Str("history"));
              if (!samples.ok())
                return QueueDiscipline::HistoryError("policy dlas", samples.status());
              int64_t batch = v.Int("history_batch");
              if (batch < 1) return InvalidArgument("policy dlas: history_batch must be >= 1");
              history.emplace(**samples, static_cast<size_t>(batch));
              if (Status st = q->CheckHistory("policy dlas", *history, v.Str("history"));
                  !st.ok()) {
                return st;
              }
            }
            return std::unique_ptr<OrderingPolicy>(
                new Dlas(std::move(*q), v.Str("queue_order") == "running-first", std::move(history),
                         v.Str("online") == "true"));
          }};
}

}  // namespace tiresias
