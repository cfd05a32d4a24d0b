// The tenants file that `sim --tenants` and `serve --tenants` read: JSON (comments allowed),
//
//   {
//     "borrow": true,                 // lend unused quota, reclaim by preemption (default)
//     "half_life_hours": 24,          // optional: fair share over decayed usage
//     "default_vc": "shared",         // optional: the VC of users no VC lists
//     "vcs": [
//       {"name": "vision", "quota": 32, "users": ["alice", "bob"]},
//       {"name": "nlp", "weight": 2, "users": ["carol"]},
//       {"name": "shared", "weight": 1}
//     ]
//   }
//
// A VC has a quota (GPUs) or a weight (its share of the GPUs no quota claims). Every error
// names the file, the line and the problem.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "core/tenants.h"

namespace tiresias {

// `text` as the contents of `path` (named in errors).
StatusOr<TenantConfig> ParseTenantConfig(const std::string& text, const std::string& path);
StatusOr<TenantConfig> ReadTenantConfig(const std::string& path);
// The file's form of `cfg` (what ParseTenantConfig reads back as `cfg`), with every key; null
// for a config without VCs (no tenants).
nlohmann::json TenantConfigToJson(const TenantConfig& cfg);

}  // namespace tiresias
