// las (least attained time, 1-D) and las2d (least attained service = GPUs x time, continuous
// 2D-LAS); preemptive, need no durations.
#include <fmt/format.h>

#include "policy/registry.h"

namespace tiresias {
namespace {

class Las : public OrderingPolicy {
 public:
  std::unique_ptr<OrderingPolicy> Clone() const override { return std::make_unique<Las>(*this); }
  explicit Las(bool two_d) : two_d_(two_d) {}
  std::string_view name() const override { return two_d_ ? "las2d" : "las"; }
  bool preemptive() const override { return true; }
  bool key_changes_while_running() const override { return true; }
  SortKey Key(const Job& j, Time now) const override {
    return {.k0 = two_d_ ? j.AttainedAt(now) : j.ExecutedAt(now),
            .submit = j.spec.submit,
            .id = j.spec.id};
  }
  std::string Describe(const Job& j, Time now) const override {
    return two_d_ ? fmt::format("{:.0f} GPU-s attained", ToSeconds(j.AttainedAt(now)))
                  : fmt::format("{:.0f} s executed", ToSeconds(j.ExecutedAt(now)));
  }

 private:
  bool two_d_;
};

}  // namespace

PolicyInfo LasInfo() {
  return {"las",
          "least attained time first (1-D LAS); preemptive",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
            return std::unique_ptr<OrderingPolicy>(new Las(false));
          }};
}

PolicyInfo Las2dInfo() {
  return {"las2d",
          "least attained GPU-time first (continuous 2D-LAS); preemptive",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
            return std::unique_ptr<OrderingPolicy>(new Las(true));
          }};
}

}  // namespace tiresias
