// The paper's placement claim on the real trace: on a contended cluster (the Philly trace,
// jobs given VGG/AlexNet/ResNet/Inception models, seeded, on 2x16x8 = 256 GPUs, with
// parameter-server communication and 4-queue dlas with the paper's FIFO inside a queue),
// profile-based placement (`tiresias`)
// beats both consolidating every job (`consolidate`: gangs wait or preempt for packed slots)
// and spreading every job (`spread`: skewed models slowed) on mean JCT. Five weeks, as a user
// runs `tiresias compare`. Measured (s, seed 1):
//   days 21-28: spread 51,885  consolidate 25,187  tiresias 24,821
//   days 28-35: spread 38,473  consolidate 20,180  tiresias 19,508
//   days 35-42: spread 24,482  consolidate 13,426  tiresias 13,290
//   days 42-49: spread 26,055  consolidate 16,769  tiresias 15,878
//   days 49-56: spread 72,718  consolidate 30,677  tiresias 30,764 (the one week lost, 0.3%)
// so we assert tiresias < spread every week and tiresias < consolidate over the five.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "test_util.h"

namespace {

TEST(PlacementJudgement, TiresiasBeatsConsolidateAndSpreadOnContendedPhillyWeeks) {
  const std::string trace = std::string(TIRESIAS_SHARED_DIR) + "/traces/philly.csv";
  if (!std::filesystem::exists(trace)) GTEST_SKIP() << "../shared/traces/philly.csv is absent";
  double consolidate_sum = 0, tiresias_sum = 0;
  for (int day : {21, 28, 35, 42, 49}) {
    auto r = tiresias::testing::RunTiresias(
        "compare --trace " + trace + " --cluster 2x16x8 --from-day " + std::to_string(day) +
        " --days 7 --assign-models 1 --comm ps --runs dlas+spread,dlas+consolidate,dlas+tiresias"
        " --opt dlas.queues=4 --opt dlas.thresholds=1000,10000,100000 --opt dlas.queue_order=fifo");
    ASSERT_EQ(r.rc, 0) << r.out;
    const auto at = r.out.find("mean JCT (s)");
    ASSERT_NE(at, std::string::npos) << r.out;
    std::istringstream line(r.out.substr(at + 12, r.out.find('\n', at) - at - 12));
    double spread = 0, consolidate = 0, tiresias = 0;
    std::string ratio;
    line >> spread >> consolidate >> ratio >> tiresias;
    SCOPED_TRACE("days " + std::to_string(day) + ": " + r.out.substr(at, 120));
    EXPECT_LT(tiresias, spread);
    consolidate_sum += consolidate;
    tiresias_sum += tiresias;
  }
  EXPECT_LT(tiresias_sum, consolidate_sum);
  EXPECT_LT(tiresias_sum, 0.99 * consolidate_sum);  // 104,261 vs 106,239 s: 1.9% better
}

}  // namespace
