// Ordering policies registered by name with typed options. An unknown name or a bad option
// fails at start-up with a message that lists what is valid.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "policy/options.h"
#include "policy/ordering_policy.h"

namespace tiresias {

struct PolicyInfo {
  std::string name;
  std::string summary;
  std::vector<OptionSpec> options;
  std::function<StatusOr<std::unique_ptr<OrderingPolicy>>(const OptionValues&)> make;
};

// Every built-in ordering policy, in a fixed order.
const std::vector<PolicyInfo>& OrderingPolicies();
StatusOr<std::unique_ptr<OrderingPolicy>> MakeOrderingPolicy(const std::string& name,
                                                             const std::vector<std::string>& opts);
std::string OrderingPolicyHelp();

// One factory per policy file.
PolicyInfo FifoInfo();
PolicyInfo FifoBackfillInfo();
PolicyInfo SjfInfo();
PolicyInfo SrtfInfo();
PolicyInfo SrsfInfo();
PolicyInfo LasInfo();
PolicyInfo Las2dInfo();
PolicyInfo DlasInfo();
PolicyInfo GittinsInfo();

}  // namespace tiresias
