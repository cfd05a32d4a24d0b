// Tests of the exit file (round trip, malformed content, no temp file left behind) and of
// reading /proc/<pid>/stat.
#include "exec/exit_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "exec/proc_stat.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

class ExecutorExitFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tiresias_exitfile_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ExecutorExitFile, RoundTrip) {
  std::string path = ExitFilePath(dir_.string(), 3);
  EXPECT_EQ(path, dir_.string() + "/attempt-3.exit");
  EXPECT_FALSE(ReadExitRecord(path));
  ASSERT_TRUE(WriteExitFile(path, {.exit_code = 42}).ok());
  auto rec = ReadExitRecord(path);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->exit_code, 42);
  EXPECT_EQ(rec->signal, 0);
  ASSERT_TRUE(WriteExitFile(path, {.exit_code = -1, .signal = SIGTERM}).ok());
  rec = ReadExitRecord(path);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->exit_code, -1);
  EXPECT_EQ(rec->signal, SIGTERM);
  // Only the file itself: the temp file was renamed into place.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(ExecutorExitFile, MalformedIsEmpty) {
  std::string path = (dir_ / "bad.exit").string();
  for (const char* text : {"", "exit", "exit x", "signal 0", "exit 300", "quit 1"}) {
    std::ofstream(path) << text;
    EXPECT_FALSE(ReadExitRecord(path)) << text;
  }
  EXPECT_FALSE(WriteExitFile((dir_ / "no-dir" / "a.exit").string(), {.exit_code = 0}).ok());
}

TEST(ExecutorProcStat, SelfAndChild) {
  auto self = ReadProcStat(getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->pgrp, getpgrp());
  EXPECT_GT(self->start_ticks, 0);
  EXPECT_TRUE(ProcessAlive(getpid(), self->start_ticks));
  EXPECT_FALSE(ProcessAlive(getpid(), self->start_ticks + 1));

  pid_t child = fork();
  if (child == 0) _exit(0);
  auto st = ReadProcStat(child);
  ASSERT_TRUE(st);
  EXPECT_GE(st->start_ticks, self->start_ticks);
  siginfo_t info;
  ASSERT_EQ(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(ReadProcStat(child)->state, 'Z');  // exited, not yet reaped
  EXPECT_FALSE(ProcessAlive(child, st->start_ticks));
  int status;
  waitpid(child, &status, 0);
  EXPECT_FALSE(ReadProcStat(child));
}

}  // namespace
}  // namespace tiresias
