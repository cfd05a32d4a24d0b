// sjf: fewest GPUs first, non-preemptive (needs no durations).
#include <fmt/format.h>

#include "policy/registry.h"

namespace tiresias {
namespace {

class Sjf : public OrderingPolicy {
 public:
  std::unique_ptr<OrderingPolicy> Clone() const override { return std::make_unique<Sjf>(*this); }
  std::string_view name() const override { return "sjf"; }
  bool preemptive() const override { return false; }
  bool key_changes_while_running() const override { return false; }
  SortKey Key(const Job& j, Time) const override {
    return {.k0 = j.gpus(), .submit = j.spec.submit, .id = j.spec.id};
  }
  std::string Describe(const Job& j, Time) const override {
    return fmt::format("{} GPUs (smaller gangs go first)", j.gpus());
  }
};

}  // namespace

PolicyInfo SjfInfo() {
  return {"sjf",
          "fewest GPUs first; non-preemptive",
          {},
          [](const OptionValues&, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
            return std::unique_ptr<OrderingPolicy>(new Sjf());
          }};
}

}  // namespace tiresias
