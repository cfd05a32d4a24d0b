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

// Versions of the options' defaults. State written by an older build (serve's journal) names
// only the options that were given, so it replays under PinDefaults(..., its version).
//   1: dlas and gittins with 2 queues at 3600 GPU-s, promote_knob 0, dlas queue_order=fifo,
//      gittins quantum=3600
//   2: (now) dlas 6 queues at 1000,6687,44721,299070,2000000 GPU-s, running-first,
//      promote_knob 8; gittins 2 queues at 7200 GPU-s, quantum 36000 (README, "How the
//      defaults were chosen")
inline constexpr int kPolicyDefaultsVersion = 2;
// `opts` with every option whose default changed since `version` given explicitly at the
// value it had then, so the policy decides as it did under that version.
std::vector<std::string> PinDefaults(const std::string& policy, std::vector<std::string> opts,
                                     int version);

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
