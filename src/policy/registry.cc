// Ordering policies registered by name with typed options.
#include "policy/registry.h"

#include <fmt/format.h>

#include "policy/named_registry.h"

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
  return MakeRegistered(OrderingPolicies(), "policy", "policies", name, opts);
}

std::string OrderingPolicyHelp() {
  return RegistryHelp(OrderingPolicies());
}

}  // namespace tiresias
