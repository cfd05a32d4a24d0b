// Metrics of a run on a hand-made result (src/sim/metrics.h): finish-time fairness (Themis'
// rho with the time-average number of jobs in the system), Jain's index over per-user and
// per-VC mean slowdown, queueing delay per VC, p99.9, and the JCT CDF written by --out. Every
// figure is worked by hand in the comments.
#include "sim/metrics.h"

#include <gtest/gtest.h>

#include "sim/report.h"

namespace tiresias {
namespace {

JobResult Finished(SimResult& r, int64_t id, int gpus, double submit_s, double start_s,
                   double end_s, double work_s, std::string_view user, std::string_view vc) {
  JobResult j;
  j.id = JobId(id);
  j.gpus = gpus;
  j.state = JobState::kFinished;
  j.submit = static_cast<Time>(submit_s * 1000);
  j.first_start = static_cast<Time>(start_s * 1000);
  j.end = static_cast<Time>(end_s * 1000);
  j.work = static_cast<Duration>(work_s * 1000);
  j.executed = j.work;
  j.user = r.names->Intern(user);
  j.vc = r.names->Intern(vc);
  return j;
}

// Two GPUs. A (1 GPU, 100 s of work) runs 0-100 s; B (2 GPUs, 50 s) waits for it and runs
// 100-150 s; C (1 GPU, 10 s) arrives at 50 s and runs 150-160 s.
// Jobs in the system: 2 on [0, 50), 3 on [50, 100), 2 on [100, 150), 1 on [150, 160).
SimResult ThreeJobs() {
  SimResult r;
  r.total_gpus = 2;
  r.jobs = {Finished(r, 0, 1, 0, 0, 100, 100, "u1", "x"),
            Finished(r, 1, 2, 0, 100, 150, 50, "u1", "y"),
            Finished(r, 2, 1, 50, 150, 160, 10, "u2", "y")};
  return r;
}

TEST(Fairness, RhoIsJctOverTheJctWithAOneOverNShare) {
  const auto rho = FinishTimeFairness(ThreeJobs());
  ASSERT_EQ(rho.size(), 3u);
  // A stays 0-100 s: 2 x 50 + 3 x 50 = 250 job-s, N = 2.5. Its 1/N share is 2 / 2.5 = 0.8
  // GPU of the 1 it needs, so T_fair = 100 x 1 x 2.5 / 2 = 125 s; rho = 100 / 125 = 0.8.
  EXPECT_NEAR(rho[0], 0.8, 1e-12);
  // B stays 0-150 s: 100 + 150 + 100 = 350 job-s, N = 7/3; T_fair = 50 x 2 x (7/3) / 2 =
  // 116.67 s; rho = 150 / 116.67 = 9/7.
  EXPECT_NEAR(rho[1], 9.0 / 7.0, 1e-12);
  // C stays 50-160 s: 3 x 50 + 2 x 50 + 1 x 10 = 260 job-s, N = 26/11; T_fair = 10 x (26/11)
  // / 2 = 11.82 s; rho = 110 / 11.82 = 121/13.
  EXPECT_NEAR(rho[2], 121.0 / 13.0, 1e-12);

  const Metrics m = ComputeMetrics(ThreeJobs());
  EXPECT_NEAR(m.fairness.rho.max, 121.0 / 13.0, 1e-12);
  EXPECT_NEAR(m.fairness.frac_unfair, 2.0 / 3.0, 1e-12);  // B and C above 1.05
}

TEST(Fairness, AJobAloneWithEnoughGpusHasRhoOne) {
  // One 1-GPU job on 2 GPUs, run at once: N = 1, a 1/N share is both GPUs, no faster than 1.
  SimResult r;
  r.total_gpus = 2;
  r.jobs = {Finished(r, 0, 1, 10, 10, 70, 60, "", "")};
  EXPECT_NEAR(FinishTimeFairness(r)[0], 1.0, 1e-12);
  const Metrics m = ComputeMetrics(r);
  EXPECT_FALSE(m.fairness.jain_user.has_value());  // no job names a user
  EXPECT_FALSE(m.fairness.jain_vc.has_value());
  EXPECT_TRUE(m.by_vc.empty());
}

TEST(Fairness, JainIndexOverUsersAndVcsMeanSlowdown) {
  // Slowdown = JCT / packed duration: A 100/100 = 1, B 150/50 = 3, C 110/10 = 11.
  // Users: u1 (A, B) mean 2, u2 (C) 11: Jain = 13^2 / (2 x (4 + 121)) = 169/250.
  // VCs: x (A) 1, y (B, C) mean 7: Jain = 8^2 / (2 x (1 + 49)) = 0.64.
  const Metrics m = ComputeMetrics(ThreeJobs());
  ASSERT_TRUE(m.fairness.jain_user.has_value());
  EXPECT_NEAR(*m.fairness.jain_user, 169.0 / 250.0, 1e-12);
  EXPECT_NEAR(*m.fairness.jain_vc, 0.64, 1e-12);
  EXPECT_EQ(m.fairness.users, 2u);
  EXPECT_EQ(m.fairness.vcs, 2u);
  EXPECT_EQ(JainIndex({5, 5, 5}), 1.0);
  EXPECT_NEAR(*JainIndex({1, 0, 0, 0}), 0.25, 1e-12);  // one has everything: 1/n
}

TEST(Fairness, QueueingDelayPerVc) {
  // x: A waited 0 s. y: B waited 100 s (0 -> 100), C 100 s (50 -> 150).
  const Metrics m = ComputeMetrics(ThreeJobs());
  ASSERT_EQ(m.by_vc.size(), 2u);
  EXPECT_EQ(m.by_vc[0].vc, "x");
  EXPECT_EQ(m.by_vc[0].queueing.mean, 0);
  EXPECT_EQ(m.by_vc[1].vc, "y");
  EXPECT_EQ(m.by_vc[1].finished, 2u);
  EXPECT_EQ(m.by_vc[1].queueing.mean, 100);
  EXPECT_NEAR(m.by_vc[1].mean_slowdown, 7, 1e-12);
}

TEST(Metrics, P999AndTheJctCdf) {
  // JCTs 100, 150, 110 s, sorted 100, 110, 150. p99.9 sits at 0.999 x 2 = 1.998 between the
  // second and third: 110 + 0.998 x 40 = 149.92.
  const Metrics m = ComputeMetrics(ThreeJobs());
  EXPECT_NEAR(m.jct.p999, 149.92, 1e-9);
  EXPECT_NEAR(m.makespan, 160, 1e-12);
  const std::string cdf = JctCdfCsv(ThreeJobs());
  EXPECT_EQ(cdf.substr(0, cdf.find('\n', cdf.find('\n') + 1) + 1),
            "fraction,jct_seconds\n0.000,100.000\n");
  EXPECT_NE(cdf.find("\n0.500,110.000\n"), std::string::npos);
  EXPECT_NE(cdf.find("\n0.250,105.000\n"), std::string::npos);  // halfway 100 -> 110
  EXPECT_EQ(cdf.substr(cdf.size() - 14), "1.000,150.000\n");
}

// Found by a tester: a run where no job finished wrote a mean JCT of 0 (n = 0); none is null.
TEST(MetricsJson, StatsOfNothingAreNull) {
  const nlohmann::json none = ToJson(Stats{});
  EXPECT_EQ(none["n"], 0);
  EXPECT_TRUE(none["mean"].is_null() && none["p99"].is_null() && none["max"].is_null())
      << none.dump();
  Stats one;
  one.n = 1;
  one.mean = 5;
  EXPECT_EQ(ToJson(one)["mean"], 5.0);
}

// Found by a tester: a run where every job was stranded by capacity read makespan 0 and
// utilisation 0 although GPUs were busy. Two GPUs; a 2-GPU job submitted at 10 s ran 10-40 s
// and was evicted, never to finish (the run's last run ended at 40 s). Makespan 40 - 10 =
// 30 s; utilisation 2 x 30 / (2 x 30) = 1. Nothing finished: no mean nodes (null).
TEST(Metrics, AStrandedRunEndsTheMakespan) {
  SimResult r;
  r.total_gpus = 2;
  JobResult j;
  j.id = JobId(0);
  j.gpus = 2;
  j.state = JobState::kPending;
  j.submit = 10'000;
  j.first_start = 10'000;
  j.executed = 30'000;
  j.work = 100'000;
  r.jobs = {j};
  r.last_run_end = 40'000;
  const Metrics m = ComputeMetrics(r);
  EXPECT_EQ(m.finished, 0u);
  EXPECT_NEAR(m.makespan, 30, 1e-12);
  EXPECT_NEAR(m.utilisation, 1.0, 1e-12);
  const nlohmann::json js = ToJson(m);
  EXPECT_TRUE(js["mean_nodes_multi_gpu"].is_null()) << js.dump();
  EXPECT_TRUE(js["fairness"]["worst_rho"].is_null()) << js.dump();
  // The tables say "-" for each figure over no job, as the JSON's null.
  const std::string table = SummaryTable(m);
  EXPECT_NE(table.find("slowdown mean - p95 -"), std::string::npos) << table;
  EXPECT_NE(table.find("rho mean - worst -"), std::string::npos) << table;
  const std::string cmp = CompareTable({m, m});
  const size_t at = cmp.find("\nmean JCT (s)");
  ASSERT_NE(at, std::string::npos) << cmp;
  const std::string row = cmp.substr(at + 1, cmp.find('\n', at + 1) - at - 1);
  EXPECT_EQ(row.find_first_of("0123456789", 12), std::string::npos) << row;
}

// Found by a tester: "queueing delay by VC (largest first)" was ordered by job count. VC
// "busy" has two jobs that waited 0 s, "slow" one that waited 50 s: slow comes first.
TEST(Report, QueueingDelayByVcIsLargestDelayFirst) {
  SimResult r;
  r.total_gpus = 1;
  r.jobs = {Finished(r, 0, 1, 0, 0, 10, 10, "", "busy"),
            Finished(r, 1, 1, 10, 10, 20, 10, "", "busy"),
            Finished(r, 2, 1, 0, 50, 60, 10, "", "slow")};
  const std::string table = SummaryTable(ComputeMetrics(r));
  EXPECT_NE(table.find("mean queueing delay by VC (largest first; all in summary.json): slow 50 s "
                       "(1 jobs), busy 0 s (2 jobs)"),
            std::string::npos)
      << table;
}

}  // namespace
}  // namespace tiresias
