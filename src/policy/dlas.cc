// dlas: Discretized 2D-LAS (Tiresias-L). Queues by attained GPU-time, higher queues first;
// within a queue FIFO by submit time, or running jobs first (queue_order=running-first, the
// public simulator's rule). Demotion and PROMOTEKNOB promotion fire as timers.
#include "policy/queue_discipline.h"
#include "policy/registry.h"

namespace tiresias {
namespace {

class Dlas : public OrderingPolicy {
 public:
  std::unique_ptr<OrderingPolicy> Clone() const override { return std::make_unique<Dlas>(*this); }
  Dlas(QueueDiscipline q, bool running_first) : q_(std::move(q)), running_first_(running_first) {}
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
  std::optional<Time> NextTransition(const Job& j, Time now) const override {
    return q_.NextTransition(j, now);
  }
  bool ApplyTransition(Job& j, Time now) const override { return q_.Apply(j, now); }
  std::string Describe(const Job& j, Time now) const override { return q_.Describe(j, now); }

 private:
  QueueDiscipline q_;
  bool running_first_;
};

}  // namespace

PolicyInfo DlasInfo() {
  auto opts = QueueDiscipline::Options();
  opts.push_back({"queue_order",
                  OptionSpec::Type::kChoice,
                  "fifo",
                  "order inside a queue: fifo (submit time) or running-first",
                  {"fifo", "running-first"}});
  return {
      "dlas", "Discretized 2D-LAS (Tiresias-L): multi-level queues by attained GPU-time", opts,
      [](const OptionValues& v, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
        auto q = QueueDiscipline::FromOptions("policy dlas", v);
        if (!q.ok()) return q.status();
        return std::unique_ptr<OrderingPolicy>(
            new Dlas(std::move(*q), v.Str("queue_order") == "running-first"));
      }};
}

}  // namespace tiresias
