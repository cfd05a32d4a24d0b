// BuildCore: policies from the registries, files through the DataSource.
#include "engine/core_builder.h"

#include "placement/even_split.h"
#include "placement/registry.h"
#include "policy/registry.h"

namespace tiresias {

int PolicyDefaultsVersion() {
  return kPolicyDefaultsVersion;
}

StatusOr<std::unique_ptr<Scheduler>> BuildCore(const CoreConfig& cfg, const DataSource& data) {
  auto policy = MakeOrderingPolicy(
      cfg.policy,
      cfg.defaults_version > 0 ? PinDefaults(cfg.policy, cfg.policy_opts, cfg.defaults_version)
                               : cfg.policy_opts,
      data);
  if (!policy.ok()) return policy.status();
  auto placement = MakePlacementPolicy(cfg.placement, cfg.placement_opts, data);
  if (!placement.ok()) return placement.status();
  if (cfg.even_split) *placement = EvenSplit(std::move(*placement), cfg.node_gpus);
  if (cfg.tenants.on()) {
    auto quotas = ResolveQuotas(cfg.tenants, cfg.topo.total_gpus());
    if (!quotas.ok())
      return Status(quotas.status().code(), "tenants: " + quotas.status().message());
  }
  return std::make_unique<Scheduler>(cfg.topo, std::move(*policy), std::move(*placement),
                                     cfg.options, cfg.speed, cfg.tenants);
}

Status ValidatePolicies(const std::string& policy, const std::vector<std::string>& policy_opts,
                        const std::string& placement,
                        const std::vector<std::string>& placement_opts, const DataSource& data) {
  auto p = MakeOrderingPolicy(policy, policy_opts, data);
  if (!p.ok()) return p.status();
  auto pl = MakePlacementPolicy(placement, placement_opts, data);
  if (!pl.ok()) return pl.status();
  return Status::Ok();
}

Status CheckOptionValues(const std::string& policy, const std::vector<std::string>& policy_opts,
                         const std::string& placement,
                         const std::vector<std::string>& placement_opts) {
  if (auto o = OrderingPolicies().Options(policy, policy_opts); !o.ok()) return o.status();
  if (auto o = PlacementPolicies().Options(placement, placement_opts); !o.ok()) return o.status();
  return Status::Ok();
}

std::vector<std::string> IneffectiveOptions(const std::string& policy,
                                            const std::vector<std::string>& policy_opts,
                                            const std::string& placement,
                                            const std::vector<std::string>& placement_opts) {
  std::vector<std::string> out;
  if (auto p = OrderingPolicies().Ineffective(policy, policy_opts); p.ok()) out = std::move(*p);
  if (auto p = PlacementPolicies().Ineffective(placement, placement_opts); p.ok()) {
    out.insert(out.end(), p->begin(), p->end());
  }
  return out;
}

namespace {

// The option names of `registry`'s entry `name`; the registry's error for an unknown name.
template <typename T, typename... Args>
StatusOr<std::vector<std::string>> OptionNames(const Registry<T, Args...>& registry,
                                               const std::string& name) {
  auto values = registry.Options(name, {});
  if (!values.ok()) return values.status();
  std::vector<std::string> out;
  for (const auto& o : registry.Find(name)->options) out.push_back(o.name);
  return out;
}

}  // namespace

StatusOr<std::vector<std::string>> PolicyOptionNames(const std::string& policy) {
  return OptionNames(OrderingPolicies(), policy);
}

StatusOr<std::vector<std::string>> PlacementOptionNames(const std::string& placement) {
  return OptionNames(PlacementPolicies(), placement);
}

}  // namespace tiresias
