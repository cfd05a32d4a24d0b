// LiveScheduler when its journal cannot be written, on the virtual clock of
// tests/live_fixture.h. A filling disk (ServeConfig::disk, store/disk_reserve.h): nearly
// full, new jobs are refused (507 through the API) and the rest goes on; full, serve makes no
// decision and accepts no change, so it never has to stop for a journal write that cannot be
// made; with room again everything resumes. Another process holding the database's write
// lock: the same pause, not a stop. Retention: an ended job's directory goes --keep-finished
// after it ended.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "live_fixture.h"

namespace tiresias {
namespace {

// A job still waiting to launch (here for the cluster engine, its progress pinned 10 s ahead
// at a time) does not run while serve is paused either: the pause is not its service. dlas,
// 8 GPU-s first queue: A (1 GPU) starts at 0 and waits for the engine; the disk is full from
// 1 s to 5 min (pin lapsed at 10 s); with room again A is still in Q1 with no service, and it
// launches when the engine takes it at 5 min + 5 s. Before, the paused 290 s counted as its
// service at the first step with room: demoted at once.
TEST_F(LiveSchedulerTest, APauseIsNotServiceForAJobStillWaitingToLaunch) {
  constexpr int64_t kMiB = 1 << 20;
  int64_t free = 1024 * kMiB;
  ModelDisk(free);
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId a = OneJobTheEngineTakesAt(d, t0 + 305'000);
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "starting");
  world_.now = t0 + 1'000;
  free = 1 * kMiB;
  for (; world_.now < t0 + 300'000; world_.now += 1'000) d->Step();  // paused
  ASSERT_FALSE(d->Warnings().empty());
  free = 1024 * kMiB;
  d->Step();
  EXPECT_TRUE(d->Warnings().empty());
  auto ja = *d->Get(a);
  EXPECT_EQ(ja["queue"], "Q1") << ja.dump();
  EXPECT_EQ(ja["attained_gpu_s"], 0.0) << ja.dump();
  for (world_.now += 500; world_.now <= t0 + 310'000; world_.now += 500) d->Step();
  ASSERT_EQ(world_.launches.size(), 1u);
  ja = *d->Get(a);
  EXPECT_EQ(ja["state"], "finished") << ja.dump();
  EXPECT_EQ(ja["queue"], "Q1") << ja.dump();
  const auto journal = Journal(dir_ / "tiresias.db");
  EXPECT_EQ(Count(journal, EventKind::kDemote), 0);
  const auto drained = std::find_if(journal.begin(), journal.end(), [](const Event& e) {
    return e.kind == EventKind::kDrain && e.detail.value("why", "") == "serve was paused";
  });
  ASSERT_NE(drained, journal.end());
  EXPECT_EQ(drained->detail["until_ms"], drained->t);
  EXPECT_EQ(Describe(*drained),
            "not launched yet; its service counts from now at the earliest: serve was paused");
  // A replay agrees.
  d.reset();
  d = Start();
  EXPECT_EQ((*d->Get(a))["queue"], "Q1");
  EXPECT_EQ((*d->Get(a))["attained_gpu_s"], 3.0);
}

// But a wait for the engine past its 2 minutes counts service on through a pause, so that
// the policy can still move it: A (1 GPU, the engine never takes it) counts from 120 s; the
// disk is full from 125 to 127 s; A reaches 8 GPU-s and is demoted at 128 s all the same
// (drained at 127 s it would have reached them only at 135 s).
TEST_F(LiveSchedulerTest, APauseDoesNotResetTheServiceOfAnEngineWaitPastItsTwoMinutes) {
  constexpr int64_t kMiB = 1 << 20;
  int64_t free = 1024 * kMiB;
  ModelDisk(free);
  const int64_t t0 = world_.now;
  std::unique_ptr<LiveScheduler> d;
  const JobId a = OneJobTheEngineTakesAt(d, kNever);
  for (world_.now = t0; world_.now < t0 + 125'000; world_.now += 500) d->Step();
  free = 1 * kMiB;
  for (; world_.now < t0 + 127'000; world_.now += 500) d->Step();
  free = 1024 * kMiB;
  for (; world_.now <= t0 + 128'500; world_.now += 500) d->Step();
  EXPECT_EQ((*d->Get(a))["queue"], "Q2") << d->Get(a)->dump();
}

TEST_F(LiveSchedulerTest, ANearlyFullDiskRefusesNewJobsAFullOnePausesAndRoomResumesAll) {
  constexpr int64_t kMiB = 1 << 20;
  int64_t free = 1024 * kMiB;  // statvfs of the state directory, as the test says
  ModelDisk(free);
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 4, .argv = {"train"}});
  const JobId b = *d->Submit({.name = "b", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 100'000;
  world_.work[b] = 5'000;
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_EQ((*d->Get(b))["state"], "pending");  // A holds the 4 GPUs
  EXPECT_TRUE(d->Warnings().empty());

  // Nearly full (50 MiB < the 64 MiB reserve): new jobs are refused with the reason; holds
  // and scheduling go on. The warning anyone can read does not name the directory.
  free = 50 * kMiB;
  d->Step();
  auto refused = d->Submit({.name = "d", .gpus = 1, .argv = {"train"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("new jobs are refused until 128.0 MiB are free"),
            std::string::npos)
      << refused.status().message();
  ASSERT_EQ(d->Warnings().size(), 1u);
  EXPECT_EQ(d->Warnings().front().find(dir_.string()), std::string::npos);
  EXPECT_TRUE(d->Hold(b, true).ok());
  EXPECT_TRUE(d->Hold(b, false).ok());

  // Full (1 MiB): a cancel whose row can still be written goes through and stops the job (it
  // may be the one filling the disk); it ignores SIGTERM, and its grace period ends while
  // serve is paused: SIGKILL all the same. B does not start on the freed GPUs: no decision
  // is made while nothing can be journalled.
  free = 1 * kMiB;
  world_.ignore_term = true;
  d->Step();
  ASSERT_TRUE(d->Cancel(a).ok());
  EXPECT_EQ((*d->Get(a))["state"], "cancelled");
  world_.now += 31'000;  // past the 30 s grace
  d->Step();
  int killed = 0;
  for (const auto& [pid, p] : world_.procs) killed += p.job == a && p.sig == 9;
  EXPECT_EQ(killed, 1);
  d->Step();
  EXPECT_EQ((*d->Get(b))["state"], "pending");
  EXPECT_EQ(world_.launches.size(), 1u);  // A's only
  ASSERT_EQ(d->Warnings().size(), 1u);
  EXPECT_NE(d->Warnings().front().find("makes no decision and accepts no new job until 4.0 MiB "
                                       "are free"),
            std::string::npos)
      << d->Warnings().front();
  EXPECT_EQ(d->Submit({.name = "e", .gpus = 1, .argv = {"train"}}).status().code(),
            StatusCode::kResourceExhausted);

  // Room again (200 MiB): B starts, and new jobs are accepted.
  free = 200 * kMiB;
  d->Step();
  d->Step();
  EXPECT_EQ((*d->Get(b))["state"], "running");
  EXPECT_TRUE(d->Warnings().empty());
  EXPECT_TRUE(d->Submit({.name = "d", .gpus = 1, .argv = {"train"}}).ok());
}

// The state directory moved away under serve (found by a tester: removed, it went unnoticed,
// /v1/health said ok and every decision after it was written to a deleted file): serve
// decides nothing, refuses requests with the path and says so in its warnings; moved back,
// it goes on, and a restart replays what was decided. Replaced by another file: the same.
TEST_F(LiveSchedulerTest, AJournalMovedFromItsPathPausesServeUntilItIsBack) {
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 10'000;
  const auto db = dir_ / "tiresias.db";
  const auto aside = dir_ / "tiresias.db.aside";
  std::filesystem::rename(db, aside);
  auto refused = d->Submit({.name = "b", .gpus = 1, .argv = {"train"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find(db.string() + ": the journal is gone from its path"),
            std::string::npos)
      << refused.status().message();
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "pending");
  EXPECT_TRUE(world_.launches.empty());
  ASSERT_EQ(d->Warnings().size(), 1u);
  EXPECT_NE(d->Warnings().front().find("the journal is no longer at its path"), std::string::npos)
      << d->Warnings().front();
  EXPECT_EQ(d->Warnings().front().find(dir_.string()), std::string::npos);  // health: no path

  std::filesystem::rename(aside, db);
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_TRUE(d->Warnings().empty());

  // Another file in its place (a copy of it restored over it): not the journal open.
  std::filesystem::copy_file(db, aside);
  std::filesystem::rename(aside, db);
  EXPECT_EQ(d->Cancel(a).code(), StatusCode::kUnavailable);
  d->Step();
  ASSERT_EQ(d->Warnings().size(), 1u);
  d.reset();  // a restart opens the file now at the path and goes on from it
  d = Start();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_EQ(d->List().size(), 1u);  // b was never stored
  d->Step();
  EXPECT_TRUE(d->Warnings().empty());
}

// Moved while a launch forks (between its two commits; found by a review): what was started
// is recorded all the same, in the file open, and the next step pauses. (It stopped serve.)
TEST_F(LiveSchedulerTest, AJournalMovedDuringALaunchStillRecordsWhatStarted) {
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  world_.work[a] = 10'000;
  const auto db = dir_ / "tiresias.db", aside = dir_ / "aside.db";
  world_.on_launch = [&] { std::filesystem::rename(db, aside); };
  d->Step();
  world_.on_launch = nullptr;
  EXPECT_EQ((*d->Get(a))["state"], "running");
  ASSERT_EQ(world_.launches.size(), 1u);
  world_.now += 1'000;
  d->Step();
  ASSERT_EQ(d->Warnings().size(), 1u);
  std::filesystem::rename(aside, db);
  d.reset();
  d = Start();  // the launch is in the journal: the run is adopted, not started again
  EXPECT_EQ((*d->Get(a))["attempt"], 0);
  EXPECT_EQ(world_.launches.size(), 1u);
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
  ASSERT_EQ(d->Warnings().size(), 1u);
  EXPECT_NE(d->Warnings().front().find("locked by another process"), std::string::npos);

  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  d->Step();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_TRUE(d->Warnings().empty());
  EXPECT_EQ(d->List().size(), 1u);  // b was never stored
  d.reset();                        // and a restart replays the same
  d = Start();
  EXPECT_EQ((*d->Get(a))["state"], "running");
  EXPECT_EQ(d->List().size(), 1u);
}

TEST_F(LiveSchedulerTest, AnEndedJobsDirectoryIsRemovedKeepFinishedAfterItEndedAndNotBefore) {
  // serve --keep-finished 10s. Jobs a and k (1 GPU, 2 s of work each; k asked to keep its
  // checkpoints) run from 0 and end at 2 s. Their directories (made here, as the executor
  // makes them) are there until 12 s; then a's is removed, journalled, and its log says why;
  // k's stays. A restart finds ended jobs' directories again: b ends at 13 s, serve is
  // restarted at 14 s, and b's directory goes at 23 s, not before. A directory is renamed in
  // the step and removed off it (a TreeReaper: checkpoints can be large).
  keep_finished_ = Seconds(10);
  const int64_t t0 = world_.now;
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  const JobId k = *d->Submit({.name = "k", .gpus = 1, .argv = {"train"}, .keep_checkpoints = true});
  // A job that never ran (cancelled while held) never had a log: none was removed.
  const JobId never = *d->Submit({.name = "never", .gpus = 1, .argv = {"train"}, .hold = true});
  ASSERT_TRUE(d->Cancel(never).ok());
  const auto dir = [&](JobId id) { return dir_ / "tiresias-jobs" / id.str(); };
  for (JobId id : {a, k}) {
    world_.work[id] = 2'000;
    std::filesystem::create_directories(dir(id) / "checkpoint");
    std::ofstream(dir(id) / "output.log") << "epoch 1\n";
  }
  const auto step_to = [&](int64_t ms) {
    for (; world_.now < t0 + ms; world_.now += 100) d->Step();
    d->Step();
  };
  step_to(11'900);
  ASSERT_EQ((*d->Get(a))["state"], "finished");
  EXPECT_TRUE(std::filesystem::exists(dir(a)));
  LiveScheduler::LogCursor next;
  EXPECT_EQ(*d->Logs(a, {}, 1 << 20, next), "epoch 1\n");
  EXPECT_EQ(*d->Logs(a, {}, 1 << 20, next, false, 1), "epoch 1\n");
  // No lines (as tail -n 0), the cursor at the end: 0 was read as "not given", the whole log.
  EXPECT_EQ(*d->Logs(a, {}, 1 << 20, next, false, 0), "");
  EXPECT_EQ(next.offset, 8);
  step_to(12'100);
  EXPECT_FALSE(std::filesystem::exists(dir(a)));  // renamed at once, removed off the loop
  const auto renamed = [&](JobId id) { return dir_ / "tiresias-jobs" / (".removed-" + id.str()); };
  const auto gone_soon = [](const std::filesystem::path& p) {  // the reaper's thread
    for (int i = 0; i < 1000 && std::filesystem::exists(p); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return !std::filesystem::exists(p);
  };
  EXPECT_TRUE(gone_soon(renamed(a)));
  EXPECT_TRUE(std::filesystem::exists(dir(k) / "checkpoint"));
  auto log = d->Logs(a, {}, 1 << 20, next);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), StatusCode::kNotFound);
  EXPECT_NE(log.status().message().find("its log was removed with its directory 10s after "
                                        "it ended (serve --keep-finished)"),
            std::string::npos)
      << log.status().message();
  const std::string events = d->Events(0, 1000, a)->dump();
  EXPECT_NE(events.find("\"cleanup\""), std::string::npos) << events;
  auto never_log = d->Logs(never, {}, 1 << 20, next);  // it said "its log was removed"
  ASSERT_TRUE(never_log.ok()) << never_log.status().message();
  EXPECT_EQ(*never_log, "");
  EXPECT_EQ((*d->Get(a))["state"], "finished");  // the record stays
  // Across a restart.
  const JobId b = *d->Submit({.name = "b", .gpus = 1, .argv = {"train"}});
  world_.work[b] = 1'000;
  std::filesystem::create_directories(dir(b));
  step_to(13'500);
  ASSERT_EQ((*d->Get(b))["state"], "finished");
  d.reset();
  // What a serve stopped before its reaper was done left renamed goes at the next start.
  std::filesystem::create_directories(renamed(JobId(99)) / "checkpoint");
  world_.now = t0 + 14'000;
  d = Start();
  EXPECT_TRUE(gone_soon(renamed(JobId(99))));
  step_to(22'900);
  EXPECT_TRUE(std::filesystem::exists(dir(b)));
  step_to(24'000);
  EXPECT_FALSE(std::filesystem::exists(dir(b)));
  EXPECT_TRUE(std::filesystem::exists(dir(k)));
}

TEST_F(LiveSchedulerTest, AFullDiskStillLosesTheEndedJobsDirectoriesDueAndServeGoesOnWithTheRoom) {
  // serve --keep-finished 10s. Job a (1 GPU, 2 s of work) ends at 2 s and leaves a large
  // directory (here: the disk has 1 MiB free while it exists, 200 MiB once it is gone). The
  // disk is full from 5 s: serve pauses and makes no decision, so b (submitted before) waits.
  // At 12 s a's directory is due: it goes all the same, while paused, since that is what frees
  // the room; its `cleanup` row is journalled by the first step that can write, and b starts.
  // Before, a full disk stopped retention too: serve stayed paused with the room it needed
  // due for removal.
  keep_finished_ = Seconds(10);
  const int64_t t0 = world_.now;
  bool full = false;
  const auto dir = [&](JobId id) { return dir_ / "tiresias-jobs" / id.str(); };
  JobId a;
  disk_ = std::make_shared<DiskReserve>(
      (dir_ / "tiresias.reserve").string(), int64_t{64} << 20,
      [&]() -> StatusOr<int64_t> {
        const bool big = a.value() >= 0 && std::filesystem::exists(dir(a));
        return full && big ? int64_t{1} << 20 : int64_t{200} << 20;
      },
      0);
  auto d = Start();
  a = *d->Submit({.name = "a", .gpus = 4, .argv = {"train"}});
  world_.work[a] = 2'000;
  std::filesystem::create_directories(dir(a) / "checkpoint");
  const auto step_to = [&](int64_t ms) {
    for (; world_.now < t0 + ms; world_.now += 100) d->Step();
    d->Step();
  };
  step_to(4'000);
  ASSERT_EQ((*d->Get(a))["state"], "finished");
  const JobId b = *d->Submit({.name = "b", .gpus = 4, .argv = {"train"}});
  world_.work[b] = 100'000;
  full = true;
  step_to(11'900);
  EXPECT_TRUE(std::filesystem::exists(dir(a)));
  ASSERT_EQ(d->Warnings().size(), 1u);
  EXPECT_EQ((*d->Get(b))["state"], "pending");
  std::string events = d->Events(0, 1000, a)->dump();
  EXPECT_EQ(events.find("\"cleanup\""), std::string::npos) << events;
  step_to(12'100);
  EXPECT_FALSE(std::filesystem::exists(dir(a)));
  step_to(13'000);
  EXPECT_TRUE(d->Warnings().empty());
  EXPECT_EQ((*d->Get(b))["state"], "running");
  events = d->Events(0, 1000, a)->dump();
  EXPECT_NE(events.find("\"cleanup\""), std::string::npos) << events;
}

TEST_F(LiveSchedulerTest, ACancelOfManyJobsIsOneTransactionAllOrNone) {
  // Regression (an exploratory test): a cancel of an array's 10,000 tasks wrote each in a
  // transaction of its own (2.4 s under the lock), and a kill -9 meanwhile left most of them
  // pending, though the client was told nothing was done. Now one transaction: a write that
  // fails half-way (here a trigger refuses task 3's row) cancels none of them; once it can
  // be written, all (a task named twice once, one already ended refused with its reason).
  auto d = Start();
  std::vector<JobId> tasks;
  ASSERT_TRUE(
      d->Submit({.name = "arr", .gpus = 1, .argv = {"train"}, .array = "0-4", .hold = true}, &tasks)
          .ok());
  ASSERT_EQ(tasks.size(), 5u);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "tiresias.db").c_str(), &other), SQLITE_OK);
  const std::string trigger = fmt::format(
      "CREATE TRIGGER refuse BEFORE UPDATE ON jobs WHEN NEW.id = {} BEGIN SELECT "
      "RAISE(ABORT, 'refused by a test'); END",
      tasks[3].value());
  ASSERT_EQ(sqlite3_exec(other, trigger.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  std::vector<Status> out = d->Cancel(tasks);
  for (size_t k = 0; k < tasks.size(); ++k) {
    EXPECT_FALSE(out[k].ok()) << k;
    EXPECT_EQ((*d->Get(tasks[k]))["state"], "pending") << k;
  }
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kCancel), 0);
  ASSERT_EQ(sqlite3_exec(other, "DROP TRIGGER refuse", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  ASSERT_TRUE(d->Cancel(tasks[0]).ok());
  std::vector<JobId> again = tasks;
  again.push_back(tasks[2]);
  out = d->Cancel(again);
  EXPECT_EQ(out[0].message(), fmt::format("job {}: already cancelled", tasks[0].value()));
  for (size_t k = 1; k < again.size(); ++k) EXPECT_TRUE(out[k].ok()) << k;
  EXPECT_EQ(Count(Journal(dir_ / "tiresias.db"), EventKind::kCancel), 5);
  d.reset();
  d = Start();  // a replay agrees
  for (JobId t : tasks) EXPECT_EQ((*d->Get(t))["state"], "cancelled");
}

}  // namespace
// A log reader's cursor across rotations (serve --max-log-size), by hand: the rest of the
// rotated file first, then the new one from its start; a log deleted and made anew is read
// from its start, and an older output.log.1 (already read) is not read again (found by a
// review: it was); a path the user chose is never looked for as PATH.1.
TEST_F(LiveSchedulerTest, ALogReadersCursorFollowsRotationsWithoutLossOrRepeats) {
  auto d = Start();
  const JobId a = *d->Submit({.name = "a", .gpus = 1, .argv = {"train"}});
  const auto log = dir_ / "tiresias-jobs" / a.str() / "output.log";
  std::filesystem::create_directories(log.parent_path());
  std::ofstream(log) << "one\n";
  LiveScheduler::LogCursor at, next;
  auto read = [&] {
    auto text = d->Logs(a, at, 1 << 20, next);
    EXPECT_TRUE(text.ok()) << text.status().message();
    at = next;
    return text.ok() ? *text : std::string();
  };
  EXPECT_EQ(read(), "one\n");
  std::ofstream(log, std::ios::app) << "two\n";
  // Rotated: output.log -> output.log.1, and a new log that grows past the cursor's offset.
  std::filesystem::rename(log, log.string() + ".1");
  std::ofstream(log) << "three-and-more\n";
  EXPECT_EQ(read(), "two\n");  // the rest of the rotated file
  EXPECT_EQ(read(), "three-and-more\n");
  EXPECT_EQ(read(), "");
  // Deleted by hand and made anew: output.log.1 (read already) is not read again; that it is
  // another file than the reader's cannot tell this from two rotations, so the notice says
  // "may".
  std::filesystem::remove(log);
  std::ofstream(log) << "four\n";
  EXPECT_EQ(read(),
            "==== tiresias: output may be missing here: the log was rotated (serve "
            "--max-log-size) or removed more than once since the last read ====\nfour\n");
  // Truncated in place: read again from its start.
  std::ofstream(log, std::ios::trunc) << "5\n";
  EXPECT_EQ(read(), "5\n");
  // Between a rotation's rename and the new log: the rotated file holds the output.
  std::filesystem::rename(log, log.string() + ".1");
  EXPECT_EQ(read(), "");
  std::ofstream(log) << "six\n";
  EXPECT_EQ(read(), "six\n");
  // Two rotations behind: the reader's file is gone; the new log from its start (what was in
  // between is not guessed at).
  std::ofstream(log, std::ios::app) << "six-more\n";
  std::filesystem::rename(log, log.string() + ".1");
  std::ofstream(log) << "seven\n";
  std::filesystem::rename(log, log.string() + ".1");
  std::ofstream(log) << "eight\n";
  EXPECT_EQ(read(),
            "==== tiresias: output may be missing here: the log was rotated (serve "
            "--max-log-size) or removed more than once since the last read ====\neight\n");
  EXPECT_EQ(read(), "");  // (said once)
  // A FIFO in the log's place is refused, not waited on.
  std::filesystem::remove(log);
  ASSERT_EQ(mkfifo(log.c_str(), 0600), 0);
  auto fifo = d->Logs(a, {}, 1 << 20, next);
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("is a pipe or a socket"), std::string::npos);
  // A device (a job's --output /dev/null) shows nothing, as an empty log (found by a review).
  std::filesystem::remove(log);
  std::filesystem::create_symlink("/dev/null", log);
  auto device = d->Logs(a, {}, 1 << 20, next);
  ASSERT_TRUE(device.ok()) << device.status().message();
  EXPECT_EQ(*device, "");
}

}  // namespace tiresias
