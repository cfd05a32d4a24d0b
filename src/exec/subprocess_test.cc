// RunCommand: output and exit status, the environment it is given, a command that cannot be
// started, one that overstays its deadline (killed, Unavailable, without waiting it out), and
// one its caller abandons.
#include "exec/subprocess.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

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

TEST(Subprocess, AnAbandonedCommandIsKilledWithoutWaitingForItsDeadline) {
  // A daemon that stops abandons its reads: killed within ~100 ms of the flag, Unavailable,
  // whether it still writes its output or has closed it and lingers.
  for (const char* cmd : {"sleep 30", "exec >&- 2>&-; sleep 30"}) {
    SCOPED_TRACE(cmd);
    std::atomic<bool> abandon = false;
    std::thread stop([&] {
      std::this_thread::sleep_for(300ms);
      abandon = true;
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto r = RunCommand({"sh", "-c", cmd}, 60s, nullptr, &abandon);
    const auto took = std::chrono::steady_clock::now() - t0;
    stop.join();
    EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(r.status().message().find("abandoned"), std::string::npos) << r.status().message();
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 5s);
  }
  // Not abandoned: it runs to its end as ever.
  std::atomic<bool> keep = false;
  auto r = RunCommand({"sh", "-c", "sleep 0.2; echo done"}, 60s, nullptr, &keep);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "done\n");
}

}  // namespace
}  // namespace tiresias
