// `tiresias ls -o wide` on a real serve (tests/serve_fixture.h): its extra columns, WAIT,
// TIME_LIMIT, PREEMPT, SUBMITTED and START_EST, for a running job and for a job waiting
// after a preemption, whose START_EST is its likely next start.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "serve_fixture.h"

namespace tiresias::serve_test {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

// The row of `ls` whose first column is `id`, split into its columns ("" if none).
std::vector<std::string> RowOf(const std::string& table, int64_t id) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> cols;
    for (std::string w; words >> w;) cols.push_back(w);
    if (!cols.empty() && cols[0] == std::to_string(id)) return cols;
  }
  return {};
}

// Found by a tester: START_EST was `-` for every waiting job that had run before, under dlas
// most of them, though the API had an estimate for each.
TEST_F(ServeTest, LsWideGivesAPreemptedJobItsLikelyNextStart) {
  // One GPU, dlas with a 1 GPU-s first queue: A is demoted after 1 s and preempted by B.
  Serve({"--gpus", "1", "--policy", "dlas", "--opt", "thresholds=1", "--grace", "1"});
  const int64_t a = Submit({{"argv", {"sleep", "60"}}, {"name", "a"}, {"time", "10:00"}});
  ASSERT_TRUE(WaitFor([&] { return Job(a)["queue"] == "Q2"; }, 10s));
  const int64_t b = Submit({{"argv", {"sleep", "60"}}, {"name", "b"}});
  ASSERT_TRUE(WaitFor([&] { return State(a) == "pending" && State(b) == "running"; }, 10s));
  const auto ls = testing::RunCommandLine(
      fmt::format("TIRESIAS_STATE_DIR={} {} ls -o wide", dir_.string(), TIRESIAS_BINARY));
  ASSERT_EQ(ls.rc, 0) << ls.out;
  EXPECT_NE(ls.out.find("START_EST"), std::string::npos) << ls.out;
  const auto row_a = RowOf(ls.out, a), row_b = RowOf(ls.out, b);
  ASSERT_FALSE(row_a.empty()) << ls.out;
  ASSERT_FALSE(row_b.empty()) << ls.out;
  // ID NAME USER GPUS STATE TIME ATTAINED QUEUE WAIT TIME_LIMIT PREEMPT SUBMITTED START_EST
  // NODELIST(REASON)
  ASSERT_EQ(row_a.size(), 14u) << ls.out;
  ASSERT_EQ(row_b.size(), 14u) << ls.out;
  EXPECT_EQ(row_a[4], "pending") << ls.out;
  EXPECT_EQ(row_a[9], "00:10:00") << ls.out;
  EXPECT_EQ(row_a[10], "1") << "one preemption: " << ls.out;
  EXPECT_TRUE(row_a[12].starts_with("~")) << "its next start: " << ls.out;
  EXPECT_EQ(row_a[13], "(Priority)") << ls.out;
  EXPECT_EQ(row_b[12], "-") << "running: " << ls.out;
  for (int64_t id : {a, b}) {
    ASSERT_TRUE(serve_->Client().PostJson(fmt::format("/v1/jobs/{}/cancel", id), {}).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return Job(a)["pid"] == 0 && Job(b)["pid"] == 0; }, 10s));
}

}  // namespace
}  // namespace tiresias::serve_test
