// LiveScheduler when its journal cannot be written, on the virtual clock of
// tests/live_fixture.h. A filling disk (ServeConfig::disk, store/disk_reserve.h): nearly
// full, new jobs are refused (507 through the API) and the rest goes on; full, serve makes no
// decision and accepts no change, so it never has to stop for a journal write that cannot be
// made; with room again everything resumes. Another process holding the database's write
// lock: the same pause, not a stop.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "live_fixture.h"

namespace tiresias {
namespace {

TEST_F(LiveSchedulerTest, ANearlyFullDiskRefusesNewJobsAFullOnePausesAndRoomResumesAll) {
  constexpr int64_t kMiB = 1 << 20;
  int64_t free = 1024 * kMiB;  // statvfs of the state directory, as the test says
  disk_ = std::make_shared<DiskReserve>((dir_ / "tiresias.reserve").string(), 64 * kMiB,
                                        [&]() -> StatusOr<int64_t> { return free; });
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 4, .argv = {"train"}});
  const JobId b = *d->Submit({.name = "b", .gpus = 4, .argv = {"train"}});
  const JobId c = *d->Submit({.name = "c", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 10'000;
  world_.work[b] = world_.work[c] = 5'000;
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_TRUE(d->Warnings().empty());

  // Nearly full (50 MiB < the 64 MiB reserve): new jobs are refused with the reason; holds,
  // cancels and scheduling go on.
  free = 50 * kMiB;
  d->Step();
  auto refused = d->Submit({.name = "d", .gpus = 1, .argv = {"train"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("new jobs are refused until 128.0 MiB are free"),
            std::string::npos)
      << refused.status().message();
  ASSERT_EQ(d->Warnings().size(), 1u);
  EXPECT_TRUE(d->Hold(c, true).ok());
  EXPECT_TRUE(d->Hold(c, false).ok());

  // Full (1 MiB): A's end is not taken in, B does not start, nothing changes: a cancel is
  // refused too. The jobs' processes run on.
  free = 1 * kMiB;
  world_.now += 10'000;  // A's process has ended
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");  // not yet known: nothing can be journalled
  EXPECT_EQ((*d->Get(b))["state"], "pending");
  const Status cancel = d->Cancel(c);
  EXPECT_EQ(cancel.code(), StatusCode::kResourceExhausted) << cancel.message();
  EXPECT_EQ(d->Hold(c, true).code(), StatusCode::kResourceExhausted);
  EXPECT_NE(d->Warnings().front().find("accepts no changes until 4.0 MiB are free"),
            std::string::npos)
      << d->Warnings().front();

  // Room again (200 MiB): A finishes, B starts, and new jobs are accepted.
  free = 200 * kMiB;
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "finished");
  d->Step();
  EXPECT_EQ((*d->Get(b))["state"], "running");
  EXPECT_TRUE(d->Warnings().empty());
  EXPECT_TRUE(d->Submit({.name = "d", .gpus = 1, .argv = {"train"}}).ok());
  EXPECT_TRUE(d->Cancel(c).ok());
}

TEST_F(LiveSchedulerTest, AnotherProcessHoldingTheJournalsLockPausesServeInsteadOfStoppingIt) {
  // Before, a step whose transaction could not begin (SQLITE_BUSY past the 5 s timeout, here
  // 20 ms) wrote its rows without one and then stopped serve (abort). Now: a submission is
  // refused with the reason and nothing is stored; the step decides nothing; once the lock
  // is released the waiting job starts.
  store_opts_.busy_timeout_ms = 20;
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 10'000;
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "tiresias.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);

  auto refused = d->Submit({.name = "b", .gpus = 1, .argv = {"train"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("database is locked"), std::string::npos)
      << refused.status().message();
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "pending");
  EXPECT_TRUE(world_.launches.empty());

  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_EQ(d->List().size(), 1u);  // b was never stored
  d.reset();                        // and a restart replays the same
  d = Start();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_EQ(d->List().size(), 1u);
}

}  // namespace
}  // namespace tiresias
