// The tenant level in the simulator. (1) With the feature off, one VC, or every job in one VC
// whose quota is the whole cluster, every decision is the plain core's: the same event log,
// byte for byte, for every registered policy on seeded Philly-like workloads. (2) With jobs
// split across VCs, the run reports per VC what it got against what it was entitled to.
#include <gtest/gtest.h>

#include "core/event_log.h"
#include "policy/registry.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "test_files.h"
#include "trace/synthetic.h"

namespace tiresias {
namespace {

std::vector<std::string> Log(const SimConfig& cfg, const std::vector<JobSpec>& jobs) {
  auto r = RunSimulation(cfg, jobs);
  EXPECT_TRUE(r.ok()) << r.status().message();
  std::vector<std::string> out;
  if (!r.ok()) return out;
  for (const Event& e : r->event_log) out.push_back(ToJsonLine(e));
  return out;
}

TEST(TenantsSimTest, OneVcOrFeatureOffDecidesExactlyAsThePlainCore) {
  const Topology topo = *Topology::Create(2, 2, 8);
  int compared = 0;
  for (uint64_t seed : {1, 2, 3}) {
    auto jobs = SyntheticPhillyLike({.jobs = 150,
                                     .seed = seed,
                                     .load = 1.6,
                                     .cluster_gpus = topo.total_gpus(),
                                     .max_gpus = 16,
                                     .duration_scale = 0.2});
    for (JobSpec& j : jobs) j.vc = "a";
    for (const auto& info : OrderingPolicies()) {
      for (const char* placement : {"count", "consolidate"}) {
        if (!MakeOrderingPolicy(info.name, {}, TestFiles()).ok()) continue;  // needs ../shared
        SimConfig plain{
            .topo = topo,
            .policy = info.name,
            .placement = placement,
            .record_events = true,
            .data = std::shared_ptr<const DataSource>(&TestFiles(), [](const DataSource*) {})};
        SCOPED_TRACE(fmt::format("{}+{} seed {}", info.name, placement, seed));
        const auto want = Log(plain, jobs);
        ASSERT_FALSE(want.empty());
        SimConfig one = plain;  // one VC: the tenant level is off
        one.tenants = {.vcs = {{.name = "a", .quota = 5}}};
        EXPECT_EQ(Log(one, jobs), want);
        // Two VCs, every job in `a` whose quota is the cluster: the two-phase walk runs and
        // must select exactly what the plain walk does, however quotas rank in the queues.
        // Protecting running jobs within the quota reserves only a's own GPUs from a's own
        // jobs, which it never does: the same decisions whatever `protect` is.
        for (auto protect : {TenantConfig::Protect::kNone, TenantConfig::Protect::kBorrowers,
                             TenantConfig::Protect::kOtherVcs}) {
          for (int lead : {0, 1, -1}) {
            SimConfig two = plain;
            two.tenants = {
                .vcs = {{.name = "a", .quota = topo.total_gpus()}, {.name = "b", .quota = 0}},
                .quota_lead = lead,
                .protect = protect};
            EXPECT_EQ(Log(two, jobs), want)
                << "quota_lead " << lead << " protect " << ToString(protect);
          }
        }
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 3 * 2 * 7);  // at least the policies that need no file
}

// Two VCs of 16 GPUs each on 32; VC `a` submits three times `b`'s work. With borrowing `a`
// finishes its jobs sooner (it uses what `b` leaves); without it it gets at most its entitlement.
TEST(TenantsSimTest, ReportsGpuTimeReceivedAgainstEntitledPerVc) {
  const Topology topo = *Topology::Create(1, 4, 8);
  auto jobs = SyntheticPhillyLike({.jobs = 300,
                                   .seed = 5,
                                   .load = 1.5,
                                   .cluster_gpus = topo.total_gpus(),
                                   .max_gpus = 8,
                                   .duration_scale = 0.2});
  for (JobSpec& j : jobs) j.vc = j.id.value() % 4 == 0 ? "b" : "a";
  SimConfig cfg{.topo = topo,
                .policy = "dlas",
                .placement = "count",
                .tenants = {.vcs = {{.name = "a", .quota = 16}, {.name = "b", .quota = 16}}}};
  auto shared = RunSimulation(cfg, jobs);
  cfg.tenants.borrow = false;
  auto fixed = RunSimulation(cfg, jobs);
  ASSERT_TRUE(shared.ok() && fixed.ok());
  const Metrics ms = ComputeMetrics(*shared), mf = ComputeMetrics(*fixed);
  ASSERT_EQ(ms.by_vc.size(), 2u);
  EXPECT_EQ(ms.by_vc[0].vc, "a");
  EXPECT_EQ(ms.by_vc[0].quota, 16);
  EXPECT_LE(mf.by_vc[0].gpu_hours, mf.by_vc[0].entitled_gpu_hours * 1.0001);
  EXPECT_LT(ms.by_vc[0].jct.mean, mf.by_vc[0].jct.mean);  // borrowing helps the busy VC
  EXPECT_TRUE(ms.fairness.jain_vc_share.has_value());
  EXPECT_EQ(ToJson(ms)["by_vc"]["a"]["quota_gpus"], 16);
}

}  // namespace
}  // namespace tiresias
