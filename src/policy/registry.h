// Ordering policies registered by name with typed options. An unknown name or a bad option
// fails at start-up with a message that lists what is valid.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/registry.h"
#include "common/status.h"
#include "core/data_source.h"
#include "core/ordering_policy.h"

namespace tiresias {

using PolicyInfo = RegistryEntry<OrderingPolicy, const DataSource&>;
using PolicyRegistry = Registry<OrderingPolicy, const DataSource&>;

// Every built-in ordering policy, in a fixed order.
const PolicyRegistry& OrderingPolicies();
// Builds a policy; files its options name (the Gittins history) come from `data`.
StatusOr<std::unique_ptr<OrderingPolicy>> MakeOrderingPolicy(const std::string& name,
                                                             const std::vector<std::string>& opts,
                                                             const DataSource& data);

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
