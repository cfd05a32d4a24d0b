// Tenants: which VC a job goes to, and quotas from weights or from a trace's usage.
#include "core/tenants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace tiresias {
namespace {

// Splits `total` in proportion to `shares` (>= 0), largest remainder first, ties to the
// earlier entry; all zero shares give all zeros.
std::vector<int> Apportion(const std::vector<double>& shares, int total) {
  std::vector<int> out(shares.size(), 0);
  const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  if (sum <= 0 || total <= 0) return out;
  std::vector<std::pair<double, size_t>> rem;
  int given = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    const double exact = total * shares[i] / sum;
    out[i] = static_cast<int>(std::floor(exact));
    given += out[i];
    rem.emplace_back(exact - out[i], i);
  }
  std::stable_sort(rem.begin(), rem.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < total && k < rem.size(); ++k, ++given) ++out[rem[k].second];
  return out;
}

}  // namespace

std::optional<int> TenantConfig::IndexOf(std::string_view name) const {
  for (size_t i = 0; i < vcs.size(); ++i) {
    if (vcs[i].name == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

StatusOr<std::string> TenantConfig::VcFor(std::string_view user, std::string_view requested) const {
  auto lists = [&](const Tenant& t) {
    return std::find(t.users.begin(), t.users.end(), user) != t.users.end();
  };
  if (!requested.empty()) {
    auto i = IndexOf(requested);
    if (!i) return InvalidArgument(fmt::format("VC `{}` is not one of the tenants", requested));
    const Tenant& t = vcs[static_cast<size_t>(*i)];
    // The default VC also takes those it would take without a name: users of no VC (found by a
    // tester: placed there, then refused when they named it).
    const bool by_default = requested == default_vc && std::none_of(vcs.begin(), vcs.end(), lists);
    if (!t.users.empty() && !lists(t) && !by_default) {
      return PermissionDenied(fmt::format("user {} is not a member of VC `{}`", user, requested));
    }
    return std::string(requested);
  }
  for (const Tenant& t : vcs) {
    if (lists(t)) return t.name;
  }
  if (!default_vc.empty()) return default_vc;
  return InvalidArgument(
      fmt::format("user {} belongs to no VC and the tenants name no default_vc", user));
}

std::string_view ToString(TenantConfig::Protect p) {
  switch (p) {
    case TenantConfig::Protect::kNone:
      return "none";
    case TenantConfig::Protect::kBorrowers:
      return "borrowers";
    case TenantConfig::Protect::kOtherVcs:
      return "other_vcs";
  }
  return "none";
}

std::string TenantRules(int quota_lead, TenantConfig::Protect protect) {
  std::vector<std::string> out;
  if (quota_lead < 0) {
    out.emplace_back("strict quotas: every job within its VC's quota before any borrower");
  } else if (quota_lead > 0) {
    out.push_back(
        fmt::format("jobs within their VC's quota go before borrowers of {} queue{} earlier",
                    quota_lead, quota_lead == 1 ? "" : "s"));
  }
  if (protect == TenantConfig::Protect::kBorrowers) {
    out.emplace_back("running jobs within their VC's quota keep their GPUs against borrowers");
  } else if (protect == TenantConfig::Protect::kOtherVcs) {
    out.emplace_back(
        "running jobs within their VC's quota keep their GPUs against other VCs' jobs");
  }
  std::string text;
  for (const auto& s : out) text += (text.empty() ? "" : "; ") + s;
  return text;
}

std::optional<TenantConfig::Protect> ParseProtect(std::string_view s) {
  for (auto p : {TenantConfig::Protect::kNone, TenantConfig::Protect::kBorrowers,
                 TenantConfig::Protect::kOtherVcs}) {
    if (s == ToString(p)) return p;
  }
  return std::nullopt;
}

StatusOr<std::vector<int>> ResolveQuotas(const TenantConfig& cfg, int total_gpus) {
  std::set<std::string> names;
  int64_t fixed = 0;  // a file may give thousands of VCs of up to 1,000,000 GPUs each
  std::vector<double> weights;
  for (const Tenant& t : cfg.vcs) {
    if (t.name.empty()) return InvalidArgument("a VC has an empty name");
    if (!names.insert(t.name).second) {
      return InvalidArgument(fmt::format("VC `{}` is declared twice", t.name));
    }
    if (t.quota >= 0) fixed += t.quota;
    weights.push_back(t.quota >= 0 ? 0.0 : t.weight);
  }
  if (fixed > total_gpus) {
    return InvalidArgument(
        fmt::format("the VCs' quotas sum to {} GPUs; the cluster has {}", fixed, total_gpus));
  }
  if (!cfg.default_vc.empty() && !cfg.IndexOf(cfg.default_vc)) {
    return InvalidArgument(fmt::format("default_vc `{}` is not one of the VCs", cfg.default_vc));
  }
  std::vector<int> quotas = Apportion(weights, static_cast<int>(total_gpus - fixed));
  for (size_t i = 0; i < cfg.vcs.size(); ++i) {
    if (cfg.vcs[i].quota >= 0) quotas[i] = cfg.vcs[i].quota;
  }
  return quotas;
}

TenantConfig TenantsFromUsage(const std::vector<std::string>& names,
                              const std::vector<double>& gpu_time, int total_gpus) {
  TenantConfig cfg;
  const std::vector<int> q = Apportion(gpu_time, total_gpus);
  for (size_t i = 0; i < names.size(); ++i) {
    cfg.vcs.push_back({.name = names[i], .quota = q[i], .weight = std::max(gpu_time[i], 0.0)});
  }
  return cfg;
}

}  // namespace tiresias
