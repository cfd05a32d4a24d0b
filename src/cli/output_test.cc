// The CLI's table helpers (cli/output.h): columns clipped by display width, as fmt pads them.
#include "cli/output.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace tiresias {
namespace {

TEST(CliOutput, ClipCountsColumnsNotBytesAndNeverCutsACharacter) {
  EXPECT_EQ(Clip("resnet50-sweep-17", 16), "resnet50-sweep-1");
  EXPECT_EQ(Clip("short", 16), "short");
  // "é" is 2 bytes and 1 column: 16 of them fit 16 columns (bytes would keep 8).
  std::string accents;
  for (int i = 0; i < 20; ++i) accents += "\u00e9";
  EXPECT_EQ(Clip(accents, 16), accents.substr(0, 32));
  // "训练" (training) is 2 characters of 3 bytes and 2 columns each: 5 columns keep 2 of them
  // (4 columns), not the 5 bytes' one and a half.
  const std::string cjk = "\u8bad\u7ec3\u8bad\u7ec3";
  EXPECT_EQ(Clip(cjk, 5), "\u8bad\u7ec3");
  // fmt pads the clipped text to 6 columns with 2 spaces: 4 + 2.
  EXPECT_EQ(fmt::format("{:<6}|", Clip(cjk, 5)), "\u8bad\u7ec3  |");
  EXPECT_EQ(Clip("", 4), "");
  EXPECT_EQ(Clip("abc", 0), "");
}

}  // namespace
}  // namespace tiresias
