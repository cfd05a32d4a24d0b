// Ordering policies registered by name with typed options.
#include "policy/registry.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace tiresias {

const std::vector<PolicyInfo>& OrderingPolicies() {
  static const std::vector<PolicyInfo> kAll = {
      FifoInfo(), FifoBackfillInfo(), SjfInfo(),  SrtfInfo(),    SrsfInfo(),
      LasInfo(),  Las2dInfo(),        DlasInfo(), GittinsInfo(),
  };
  return kAll;
}

StatusOr<std::unique_ptr<OrderingPolicy>> MakeOrderingPolicy(const std::string& name,
                                                             const std::vector<std::string>& opts) {
  std::vector<std::string> names;
  for (const auto& info : OrderingPolicies()) {
    if (info.name == name) {
      auto values = ParseOptions("policy " + name, info.options, opts);
      if (!values.ok()) return values.status();
      return info.make(*values);
    }
    names.push_back(info.name);
  }
  return InvalidArgument(
      fmt::format("unknown policy '{}'; valid policies: {}", name, Join(names, ", ")));
}

std::string OrderingPolicyHelp() {
  std::string out;
  for (const auto& info : OrderingPolicies()) {
    out += fmt::format("  {:<14} {}\n", info.name, info.summary);
    out += DescribeOptions(info.options);
  }
  return out;
}

}  // namespace tiresias
