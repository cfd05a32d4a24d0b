// End-to-end tests of examples/trainer: preempting it with SIGTERM (several times) or killing
// it outright after a periodic checkpoint, then relaunching it, must give a final result that
// is bit-identical to an uninterrupted run, and each relaunch must resume, not restart.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr int kPreemptedExit = 75;

// One run of the trainer with stdout and stderr on a pipe the test reads line by line.
class Trainer {
 public:
  Trainer(const std::vector<std::string>& args, const fs::path& checkpoint_dir, int attempt) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      std::string v = *e;
      if (!v.starts_with("TIRESIAS_CHECKPOINT_DIR=") && !v.starts_with("TIRESIAS_ATTEMPT=")) {
        env.push_back(v);
      }
    }
    env.push_back("TIRESIAS_CHECKPOINT_DIR=" + checkpoint_dir.string());
    env.push_back("TIRESIAS_ATTEMPT=" + std::to_string(attempt));
    std::vector<std::string> argv = {TIRESIAS_TRAINER};
    argv.insert(argv.end(), args.begin(), args.end());
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    int rc = posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, Pointers(argv).data(),
                         Pointers(env).data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    fd_ = fds[0];
    EXPECT_EQ(rc, 0) << std::strerror(rc);
  }
  ~Trainer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }

  // Reads output until a complete line satisfies `pred`; false at end of output or timeout.
  bool WaitForLine(const std::function<bool(const std::string&)>& pred,
                   milliseconds timeout = milliseconds(5000)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      size_t nl;
      while ((nl = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (pred(line)) return true;
      }
      auto left =
          std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
      if (fd_ < 0 || left.count() <= 0) return false;
      pollfd p = {fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) {
        ::close(fd_);
        fd_ = -1;
        pending_ += '\n';  // hand a last unterminated line to pred
        continue;
      }
      output_.append(buf, n);
      pending_.append(buf, n);
    }
  }

  void Signal(int sig) { ::kill(pid_, sig); }

  // Drains the output and returns the exit status (128 + signal when killed by one).
  int Wait() {
    WaitForLine([](const std::string&) { return false; }, milliseconds(20000));
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  const std::string& output() const { return output_; }

 private:
  static std::vector<char*> Pointers(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (std::string& s : v) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_;
  std::string pending_;
};

// The number after `prefix` in the first output line that starts with it; -1 if none.
int64_t NumberAfter(const std::string& output, const std::string& prefix) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) return std::stoll(line.substr(prefix.size()));
  }
  return -1;
}

std::string FinalLine(const std::string& output) {
  std::smatch m;
  std::regex re("(^|\\n)(final loss=[0-9.e+-]+ checksum=[0-9a-f]{16})\\n");
  return std::regex_search(output, m, re) ? m[2].str() : "";
}

// Runs `steps` steps uninterrupted and returns the final line (checked against --result).
std::string Uninterrupted(const std::string& name, int steps) {
  fs::path dir = tiresias::testing::ScratchDir(name);
  Trainer t({"--steps", std::to_string(steps), "--result", (dir / "result.txt").string()},
            dir / "ckpt", 0);
  EXPECT_EQ(t.Wait(), 0) << t.output();
  std::string final_line = FinalLine(t.output());
  EXPECT_NE(final_line, "") << t.output();
  EXPECT_EQ(tiresias::testing::ReadAll(dir / "result.txt"), final_line + "\n");
  EXPECT_NE(t.output().find("starting from step 0, attempt 0"), std::string::npos) << t.output();
  return final_line;
}

// A "step K loss=..." progress line with K >= at_least.
std::function<bool(const std::string&)> StepLine(int64_t at_least) {
  return [at_least](const std::string& line) {
    return line.starts_with("step ") && std::stoll(line.substr(5)) >= at_least;
  };
}

TEST(Trainer, SigtermPreemptionsResumeToTheSameBits) {
  const int kSteps = 300;
  std::string expected = Uninterrupted("reference", kSteps);

  fs::path dir = tiresias::testing::ScratchDir("preempted");
  const std::vector<std::string> args = {
      "--steps",  std::to_string(kSteps),       "--step-ms", "4", "--log-every", "5",
      "--result", (dir / "result.txt").string()};
  int64_t stopped_at = 0;
  // Each attempt is preempted at a different moment: after some training, right after it
  // resumed, and after crossing an epoch boundary (32 steps per epoch).
  const std::vector<int64_t> extra_steps = {40, 0, 37};
  for (int attempt = 0; attempt < 3; ++attempt) {
    Trainer t(args, dir / "ckpt", attempt);
    if (attempt > 0) {
      ASSERT_TRUE(t.WaitForLine([](const std::string& l) { return l.starts_with("resumed"); }))
          << t.output();
      EXPECT_EQ(NumberAfter(t.output(), "resumed from step "), stopped_at) << t.output();
      EXPECT_NE(t.output().find(", attempt " + std::to_string(attempt)), std::string::npos)
          << t.output();
    }
    if (extra_steps[attempt] > 0) {
      ASSERT_TRUE(t.WaitForLine(StepLine(stopped_at + extra_steps[attempt]))) << t.output();
    }
    t.Signal(SIGTERM);
    ASSERT_EQ(t.Wait(), kPreemptedExit) << t.output();
    int64_t now = NumberAfter(t.output(), "stopped at step ");
    EXPECT_NE(t.output().find("checkpoint written"), std::string::npos) << t.output();
    EXPECT_GE(now, stopped_at + extra_steps[attempt]) << t.output();
    EXPECT_LT(now, kSteps) << "finished before it was preempted:\n" << t.output();
    stopped_at = now;
  }
  ASSERT_GT(stopped_at, 0);

  Trainer last(args, dir / "ckpt", 3);
  ASSERT_EQ(last.Wait(), 0) << last.output();
  EXPECT_EQ(NumberAfter(last.output(), "resumed from step "), stopped_at) << last.output();
  EXPECT_EQ(last.output().find("starting from step 0"), std::string::npos) << last.output();
  EXPECT_EQ(FinalLine(last.output()), expected) << last.output();
  EXPECT_EQ(tiresias::testing::ReadAll(dir / "result.txt"), expected + "\n");

  // A relaunch after the end reports the same result without training again.
  Trainer again(args, dir / "ckpt", 4);
  ASSERT_EQ(again.Wait(), 0) << again.output();
  EXPECT_EQ(NumberAfter(again.output(), "resumed from step "), kSteps) << again.output();
  EXPECT_EQ(FinalLine(again.output()), expected);
}

TEST(Trainer, SigkillResumesFromThePeriodicCheckpoint) {
  const int kSteps = 150;
  std::string expected = Uninterrupted("reference_kill", kSteps);
  fs::path dir = tiresias::testing::ScratchDir("killed");
  const std::vector<std::string> args = {
      "--steps", std::to_string(kSteps), "--step-ms", "3", "--log-every",
      "5",       "--checkpoint-every",   "25"};
  {
    Trainer t(args, dir, 0);
    ASSERT_TRUE(t.WaitForLine(StepLine(60))) << t.output();
    t.Signal(SIGKILL);
    EXPECT_EQ(t.Wait(), 128 + SIGKILL);
    EXPECT_EQ(t.output().find("stopped at step"), std::string::npos) << t.output();
  }
  Trainer t(args, dir, 1);
  ASSERT_EQ(t.Wait(), 0) << t.output();
  int64_t resumed = NumberAfter(t.output(), "resumed from step ");
  EXPECT_GE(resumed, 50) << t.output();
  EXPECT_EQ(resumed % 25, 0) << t.output();
  EXPECT_EQ(FinalLine(t.output()), expected) << t.output();
}

// The example follows serve's protocol (found by a tester: `show` said "LastCheckpoint=never
// reported" for it): each checkpoint touches $TIRESIAS_CHECKPOINT_FILE, and a finished run
// creates $TIRESIAS_DONE_FILE; a stopped one does not.
TEST(Trainer, ReportsItsCheckpointsAndThatItIsDone) {
  fs::path dir = tiresias::testing::ScratchDir("markers");
  const fs::path marker = dir / "checkpointed", done = dir / "done";
  ::setenv("TIRESIAS_CHECKPOINT_FILE", marker.c_str(), 1);
  ::setenv("TIRESIAS_DONE_FILE", done.c_str(), 1);
  {
    Trainer t({"--steps", "100000", "--step-ms", "1", "--log-every", "5"}, dir / "ckpt", 0);
    ASSERT_TRUE(t.WaitForLine(StepLine(10))) << t.output();
    EXPECT_FALSE(fs::exists(marker));
    t.Signal(SIGTERM);
    EXPECT_EQ(t.Wait(), kPreemptedExit) << t.output();
    EXPECT_TRUE(fs::exists(marker)) << "the SIGTERM checkpoint is reported";
    EXPECT_FALSE(fs::exists(done));
  }
  Trainer t({"--steps", "20"}, dir / "ckpt2", 1);
  const int rc = t.Wait();
  ::unsetenv("TIRESIAS_CHECKPOINT_FILE");
  ::unsetenv("TIRESIAS_DONE_FILE");
  ASSERT_EQ(rc, 0) << t.output();
  EXPECT_TRUE(fs::exists(done));
}

TEST(Trainer, ActuallyLearns) {
  fs::path dir = tiresias::testing::ScratchDir("learns");
  Trainer t({"--steps", "1000", "--log-every", "1"}, dir, 0);
  ASSERT_EQ(t.Wait(), 0) << t.output();
  std::smatch first, last;
  std::string out = t.output();
  ASSERT_TRUE(std::regex_search(out, first, std::regex("step 1 loss=([0-9.]+)")));
  ASSERT_TRUE(std::regex_search(out, last, std::regex("final loss=([0-9.e+-]+)")));
  double start = std::stod(first[1]), end = std::stod(last[1]);
  EXPECT_LT(end, 0.5 * start) << out;
}

TEST(Trainer, CorruptCheckpointIsRefusedWithTheLine) {
  fs::path dir = tiresias::testing::ScratchDir("corrupt");
  {
    Trainer t({"--steps", "10"}, dir, 0);
    ASSERT_EQ(t.Wait(), 0) << t.output();
  }
  std::string text = tiresias::testing::ReadAll(dir / "checkpoint.txt");
  text.replace(text.find("\nrng ") + 5, 4, "zzzz");
  std::ofstream(dir / "checkpoint.txt") << text;
  Trainer t({"--steps", "10"}, dir, 1);
  EXPECT_EQ(t.Wait(), 1);
  EXPECT_NE(t.output().find("checkpoint.txt: checkpoint line 5: rng is not 16 hex digits"),
            std::string::npos)
      << t.output();

  // A checkpoint written for another seed is refused rather than silently mixed in.
  fs::path seed_dir = tiresias::testing::ScratchDir("seed");
  {
    Trainer seven({"--steps", "10", "--seed", "7"}, seed_dir, 0);
    ASSERT_EQ(seven.Wait(), 0) << seven.output();
  }
  Trainer mismatch({"--steps", "10"}, seed_dir, 1);
  EXPECT_EQ(mismatch.Wait(), 1);
  EXPECT_NE(mismatch.output().find("checkpoint line 2: checkpoint is for another seed"),
            std::string::npos)
      << mismatch.output();
}

}  // namespace
