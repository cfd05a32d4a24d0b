// Tests of per-job cgroups with real processes, for each kind of hierarchy this machine lets
// the test create cgroups in (cgroup v2 with cgroup.kill, cgroup v1 freezer); those tests skip
// with the reason where none is writable. The parsing of mount tables and the refusals run
// everywhere.
#include "exec/cgroup.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "exec/proc_stat.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;
using Kind = CgroupTree::Kind;

template <typename F>
bool WaitFor(F cond, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST(CgroupMountsTest, FindsV2FirstThenV1FreezerAndDecodesEscapes) {
  const std::string mounts =
      "proc /proc proc rw,nosuid 0 0\n"
      "cgroup /sys/fs/cgroup/freezer cgroup rw,relatime,freezer 0 0\n"
      "cgroup /sys/fs/cgroup/pids cgroup rw,relatime,pids 0 0\n"
      "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
      "cgroup2 /sys/fs/cgroup/my\\040tree cgroup2 rw,relatime 0 0\n"
      "garbage\n";
  auto found = CgroupMounts(mounts);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], std::make_pair(Kind::kV2, std::string("/sys/fs/cgroup/my tree")));
  EXPECT_EQ(found[1], std::make_pair(Kind::kV1Freezer, std::string("/sys/fs/cgroup/freezer")));
  EXPECT_TRUE(CgroupMounts("tmpfs /sys/fs/cgroup tmpfs rw 0 0\n").empty());
}

TEST(CgroupMountsTest, DetectSaysWhyNothingIsUsable) {
  auto dir = testing::ScratchDir("cgroup_detect");
  const std::string none = (dir / "none").string();
  std::ofstream(none) << "proc /proc proc rw 0 0\n";
  auto tree = CgroupTree::Detect("tiresias", none);
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().message(), "no cgroup v2 or cgroup v1 freezer hierarchy mounted");

  const std::string bogus = (dir / "bogus").string();
  std::ofstream(bogus) << "cgroup2 " << (dir / "missing").string() << " cgroup2 rw 0 0\n";
  tree = CgroupTree::Detect("tiresias", bogus);
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(tree.status().message(),
            "cgroup v2 at " + (dir / "missing").string() + ": not a directory");

  // A plain directory is no cgroup filesystem: nothing can be moved into it.
  const std::string plain = (dir / "plain").string();
  fs::create_directories(plain);
  tree = CgroupTree::At(Kind::kV2, plain, "tiresias");
  ASSERT_FALSE(tree.ok());
  EXPECT_NE(tree.status().message().find("cgroup.kill"), std::string::npos)
      << tree.status().message();
}

// Each writable hierarchy of this machine, under a parent of this test process's own.
class CgroupTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    auto text = testing::ReadAll("/proc/self/mounts");
    std::string why = "no such hierarchy mounted";
    for (const auto& [kind, mount] : CgroupMounts(text)) {
      if (kind != GetParam()) continue;
      auto t = CgroupTree::At(kind, mount, parent_);
      if (t.ok()) {
        tree_ = *t;
        return;
      }
      why = t.status().message();
    }
    GTEST_SKIP() << "no writable " << (GetParam() == Kind::kV2 ? "cgroup v2" : "v1 freezer")
                 << " hierarchy here (" << why << "); the executor falls back to process groups";
  }
  void TearDown() override {
    for (pid_t p : children_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
    if (tree_) {
      (void)tree_->Kill("a");
      WaitFor([&] { return tree_->Remove("a").ok(); });
      rmdir(tree_->root().c_str());
    }
  }
  // Forks `sh -c script` inside cgroup `name` (the child joins before exec, as the executor's
  // does); a pipe tells when the script has started its processes.
  pid_t Spawn(const std::string& name, const std::string& script) {
    const std::string procs = tree_->ProcsFile(name);
    pid_t pid = fork();
    if (pid == 0) {
      int fd = open(procs.c_str(), O_WRONLY);
      if (fd < 0 || write(fd, "0", 1) != 1) _exit(99);
      close(fd);
      const int null = open("/dev/null", O_WRONLY);  // no "Terminated" from the shells
      dup2(null, 2);
      execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    children_.push_back(pid);
    return pid;
  }

  const std::string parent_ = "tiresias-test-" + std::to_string(getpid());
  std::optional<CgroupTree> tree_;
  std::vector<pid_t> children_;
};

TEST_P(CgroupTest, FindsSetsidEscapeesAndKillsThemAll) {
  ASSERT_TRUE(tree_->Create("a").ok());
  ASSERT_TRUE(tree_->Create("a").ok()) << "an existing cgroup is fine";
  EXPECT_EQ(tree_->Populated("a").value(), false);
  EXPECT_TRUE(tree_->Members("a")->empty());
  EXPECT_EQ(tree_->Kill("a").code(), StatusCode::kNotFound);
  auto dir = testing::ScratchDir("cgroup_escape_" + std::to_string(static_cast<int>(GetParam())));
  const std::string pidfile = (dir / "escapee").string();
  const pid_t main =
      Spawn("a", "setsid sh -c 'echo $$ > " + pidfile + "; exec sleep 30' & exec sleep 30");
  ASSERT_TRUE(WaitFor([&] { return !testing::ReadAll(pidfile).empty(); }));
  const int escapee = std::stoi(testing::ReadAll(pidfile));
  ASSERT_TRUE(ReadProcStat(escapee));
  const int64_t escapee_ticks = ReadProcStat(escapee)->start_ticks;
  EXPECT_NE(getsid(escapee), getsid(main)) << "left the session, as a daemon would";
  EXPECT_EQ(tree_->Populated("a").value(), true);
  auto members = *tree_->Members("a");
  std::sort(members.begin(), members.end());
  EXPECT_TRUE(std::binary_search(members.begin(), members.end(), main));
  EXPECT_TRUE(std::binary_search(members.begin(), members.end(), escapee));
  EXPECT_FALSE(tree_->Remove("a").ok()) << "not while processes are inside";

  ASSERT_TRUE(tree_->Kill("a").ok());
  int status = 0;
  ASSERT_EQ(waitpid(main, &status, 0), main);
  children_.clear();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return !tree_->Populated("a").value(); }));
  EXPECT_TRUE(WaitFor([&] { return Probe(escapee, escapee_ticks) != Liveness::kAlive; }));
  EXPECT_TRUE(tree_->Members("a")->empty());
  EXPECT_TRUE(WaitFor([&] { return tree_->Remove("a").ok(); }));
  EXPECT_FALSE(fs::exists(tree_->PathOf("a")));
  EXPECT_TRUE(tree_->Remove("a").ok()) << "removing what is not there is fine";
  EXPECT_EQ(tree_->Populated("a").value(), false);
}

TEST_P(CgroupTest, SignalReachesEveryMember) {
  ASSERT_TRUE(tree_->Create("a").ok());
  auto dir = testing::ScratchDir("cgroup_signal_" + std::to_string(static_cast<int>(GetParam())));
  const std::string a = (dir / "a").string(), b = (dir / "b").string();
  // Each shell writes its name when SIGTERM reaches it; ".ready" once its trap is set.
  auto loop = [](const std::string& f) {
    return "trap 'echo x > " + f + "; exit 0' TERM; touch " + f +
           ".ready; while :; do sleep 0.01; done";
  };
  std::string escaped = loop(b);  // inside single quotes for setsid sh -c '...'
  for (size_t p = 0; (p = escaped.find('\'', p)) != std::string::npos; p += 4)
    escaped.replace(p, 1, "'\\''");
  const pid_t main = Spawn("a", "setsid sh -c '" + escaped + "' & " + loop(a));
  ASSERT_TRUE(WaitFor([&] { return fs::exists(a + ".ready") && fs::exists(b + ".ready"); }));
  ASSERT_TRUE(tree_->Signal("a", SIGTERM).ok());
  int status = 0;
  ASSERT_EQ(waitpid(main, &status, 0), main);
  children_.clear();
  EXPECT_TRUE(
      WaitFor([&] { return testing::ReadAll(a) == "x\n" && testing::ReadAll(b) == "x\n"; }));
  EXPECT_TRUE(WaitFor([&] { return !tree_->Populated("a").value(); }));
  EXPECT_EQ(tree_->Signal("a", SIGTERM).code(), StatusCode::kNotFound);
}

TEST_P(CgroupTest, JoinMovesARunningProcess) {
  ASSERT_TRUE(tree_->Create("a").ok());
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  children_.push_back(pid);
  EXPECT_EQ(tree_->Populated("a").value(), false);
  ASSERT_TRUE(tree_->Join("a", pid).ok());
  EXPECT_EQ(*tree_->Members("a"), std::vector<int>{pid});
  EXPECT_TRUE(tree_->Kill("a").ok());
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  children_.clear();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(tree_->Describe().starts_with(GetParam() == Kind::kV2 ? "cgroup v2 at /"
                                                                    : "cgroup v1 freezer at /"))
      << tree_->Describe();
  EXPECT_TRUE(tree_->Describe().ends_with("/" + parent_)) << tree_->Describe();
}

INSTANTIATE_TEST_SUITE_P(Kinds, CgroupTest, ::testing::Values(Kind::kV2, Kind::kV1Freezer),
                         [](const auto& info) {
                           return info.param == Kind::kV2 ? "V2" : "V1Freezer";
                         });

}  // namespace
}  // namespace tiresias
