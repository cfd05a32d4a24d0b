// A real `tiresias serve` on a file system that fills up (store/disk_reserve.h,
// exec/log_pump.h): a 64 MiB tmpfs mounted for the test (root only; skipped elsewhere).
// Before, a job whose output filled the state directory's disk stopped serve (a journal write
// failed) and serve could not start again until someone freed space.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/client.h"
#include "common/free_space.h"
#include "serve_process.h"
#include "test_util.h"

namespace tiresias {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::WaitFor;

class DiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::ScratchDir("diskfull");
    if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
    if (mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64m,mode=0700") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
    }
    mounted_ = true;
    serve_ = std::make_unique<testing::ServeProcess>(
        dir_, std::vector<std::string>{"--gpus", "2", "--disk-reserve", "8MiB"});
    serve_->Start();
  }
  void TearDown() override {
    if (serve_) {
      for (int64_t id : jobs_) (void)serve_->Client().Delete("/v1/jobs/" + std::to_string(id));
      WaitFor(
          [&] {  // the jobs' processes are gone before the file system is
            for (int64_t id : jobs_) {
              const auto j = serve_->GetJob(id);
              if (j.is_null() || j["state"] == "running" || j["state"] == "preempting")
                return false;
            }
            return true;
          },
          20s);
      serve_.reset();
    }
    if (mounted_) umount2(dir_.c_str(), MNT_DETACH);
    fs::remove_all(dir_);
    if (!stop_dir_.empty()) fs::remove_all(stop_dir_);
  }
  int64_t Submit(const std::string& script) {
    auto id = serve_->SubmitJob({{"argv", {"sh", "-c", script}}, {"gpus", 1}});
    EXPECT_TRUE(id.ok()) << id.status().message();
    if (id.ok()) jobs_.push_back(*id);
    return id.ok() ? *id : -1;
  }
  std::string Health() {
    auto h = serve_->Client().GetJson("/v1/health");
    return h.ok() ? h->dump() : "unreachable: " + h.status().message();
  }

  fs::path dir_, stop_dir_;
  bool mounted_ = false;
  std::unique_ptr<testing::ServeProcess> serve_;
  std::vector<int64_t> jobs_;
};

TEST_F(DiskFullTest, AnEndlessLogStopsShortOfTheJournalsRoomAndAFullDiskPausesServeUntilFreed) {
  constexpr int64_t kMiB = 1 << 20;
  // A job that writes without end: its log stops growing while less than twice the reserve
  // (16 MiB) is free, with a line saying so; serve goes on and runs the next job.
  const int64_t endless = Submit("yes 0123456789abcdef");
  const fs::path log = dir_ / "tiresias-jobs" / std::to_string(endless) / "output.log";
  ASSERT_TRUE(WaitFor(
      [&] {
        return testing::ReadAll(log).find("the disk of this log is nearly full") !=
               std::string::npos;
      },
      20s))
      << "log of " << fs::file_size(log) << " bytes";
  auto free = FreeBytesOn(dir_.string());
  ASSERT_TRUE(free.ok());
  // 16 MiB kept, less up to 2 MiB (keep_free / 8) written between two looks of the shim and
  // what serve wrote since; well above the 8 MiB reserve, so serve is not even low.
  EXPECT_GE(*free, 13 * kMiB);
  const int64_t quick = Submit("echo quick");
  ASSERT_TRUE(WaitFor([&] { return serve_->GetJob(quick)["state"] == "finished"; }, 20s))
      << serve_->GetJob(quick).dump();
  EXPECT_EQ(Health(), R"({"ok":true})");

  // The endless writer is cancelled, and its log removed.
  ASSERT_TRUE(serve_->Client().Delete("/v1/jobs/" + std::to_string(endless)).ok());
  ASSERT_TRUE(WaitFor([&] { return serve_->GetJob(endless)["state"] == "cancelled"; }, 20s));
  fs::remove(log);

  // A job that fills the disk itself (its checkpoint) and keeps filling what is freed, until
  // told to stop: serve releases its reserve, which the job eats too, then has no room at all
  // and pauses; it stays up and says why, changes are refused (507) until there is room, and
  // then it goes on.
  stop_dir_ = testing::ScratchDir("diskfull_stop");
  const fs::path stop = stop_dir_ / "stop";
  Submit(fmt::format(
      "while [ ! -e {0} ]; do cat /dev/zero >> \"$TIRESIAS_CHECKPOINT_DIR/big\"; sleep 0.05; "
      "done; rm \"$TIRESIAS_CHECKPOINT_DIR/big\"; sleep 600",
      stop.string()));
  ASSERT_TRUE(WaitFor([&] { return Health().find("is full") != std::string::npos; }, 20s))
      << Health() << "\n--- serve's output\n"
      << testing::ReadAll(dir_ / "serve.out");
  auto refused = serve_->SubmitJob({{"argv", {"true"}}, {"gpus", 1}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("is full"), std::string::npos)
      << refused.status().message();
  const auto cli =
      testing::RunTiresias(fmt::format("submit --state-dir {} -- true", dir_.string()));
  EXPECT_NE(cli.rc, 0);
  EXPECT_NE(cli.out.find("makes no decision until 4.0 MiB are free"), std::string::npos) << cli.out;

  std::ofstream(stop.string()) << "stop\n";
  ASSERT_TRUE(WaitFor([&] { return Health() == R"({"ok":true})"; }, 20s)) << Health();
  const int64_t after = Submit("echo after");
  ASSERT_TRUE(WaitFor([&] { return serve_->GetJob(after)["state"] == "finished"; }, 20s))
      << serve_->GetJob(after).dump();
}

}  // namespace
}  // namespace tiresias
