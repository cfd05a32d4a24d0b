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

}  // namespace tiresias
