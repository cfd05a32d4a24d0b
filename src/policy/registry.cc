// Ordering policies registered by name with typed options.
#include "policy/registry.h"

namespace tiresias {

const PolicyRegistry& OrderingPolicies() {
  static const PolicyRegistry kAll("policy", "policies",
                                   {FifoInfo(), FifoBackfillInfo(), SjfInfo(), SrtfInfo(),
                                    SrsfInfo(), LasInfo(), Las2dInfo(), DlasInfo(), GittinsInfo()});
  return kAll;
}

StatusOr<std::unique_ptr<OrderingPolicy>> MakeOrderingPolicy(const std::string& name,
                                                             const std::vector<std::string>& opts,
                                                             const DataSource& data) {
  return OrderingPolicies().Make(name, opts, data);
}

std::vector<std::string> PinDefaults(const std::string& policy, std::vector<std::string> opts,
                                     int version) {
  if (version >= kPolicyDefaultsVersion || (policy != "dlas" && policy != "gittins")) return opts;
  auto given = [&](const std::string& key) {
    for (const auto& o : opts) {
      if (o.rfind(key + "=", 0) == 0) return true;
    }
    return false;
  };
  auto value = [&](const std::string& key) {
    for (const auto& o : opts) {
      if (o.rfind(key + "=", 0) == 0) return o.substr(key.size() + 1);
    }
    return std::string();
  };
  // Version 1: without thresholds, no queue count or 2 meant one threshold at 3600 GPU-s.
  if (!given("thresholds") && !given("threshold_quantiles") &&
      (!given("queues") || value("queues") == "2")) {
    opts.push_back("thresholds=3600");
  }
  if (policy == "dlas" && !given("queue_order")) opts.push_back("queue_order=fifo");
  if (policy == "dlas" && !given("promote_knob")) opts.push_back("promote_knob=0");
  if (policy == "gittins" && !given("quantum")) opts.push_back("quantum=3600");
  return opts;
}

}  // namespace tiresias
