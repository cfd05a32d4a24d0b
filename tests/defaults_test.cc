// The shipped defaults against the old ones on a public Philly week, run as a new user runs
// the simulator (`sim --policy dlas`, nothing else): days 35-42 (11,967 jobs) on 2x16x8
// (256 GPUs), models assigned (seed 1, so placement matters), 30 s preemption overhead.
// Measured (mean JCT, s): dlas 13,473 against the old defaults' 197,881 (count placement,
// 2 queues at 3600 GPU-s, FIFO in a queue, no promotion); gittins 14,481 against 22,511 (count,
// 2 queues at 3600 GPU-s, quantum 3600); srtf (knows every duration) 12,149; YARN-CS
// (fifo+consolidate) 255,553. Without models: dlas 12,904, old 88,540, srtf 11,792.
// How the defaults were chosen (tuning and held-out weeks): README.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "test_util.h"

namespace {

const std::string kTrace = std::string(TIRESIAS_SHARED_DIR) + "/traces/philly.csv";

double MeanJct(const std::string& args) {
  auto r = tiresias::testing::RunTiresias("sim --trace " + kTrace +
                                          " --cluster 2x16x8 --from-day 35 --days 7 " + args);
  EXPECT_EQ(r.rc, 0) << r.out;
  const auto at = r.out.find("  JCT (s)");
  EXPECT_NE(at, std::string::npos) << r.out;
  if (at == std::string::npos) return 0;
  std::istringstream line(r.out.substr(at + 9));
  double mean = 0;
  line >> mean;
  return mean;
}

TEST(Defaults, BeatTheOldDefaultsAndLandNearSrtfOnAPublicWeek) {
  if (!std::filesystem::exists(kTrace)) GTEST_SKIP() << kTrace << " is absent (../shared)";
  const std::string models = "--assign-models 1 ";
  const double dlas = MeanJct(models + "--policy dlas");
  const double gittins = MeanJct(models + "--policy gittins");
  const double old_dlas = MeanJct(models +
                                  "--policy dlas --placement count --opt thresholds=3600 --opt "
                                  "queue_order=fifo --opt promote_knob=0");
  const double old_gittins = MeanJct(
      models + "--policy gittins --placement count --opt thresholds=3600 --opt quantum=3600");
  const double srtf = MeanJct(models + "--policy srtf");
  const double yarn = MeanJct(models + "--policy fifo --placement consolidate");
  EXPECT_LT(dlas, 0.2 * old_dlas);        // 13,473 vs 197,881
  EXPECT_LT(gittins, 0.8 * old_gittins);  // 14,481 vs 22,511
  EXPECT_LT(dlas, 1.2 * srtf);            // 1.11x
  EXPECT_LT(gittins, 1.3 * srtf);         // 1.19x
  EXPECT_GT(yarn, 10 * dlas);             // 19x
  EXPECT_GT(yarn, 10 * gittins);          // 17.6x
  // Without models every placement runs at packed speed: the queues alone.
  const double plain = MeanJct("--policy dlas");
  const double plain_old = MeanJct(
      "--policy dlas --placement count --opt thresholds=3600 --opt queue_order=fifo "
      "--opt promote_knob=0");
  EXPECT_LT(plain, 0.3 * plain_old);                 // 12,904 vs 88,540
  EXPECT_LT(plain, 1.2 * MeanJct("--policy srtf"));  // 1.09x
}

}  // namespace
