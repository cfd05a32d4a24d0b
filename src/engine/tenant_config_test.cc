// The tenants file: what it declares, and errors that name the file, the line and the problem.
#include "engine/tenant_config.h"

#include <gtest/gtest.h>

namespace tiresias {
namespace {

TEST(TenantConfigTest, ReadsVcsQuotasWeightsUsersAndRules) {
  auto cfg = ParseTenantConfig(R"({
  // comments are allowed
  "borrow": true,
  "half_life_hours": 24,
  "quota_lead": 1,
  "default_vc": "shared",
  "vcs": [
    {"name": "vision", "quota": 32, "users": ["alice", "bob"]},
    {"name": "nlp", "weight": 2, "users": ["carol"]},
    {"name": "shared"}
  ]
})",
                               "t.json");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  ASSERT_EQ(cfg->vcs.size(), 3u);
  EXPECT_EQ(cfg->vcs[0].name, "vision");
  EXPECT_EQ(cfg->vcs[0].quota, 32);
  EXPECT_EQ(cfg->vcs[0].users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(cfg->vcs[1].quota, -1);  // from its weight
  EXPECT_EQ(cfg->vcs[1].weight, 2);
  EXPECT_EQ(cfg->half_life, Seconds(24 * 3600));
  EXPECT_EQ(cfg->default_vc, "shared");
  EXPECT_TRUE(cfg->borrow);
  EXPECT_EQ(cfg->quota_lead, 1);
  EXPECT_EQ(ParseTenantConfig(R"({"vcs": [{"name": "a"}]})", "t.json")->quota_lead, 0);
  EXPECT_EQ(ParseTenantConfig(R"({"vcs": [{"name": "a"}]})", "t.json")->protect,
            TenantConfig::Protect::kNone);
  EXPECT_EQ(
      ParseTenantConfig(R"({"protect": "other_vcs", "vcs": [{"name": "a"}]})", "t.json")->protect,
      TenantConfig::Protect::kOtherVcs);
}

std::string ErrorOf(const std::string& text) {
  auto cfg = ParseTenantConfig(text, "t.json");
  return cfg.ok() ? "(ok)" : cfg.status().message();
}

TEST(TenantConfigTest, ErrorsNameTheLine) {
  EXPECT_EQ(ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\", \"quota\": 4},\n"
                    "    {\"name\": \"b\",\n     \"quota\": -3}\n  ]\n}"),
            "t.json:5: VC `b`: `quota` must be a whole number of GPUs in [0, 1000000] (got -3)");
  EXPECT_EQ(ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\", \"quota\": 4, \"qouta\": 2}\n  ]\n}"),
            "t.json:3: VC `a`: unknown key `qouta` (expected name, quota, weight, users)");
  EXPECT_EQ(ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\"},\n    {\"name\": \"a\"}\n  ]\n}"),
            "t.json:4: VC `a` is declared twice");
  EXPECT_EQ(ErrorOf("{\n  \"vcs\": [{\"name\": \"a\"}],\n  \"default_vc\": \"z\"\n}"),
            "t.json:3: default_vc `z` is not one of the VCs");
  EXPECT_EQ(ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\", \"weight\": 0}\n  ]\n}"),
            "t.json:3: VC `a`: `weight` must be a number in (0, 1000000] (got 0)");
  EXPECT_EQ(ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\", \"users\": [\"x\", 3]}\n  ]\n}"),
            "t.json:3: VC `a`: each user must be a non-empty string");
  EXPECT_EQ(ErrorOf("{\n  \"borrow\": \"yes\",\n  \"vcs\": [{\"name\": \"a\"}]\n}"),
            "t.json:2: `borrow` must be true or false");
  EXPECT_EQ(ErrorOf("{\n  \"quota_lead\": 0.5,\n  \"vcs\": [{\"name\": \"a\"}]\n}"),
            "t.json:2: `quota_lead` must be a number of queues up to 1000, or -1 for strict "
            "quotas (got 0.5)");
  EXPECT_EQ(ErrorOf("{\n  \"protect\": \"all\",\n  \"vcs\": [{\"name\": \"a\"}]\n}"),
            "t.json:2: `protect` must be \"none\", \"borrowers\" or \"other_vcs\"");
  EXPECT_EQ(ErrorOf("{\n  \"borrow\": true\n}"), "t.json:1: no `vcs`: the file must list the VCs");
  // Found by a tester: a key given twice (the last won without a word), a user name with a
  // control character (it drove the terminal through `tiresias vcs`).
  EXPECT_EQ(
      ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\", \"quota\": 4,\n     \"quota\": 7}\n  ]\n}"),
      "t.json:4: `quota` is given twice");
  EXPECT_EQ(ErrorOf("{\"borrow\": true, \"vcs\": [{\"name\": \"a\"}],\n\"borrow\": false}"),
            "t.json:2: `borrow` is given twice");
  EXPECT_EQ(ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\", \"users\": [\"x\\u001b[2J\"]}\n  ]\n}"),
            "t.json:3: VC `a`: a user name with a control character");
  const std::string bad = ErrorOf("{\n  \"vcs\": [\n    {\"name\": \"a\",}\n  ]\n}");
  EXPECT_EQ(bad.rfind("t.json:3: not valid JSON: syntax error", 0), 0u) << bad;
}

// Whole numbers past int64's range are out of range, not wrapped: 2^64 - 1 read as an int64 is
// -1, which for quota_lead means strict quotas (found reading the parser for the fuzz target).
TEST(TenantConfigTest, HugeWholeNumbersAreOutOfRangeNotWrapped) {
  EXPECT_EQ(ErrorOf("{\"quota_lead\": 18446744073709551615, \"vcs\": [{\"name\": \"a\"}]}"),
            "t.json:1: `quota_lead` must be a number of queues up to 1000, or -1 for strict "
            "quotas (got 18446744073709551615)");
  EXPECT_EQ(ErrorOf("{\"vcs\": [{\"name\": \"a\", \"quota\": 18446744073709551612}]}"),
            "t.json:1: VC `a`: `quota` must be a whole number of GPUs in [0, 1000000] (got "
            "18446744073709551612)");
  EXPECT_EQ(ErrorOf("{\"vcs\": [{\"name\": \"a\", \"quota\": 9223372036854775807}]}"),
            "t.json:1: VC `a`: `quota` must be a whole number of GPUs in [0, 1000000] (got "
            "9223372036854775807)");
  auto top = ParseTenantConfig(
      "{\"quota_lead\": 1000, \"vcs\": [{\"name\": \"a\", \"quota\": 1000000}]}", "t.json");
  ASSERT_TRUE(top.ok()) << top.status().message();
  EXPECT_EQ(top->quota_lead, 1000);
  EXPECT_EQ(top->vcs[0].quota, 1000000);
}

// Found by fuzz/tenants_fuzzer (its corpus keeps the input): a number past a double's range
// threw out of the parser instead of being an error naming the line.
TEST(TenantConfigTest, ANumberPastADoublesRangeIsAnErrorNotACrash) {
  EXPECT_EQ(ErrorOf("{\"vcs\": [{\"name\": \"a\"}],\n \"half_life_hours\": 1e1000}"),
            "t.json:2: not valid JSON: number overflow parsing '1e1000'");
}

TEST(TenantConfigTest, AMissingFileOrADirectoryIsAnError) {
  auto cfg = ReadTenantConfig("/nonexistent/tenants.json");
  EXPECT_EQ(cfg.status().message(),
            "/nonexistent/tenants.json: cannot open: No such file or directory");
  // (It said "/tmp:1: not valid JSON".)
  EXPECT_EQ(ReadTenantConfig("/tmp").status().message(),
            "/tmp: is a directory, expected a tenants file (JSON)");
}

// The journal keeps a tenants config as JSON: written and read back, it is the same config
// (every field, a quota or a weight, a half-life of 36 h = 129,600,000 ms).
TEST(TenantConfigTest, JsonRoundTrips) {
  auto cfg = ParseTenantConfig(
      R"({"borrow": false, "half_life_hours": 36, "quota_lead": -1, "protect": "borrowers",
          "default_vc": "b",
          "vcs": [{"name": "a", "quota": 3, "users": ["x", "y"]}, {"name": "b", "weight": 2.5}]})",
      "t.json");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const auto j = TenantConfigToJson(*cfg);
  auto back = ParseTenantConfig(j.dump(), "journal");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(TenantConfigToJson(*back), j);
  EXPECT_FALSE(back->borrow);
  EXPECT_EQ(back->half_life, 129'600'000);
  EXPECT_EQ(back->quota_lead, -1);
  EXPECT_EQ(back->protect, TenantConfig::Protect::kBorrowers);
  EXPECT_EQ(back->default_vc, "b");
  ASSERT_EQ(back->vcs.size(), 2u);
  EXPECT_EQ(back->vcs[0].quota, 3);
  EXPECT_EQ(back->vcs[0].users, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(back->vcs[1].quota, -1);
  EXPECT_DOUBLE_EQ(back->vcs[1].weight, 2.5);
  EXPECT_DOUBLE_EQ(back->fair_share_margin, kFairShareHysteresis);  // the default, written out
  auto margin = ParseTenantConfig(R"({"fair_share_margin": 0.5, "vcs": [{"name": "a"}]})", "m");
  ASSERT_TRUE(margin.ok()) << margin.status().message();
  EXPECT_DOUBLE_EQ(margin->fair_share_margin, 0.5);
  EXPECT_TRUE(TenantConfigToJson(TenantConfig{}).is_null());
}

}  // namespace
}  // namespace tiresias
