// RunCommand: output and exit status, the environment it is given, a command that cannot be
// started, and one that overstays its deadline (killed, Unavailable, without waiting it out).
#include "exec/subprocess.h"

#include <gtest/gtest.h>

#include <chrono>

namespace tiresias {
namespace {

using namespace std::chrono_literals;

TEST(Subprocess, OutputAndExitStatus) {
  auto r = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"}, 5s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->Summary(), "exit 3: err");
  auto k = RunCommand({"sh", "-c", "kill -9 $$"}, 5s);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->signal, 9);
}

TEST(Subprocess, EnvironmentIsExactlyTheOneGiven) {
  const std::vector<std::string> env = {"PATH=/usr/bin:/bin", "ONLY=this"};
  auto r = RunCommand({"sh", "-c", "echo $ONLY ${HOME:-nohome}"}, 5s, &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "this nohome\n");
}

TEST(Subprocess, MissingCommandAndTimeout) {
  auto m = RunCommand({"no-such-command-tiresias"}, 5s);
  EXPECT_EQ(m.status().code(), StatusCode::kIoError);
  const auto t0 = std::chrono::steady_clock::now();
  auto t = RunCommand({"sleep", "30"}, 200ms);
  EXPECT_EQ(t.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  // A child that closes its output but lingers is killed at the deadline too.
  auto l = RunCommand({"sh", "-c", "exec >&- 2>&-; sleep 30"}, 200ms);
  EXPECT_EQ(l.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

}  // namespace
}  // namespace tiresias
