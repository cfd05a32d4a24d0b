// The GPU-time history reader (src/trace/history_reader.h): samples in GPU-ms, errors naming
// file:line, and the bound on a sample (found by fuzz/history_fuzzer: "51e15" GPU-seconds
// became a negative sample after the conversion to ms).
#include "trace/history_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "test_util.h"

namespace tiresias {
namespace {

std::string Write(const std::string& content) {
  static int n = 0;
  auto path = testing::ScratchDir("history") / (fmt::format("h{}.csv", n++));
  std::ofstream(path, std::ios::binary) << content;
  return path.string();
}

TEST(HistoryReader, ReadsGpuSecondsAsGpuMs) {
  auto h = ReadGpuTimeHistory(Write("job,duration\n1,121\n2,0.5\n3,0\n"));
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(*h, (std::vector<Service>{121000, 500, 0}));
}

TEST(HistoryReader, RefusesSamplesBeyondTheBound) {
  const std::string path = Write("duration\n188\n51e15\n3605\n");
  auto h = ReadGpuTimeHistory(path);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().message(),
            path + ":3: duration '51e15' is not a number of GPU-seconds in [0, 315360000000000]");
  EXPECT_TRUE(ReadGpuTimeHistory(Write("duration\n315360000000000\n")).ok());
  EXPECT_FALSE(ReadGpuTimeHistory(Write("duration\n-1\n")).ok());
  EXPECT_FALSE(ReadGpuTimeHistory(Write("duration\nnan\n")).ok());
}

TEST(HistoryReader, NoSamplesOrNoColumn) {
  const std::string none = Write("duration\n");
  EXPECT_EQ(ReadGpuTimeHistory(none).status().message(), none + ": no samples");
  const std::string col = Write("gpu_time\n5\n");
  EXPECT_EQ(ReadGpuTimeHistory(col).status().message(), col + ":1: missing column 'duration'");
}

}  // namespace
}  // namespace tiresias
