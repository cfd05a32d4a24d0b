// Tests of DiskReserve (store/disk_reserve.h) on a modelled file system: the reserve file is
// released when the free space drops under its size, made again at twice its size, and the
// reserve says "full" (serve pauses) under kJournalRoom; and on a real small file system, the
// journal's WAL keeps room allocated ahead, so commits go on after others filled the disk.
#include "store/disk_reserve.h"

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "store/store.h"
#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

TEST(DiskReserve, ReleasedWhenLowMadeAgainAtTwiceItsSizeAndFullUnderTheJournalsRoom) {
  const fs::path dir = testing::ScratchDir("disk_reserve");
  const std::string file = (dir / "tiresias.reserve").string();
  constexpr int64_t kMiB = 1 << 20;
  // A 1 GiB disk: what others use plus the reserve file's blocks, as statvfs would see it.
  int64_t others = 0;
  auto free = [&]() -> StatusOr<int64_t> {
    struct stat st {};
    const int64_t reserve = stat(file.c_str(), &st) == 0 ? st.st_blocks * 512 : 0;
    return 1024 * kMiB - others - reserve;
  };
  DiskReserve r(file, 64 * kMiB, free, /*check_every_ms=*/0);

  // Plenty of room: the 64 MiB reserve is made, 960 MiB left.
  EXPECT_FALSE(r.Check().changed);
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(r.free_bytes(), 960 * kMiB);
  EXPECT_FALSE(r.low());

  // Others take 900 MiB: 60 MiB free < 64: released (124 MiB free), low; not full.
  others = 900 * kMiB;
  auto c = r.Check();
  EXPECT_TRUE(c.changed);
  EXPECT_NE(c.message.find("nearly full (60.0 MiB free): released the 64.0 MiB"), std::string::npos)
      << c.message;
  EXPECT_FALSE(fs::exists(file));
  EXPECT_TRUE(r.low());
  EXPECT_FALSE(r.full());
  EXPECT_EQ(r.free_bytes(), 124 * kMiB);
  EXPECT_NE(r.LowReason().find("new jobs are refused until 128.0 MiB are free"), std::string::npos);

  // 127 MiB free: still low (twice the reserve is 128), no file made.
  others = 897 * kMiB;
  EXPECT_FALSE(r.Check().changed);
  EXPECT_TRUE(r.low());
  EXPECT_FALSE(fs::exists(file));

  // Others take all but 3 MiB (< kJournalRoom, 4 MiB): full.
  others = 1021 * kMiB;
  c = r.Check();
  EXPECT_TRUE(c.changed);
  EXPECT_TRUE(r.full());
  EXPECT_NE(c.message.find("serve pauses"), std::string::npos) << c.message;
  EXPECT_NE(r.LowReason().find("makes no decision until 4.0 MiB"), std::string::npos)
      << r.LowReason();

  // 128 MiB free: the reserve is made again (64 left), neither low nor full.
  others = 896 * kMiB;
  c = r.Check();
  EXPECT_TRUE(c.changed);
  EXPECT_FALSE(r.low());
  EXPECT_FALSE(r.full());
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(r.free_bytes(), 64 * kMiB);

  // Deleted by hand: made again at the next look.
  fs::remove(file);
  EXPECT_FALSE(r.Check().changed);
  EXPECT_TRUE(fs::exists(file));

  // Release (serve stops on a failed write): the file goes.
  r.Release();
  EXPECT_FALSE(fs::exists(file));
  fs::remove_all(dir);
}

// No reserve file and never low, but full (serve pauses) under the journal's room all the same:
// it was never full, and a full disk stopped serve at its next write (found by a tester).
TEST(DiskReserve, SizeZeroIsNoReserveAndNeverLowButFullStillPauses) {
  const fs::path dir = testing::ScratchDir("disk_reserve0");
  int64_t free = 0;
  DiskReserve r((dir / "tiresias.reserve").string(), 0, [&] { return StatusOr<int64_t>(free); }, 0);
  const auto c = r.Check();
  EXPECT_TRUE(c.changed);
  EXPECT_NE(c.message.find("serve pauses"), std::string::npos) << c.message;
  EXPECT_FALSE(r.low());
  EXPECT_TRUE(r.full());
  EXPECT_NE(r.LowReason().find("accepts new jobs when 4.0 MiB are"), std::string::npos)
      << r.LowReason();
  EXPECT_FALSE(fs::exists(dir / "tiresias.reserve"));
  free = 100 << 20;
  EXPECT_TRUE(r.Check().changed);
  EXPECT_FALSE(r.full());
  EXPECT_FALSE(fs::exists(dir / "tiresias.reserve"));
  fs::remove_all(dir);
}

// A job fills the disk between two looks at it (on a fast disk, megabytes in a millisecond):
// serve's next commits still fit, in the room its WAL holds past its end. Before, the commit
// failed (SQLITE_FULL) and serve stopped.
TEST(DiskReserve, TheJournalsCommitsFitInTheRoomItsWalHoldsWhenOthersFillTheDisk) {
  const fs::path dir = testing::ScratchDir("disk_reserve_wal");
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=24m,mode=0700") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  struct Unmount {
    fs::path dir;
    ~Unmount() {
      umount2(dir.c_str(), MNT_DETACH);
      fs::remove_all(dir);
    }
  } unmount{dir};
  constexpr int64_t kMiB = 1 << 20;
  auto store = Store::Open((dir / "tiresias.db").string(), 0);
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE((*store)->SetMeta("first", "x").ok());  // the WAL exists
  DiskReserve r((dir / "tiresias.reserve").string(), 8 * kMiB, nullptr, /*check_every_ms=*/0);
  r.KeepRoomIn({(dir / "tiresias.db-wal").string()});
  r.Check();
  EXPECT_FALSE(r.low());
  EXPECT_FALSE(r.full());

  {  // Another writer takes every block left.
    std::ofstream filler(dir / "filler", std::ios::binary);
    const std::vector<char> mib(kMiB, 'z');
    while (filler.write(mib.data(), static_cast<std::streamsize>(mib.size()))) filler.flush();
  }
  std::ofstream probe(dir / "probe", std::ios::binary);
  EXPECT_FALSE(probe.write("p", 1).flush()) << "the disk is not full";

  // Steps' worth of journal, 2 MiB in all (half the room), commit after commit.
  const std::string row(256 * 1024, 'j');
  for (int i = 0; i < 8; ++i) {
    const Status s = (*store)->SetMeta("row" + std::to_string(i), row);
    ASSERT_TRUE(s.ok()) << "commit " << i << ": " << s.message();
  }
}

}  // namespace
}  // namespace tiresias
