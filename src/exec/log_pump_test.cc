// Tests of LogPump (exec/log_pump.h): a job's log rotates at its limit and keeps the newest
// output whole, gives way to serve's journal while the disk is nearly full, and never blocks
// on a write that fails; tasks sharing it never split each other's lines (LineJoiner). The
// shim's use of it (a job's stdout through a pipe) is in
// local_executor_test.cc.
#include "exec/log_pump.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

class LogPumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("log_pump");
    log_ = (dir_ / "output.log").string();
    fd_ = open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    close(fd_);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  std::string log_;
  int fd_ = -1;
};

TEST_F(LogPumpTest, RotatesAtTheLimitOnALinesEndAndKeepsTheNewestOutput) {
  // Limit 100 bytes; the log already holds 16 bytes of an earlier attempt, which count. 12-byte
  // lines: 16 + 7 x 12 = 100, so lines 1-7 fill it; line 8 would pass the limit, so the log
  // moves to output.log.1 and line 8 opens a new one after tiresias' line. That one takes
  // lines 8-15 (96 bytes; line 16 would make 108), then rotates again: output.log.1 holds
  // 8-15 and output.log 16-20. The oldest (1-7) is gone, the newest kept, no line split.
  ASSERT_EQ(write(fd_, "earlier attempt\n", 16), 16);  // 16 bytes already count
  LogPump pump(log_, 100, 0, {fd_});
  std::string all;
  for (int i = 1; i <= 20; ++i) all += fmt::format("line-{:02}....\n", i);  // 12 bytes each
  ASSERT_EQ(all.size(), 240u);
  pump.Write(all);
  EXPECT_EQ(pump.rotations(), 2);
  const std::string older = testing::ReadAll(log_ + ".1");
  const std::string newest = testing::ReadAll(log_);
  EXPECT_EQ(older.find("line-07"), std::string::npos) << older;  // rotated away twice
  EXPECT_NE(older.find("line-08....\n"), std::string::npos) << older;
  EXPECT_NE(older.find("line-15....\n"), std::string::npos) << older;
  EXPECT_TRUE(newest.starts_with("==== tiresias: the log reached its limit of 100 bytes"))
      << newest;
  EXPECT_NE(newest.find(log_ + ".1 ====\nline-16....\n"), std::string::npos) << newest;
  EXPECT_TRUE(newest.ends_with("line-20....\n")) << newest;
  EXPECT_EQ(pump.dropped(), 0);
}

TEST_F(LogPumpTest, ALineLongerThanTheLimitIsCutNotLooped) {
  // 250 bytes without a newline, limit 100: a line is finished up to min(limit, 64 KiB) = 100
  // bytes past the limit, so 200 bytes go to the first log, then one rotation, then 50.
  LogPump pump(log_, 100, 0, {fd_});
  pump.Write(std::string(250, 'x'));
  EXPECT_EQ(pump.rotations(), 1);
  EXPECT_EQ(testing::ReadAll(log_ + ".1"), std::string(200, 'x'));
  const std::string newest = testing::ReadAll(log_);
  EXPECT_TRUE(newest.ends_with("====\n" + std::string(50, 'x'))) << newest;
}

TEST_F(LogPumpTest, ALineSplitAcrossTwoReadsIsFinishedBeforeTheRotation) {
  // Limit 20. The first read ends mid-line (17 bytes). The second, "6789\nabcdefghij\n", would
  // pass the limit after 3 bytes; the log finishes its line first ("6789\n": 22 bytes, within
  // the 20 bytes it may go past), then rotates: no line is split between the two files.
  LogPump pump(log_, 20, 0, {fd_});
  pump.Write("0123456789\n012345");
  pump.Write("6789\nabcdefghij\n");
  EXPECT_EQ(pump.rotations(), 1);
  EXPECT_EQ(testing::ReadAll(log_ + ".1"), "0123456789\n0123456789\n");
  EXPECT_TRUE(testing::ReadAll(log_).ends_with(" ====\nabcdefghij\n")) << testing::ReadAll(log_);
}

TEST_F(LogPumpTest, ALogDeletedByHandIsStartedAgainAtTheNextRotation) {
  // An operator removes output.log to free space; the next rotation finds nothing to move and
  // opens a new log rather than dropping the job's output for good.
  // (No look for a removed log between the writes: the rotation finds it.)
  LogPump pump(log_, 10, 0, {fd_}, nullptr, /*recheck_ms=*/1 << 30);
  pump.Write("123456789\n");
  ASSERT_EQ(unlink(log_.c_str()), 0);
  pump.Write("abcdefghi\n");
  EXPECT_EQ(pump.rotations(), 0);  // a removal, not a rotation
  EXPECT_EQ(pump.dropped(), 0);
  EXPECT_TRUE(testing::ReadAll(log_).ends_with("====\nabcdefghi\n")) << testing::ReadAll(log_);
  // Its line says so, and names no output.log.1 (there is none).
  EXPECT_EQ(testing::ReadAll(log_).find("output.log.1"), std::string::npos);
}

TEST_F(LogPumpTest, ALogDeletedByHandWhileTheJobWritesIsStartedAgainAtOnce) {
  // Found by a tester: below the limit, the output went on into the unlinked file, unseen
  // (and its space never freed) until the next rotation, whose line then named an
  // output.log.1 that did not exist. It is looked at every `recheck_ms` (0 here: each write).
  LogPump pump(log_, 1 << 20, 0, {fd_}, nullptr, /*recheck_ms=*/0);
  pump.Write("before\n");
  ASSERT_EQ(unlink(log_.c_str()), 0);
  pump.Write("after\n");
  EXPECT_EQ(testing::ReadAll(log_),
            "==== tiresias: the log was removed; a new one starts here ====\nafter\n");
  EXPECT_EQ(pump.rotations(), 0);
  EXPECT_FALSE(fs::exists(log_ + ".1"));
  EXPECT_EQ(pump.dropped(), 0);
}

TEST_F(LogPumpTest, OutputIsDroppedWhileTheDiskIsNearlyFullAndCountedWhenThereIsRoom) {
  // keep_free 1000: with 1,005 bytes free a 10-byte write would leave 995: dropped, with one
  // line saying so; then two more 10-byte writes dropped (30 in all); with room again the
  // count is written and output flows.
  int64_t free = 1'000'000;
  LogPump pump(
      log_, 0, 1000, {fd_}, [&]() -> StatusOr<int64_t> { return free; },
      /*recheck_ms=*/0);
  pump.Write("first....\n");
  free = 1'005;
  for (int i = 0; i < 3; ++i) pump.Write("dropped..\n");
  free = 1'000'000;
  pump.Write("after....\n");
  EXPECT_EQ(pump.dropped(), 30);
  const std::string log = testing::ReadAll(log_);
  EXPECT_EQ(log.find("dropped.."), std::string::npos) << log;
  EXPECT_NE(log.find("first....\n==== tiresias: the disk of this log is nearly full"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("==== tiresias: 30 bytes of the job's output were dropped while the disk "
                     "was full ====\nafter....\n"),
            std::string::npos)
      << log;
}

// Output still being dropped when the command ends is counted before the shim's last line
// (found by a tester: the count came only with a later write, and a job that wrote no more
// lost it). Closing says it once; a second close says nothing more.
TEST_F(LogPumpTest, OutputStillDroppedAtTheEndIsCountedThen) {
  int64_t free = 1'000'000;
  LogPump pump(
      log_, 0, 1000, {fd_}, [&]() -> StatusOr<int64_t> { return free; },
      /*recheck_ms=*/0);
  pump.Write("first....\n");
  free = 1'005;
  pump.Write("dropped..\n");
  pump.Closing();
  pump.Closing();
  const std::string log = testing::ReadAll(log_);
  EXPECT_TRUE(
      log.ends_with("==== tiresias: 10 bytes of the job's output were dropped while the "
                    "disk was full ====\n"))
      << log;
  EXPECT_EQ(log.find("bytes of the job's output were dropped"),
            log.rfind("bytes of the job's output were dropped"))
      << log;
}

TEST_F(LogPumpTest, AWriteThatFailsIsDroppedAndNeverBlocks) {
  // /dev/full fails every write with ENOSPC: all 4 KiB counted as dropped, and Write returns.
  const int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full < 0) GTEST_SKIP() << "no /dev/full here";
  LogPump pump(log_, 0, 0, {full});
  pump.Write(std::string(4096, 'y'));
  EXPECT_EQ(pump.dropped(), 4096);
  close(full);
}

TEST_F(LogPumpTest, TasksWritingAtOnceNeverSplitEachOthersLines) {
  // Two tasks' joiners on one log. Task 0 writes "aaa" then "a\nA" and task 1 "bb" between
  // them: the log gets task 0's whole line first, never "aaabb". A '\r' ends a line (a
  // progress bar); a partial line is due kHoldMs after it began, and a task's end passes on
  // what it held. 70 KiB without an end is passed on in pieces of at least kMaxHeld.
  LogPump log(log_, 0, 0, {fd_});
  LineJoiner t0(log), t1(log);
  t0.Write("aaa", 0);
  t1.Write("bb", 10);
  EXPECT_EQ(testing::ReadAll(log_), "");
  EXPECT_EQ(t0.Due(), LineJoiner::kHoldMs);
  t0.Write("a\nA", 20);
  EXPECT_EQ(testing::ReadAll(log_), "aaaa\n");
  EXPECT_EQ(t0.Due(), 20 + LineJoiner::kHoldMs);  // "A" began at 20
  t1.Write(" 50%\r", 30);
  EXPECT_EQ(testing::ReadAll(log_), "aaaa\nbb 50%\r");
  EXPECT_EQ(t1.Due(), -1);
  t0.Flush();
  EXPECT_EQ(testing::ReadAll(log_), "aaaa\nbb 50%\rA");
  t1.Write(std::string(70 << 10, 'x'), 40);
  EXPECT_EQ(testing::ReadAll(log_).size(), 13 + (70u << 10));
  EXPECT_EQ(t1.Due(), -1);
}

}  // namespace
}  // namespace tiresias
