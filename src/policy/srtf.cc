// srtf (least remaining time) and srsf (least remaining GPU-time = remaining x GPUs):
// oracle policies that know each job's duration; preemptive.
#include <fmt/format.h>

#include "policy/registry.h"

namespace tiresias {
namespace {

class Srtf : public OrderingPolicy {
 public:
  std::unique_ptr<OrderingPolicy> Clone() const override { return std::make_unique<Srtf>(*this); }
  Srtf(bool by_gpu_time, bool stable) : by_gpu_time_(by_gpu_time), stable_(stable) {}
  std::string_view name() const override { return by_gpu_time_ ? "srsf" : "srtf"; }
  bool preemptive() const override { return true; }
  bool key_changes_while_running() const override { return true; }
  // Remaining time only shrinks while a job runs; the stable tie ranks are renumbered.
  bool running_keys_never_increase() const override { return !stable_; }
  bool needs_durations() const override { return true; }
  bool stable_ties() const override { return stable_; }
  SortKey Key(const Job& j, Time now) const override {
    Duration rem = j.RemainingAt(now).value_or(0);
    return {.k0 = by_gpu_time_ ? rem * j.gpus() : rem,
            .k2 = stable_ ? j.tie_rank : 0,
            .submit = j.spec.submit,
            .id = j.spec.id};
  }
  std::string Describe(const Job& j, Time now) const override {
    Duration rem = j.RemainingAt(now).value_or(0);
    return by_gpu_time_ ? fmt::format("{:.0f} GPU-s remaining", ToSeconds(rem * j.gpus()))
                        : fmt::format("{:.0f} s remaining", ToSeconds(rem));
  }

 private:
  bool by_gpu_time_;
  bool stable_;
};

std::vector<OptionSpec> TieOptions() {
  return {{"ties",
           OptionSpec::Type::kChoice,
           "submit",
           "equal remaining: submit time then id (submit), or keep the previous pass's order "
           "(stable, the public simulator's stable sort)",
           {"submit", "stable"}}};
}

}  // namespace

PolicyInfo SrtfInfo() {
  return {
      "srtf", "least remaining time first (oracle: needs durations); preemptive", TieOptions(),
      [](const OptionValues& v, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
        return std::unique_ptr<OrderingPolicy>(new Srtf(false, v.Str("ties") == "stable"));
      }};
}

PolicyInfo SrsfInfo() {
  return {
      "srsf", "least remaining GPU-time first (oracle: needs durations); preemptive", TieOptions(),
      [](const OptionValues& v, const DataSource&) -> StatusOr<std::unique_ptr<OrderingPolicy>> {
        return std::unique_ptr<OrderingPolicy>(new Srtf(true, v.Str("ties") == "stable"));
      }};
}

}  // namespace tiresias
