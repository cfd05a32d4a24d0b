// libFuzzer target: the tenants file (`sim --tenants`, `serve --tenants`) on arbitrary bytes.
// A file that does not read gets an error naming the file and a line; one that reads has VCs
// with unique non-empty names and values in their documented ranges, writes back as JSON that
// reads as the same config, and gives quotas for a few cluster sizes that are each at least 0
// and sum to at most the cluster (or an error that says why not); a user's VC, when found, is
// one of the VCs.
#include <numeric>
#include <set>

#include "engine/tenant_config.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tiresias;
  static fuzz::InputFile file;
  const std::string text(fuzz::AsText(data, size));
  const std::string path = file.Put(text);
  auto cfg = ReadTenantConfig(path);
  FUZZ_CHECK(cfg.ok() == ParseTenantConfig(text, path).ok());
  if (!cfg.ok()) {
    FUZZ_CHECK(cfg.status().message().rfind(path + ":", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(!cfg->vcs.empty());
  std::set<std::string> names;
  for (const Tenant& t : cfg->vcs) {
    FUZZ_CHECK(!t.name.empty() && names.insert(t.name).second);
    FUZZ_CHECK(t.quota >= -1 && t.quota <= 1000000);
    FUZZ_CHECK(t.weight > 0 && t.weight <= 1e6);
    for (const std::string& u : t.users) FUZZ_CHECK(!u.empty());
  }
  FUZZ_CHECK(cfg->quota_lead >= -1 && cfg->quota_lead <= 1000);
  FUZZ_CHECK(cfg->half_life >= 0);
  FUZZ_CHECK(cfg->default_vc.empty() || cfg->IndexOf(cfg->default_vc));
  const nlohmann::json written = TenantConfigToJson(*cfg);
  auto again = ParseTenantConfig(written.dump(), "written");
  FUZZ_CHECK(again.ok() && TenantConfigToJson(*again) == written);
  for (int gpus : {0, 1, 8, 256, 1 << 20}) {
    auto quotas = ResolveQuotas(*cfg, gpus);
    if (!quotas.ok()) {
      FUZZ_CHECK(!quotas.status().message().empty());
      continue;
    }
    FUZZ_CHECK(quotas->size() == cfg->vcs.size());
    int64_t sum = 0;
    for (int q : *quotas) {
      FUZZ_CHECK(q >= 0);
      sum += q;
    }
    FUZZ_CHECK(sum <= gpus);
  }
  const Tenant& first = cfg->vcs.front();
  for (const std::string& user :
       {std::string("nobody"), first.users.empty() ? "" : first.users[0]}) {
    for (const std::string& vc : {std::string(), first.name, std::string("no-such-vc")}) {
      auto got = cfg->VcFor(user, vc);
      if (got.ok()) FUZZ_CHECK(cfg->IndexOf(*got).has_value());
    }
  }
  return 0;
}
