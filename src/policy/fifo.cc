// fifo (YARN-CS: submit order, stop at the first job that does not fit) and fifo-backfill
// (submit order, skipping jobs that do not fit). Neither preempts.
#include <fmt/format.h>

#include "policy/registry.h"

namespace tiresias {
namespace {

class Fifo : public OrderingPolicy {
 public:
  std::unique_ptr<OrderingPolicy> Clone() const override { return std::make_unique<Fifo>(*this); }
  explicit Fifo(bool backfill) : backfill_(backfill) {}
  std::string_view name() const override { return backfill_ ? "fifo-backfill" : "fifo"; }
  bool preemptive() const override { return false; }
  bool stops_at_first_misfit() const override { return !backfill_; }
  bool key_changes_while_running() const override { return false; }
  SortKey Key(const Job& j, Time) const override {
    return {.submit = j.spec.submit, .id = j.spec.id};
  }
  // Relative to now: serve's core time is its own clock, no time a user knows (found by a
  // tester: "submitted at 1.502 s").
  std::string Describe(const Job& j, Time now) const override {
    return fmt::format("in submit order; submitted {:.3f} s ago", ToSeconds(now - j.spec.submit));
  }

 private:
  bool backfill_;
};

}  // namespace

PolicyInfo FifoInfo() {
  return {"fifo",
          "submit order; stops at the first job that does not fit (YARN-CS's order; the paper's "
          "YARN-CS baseline, with consolidate placement, is `--policy yarn-cs` in sim and "
          "compare)",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
            return std::unique_ptr<OrderingPolicy>(new Fifo(false));
          }};
}

PolicyInfo FifoBackfillInfo() {
  return {"fifo-backfill",
          "submit order; jobs that do not fit are skipped",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
            return std::unique_ptr<OrderingPolicy>(new Fifo(true));
          }};
}

}  // namespace tiresias
