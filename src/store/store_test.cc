// Store: a database of another schema version is refused with a message that says what to
// do; a journal that was altered, or lost committed rows (WAL deleted, database truncated or
// replaced), is refused with the recovery choices unless the loss is accepted, and job ids
// are never given out twice; a journal row of an unknown kind or with a detail that is not
// JSON is an error naming its seq, never replayed wrong or skipped.
#include "store/store.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace tiresias {
namespace {

namespace fs = std::filesystem;

void Sql(const fs::path& db, const char* sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

TEST(Store, NewDatabaseRecordsItsSchemaAndReopens) {
  fs::path dir = testing::ScratchDir("store_new");
  auto s = Store::Open((dir / "t.db").string(), 1000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->GetMeta("schema"), std::to_string(Store::kSchemaVersion));
  ASSERT_TRUE(
      (*s)->AppendEvent(
              {.t = 5, .kind = EventKind::kDrain, .job = JobId(3), .detail = {{"until_ms", 9}}})
          .ok());
  s->reset();
  auto again = Store::Open((dir / "t.db").string(), 2000);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->epoch_ms(), 1000);
  auto rows = (*again)->LoadEvents(0, 0, /*inputs_only=*/true);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].event.kind, EventKind::kDrain);
  EXPECT_EQ((*rows)[0].event.detail["until_ms"], 9);
  fs::remove_all(dir);
}

TEST(Store, AReaderBesideServeChangesNothing) {
  // whatif opens serve's live database: read only, it neither writes the journal's head nor
  // upgrades an older schema (a review: a new CLI upgraded a running older serve's database).
  fs::path dir = testing::ScratchDir("store_reader");
  const std::string db = (dir / "t.db").string();
  ASSERT_TRUE(Store::Open(db, 1000).ok());
  fs::remove(JournalHeadPath(db));
  auto reader = Store::Open(db, 2000, {.read_only = true});
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ((*reader)->epoch_ms(), 1000);
  EXPECT_TRUE((*reader)->LoadJobs().ok());
  EXPECT_FALSE((*reader)->AppendEvent({.t = 5, .kind = EventKind::kTick}).ok());
  reader->reset();
  EXPECT_FALSE(fs::exists(JournalHeadPath(db)));
  Sql(dir / "t.db",
      "ALTER TABLE jobs DROP COLUMN stop_sent; UPDATE meta SET value = '5' WHERE "
      "key = 'schema';");
  auto old = Store::Open(db, 2000, {.read_only = true});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("schema 5, and this build reads schema"), std::string::npos)
      << old.status().message();
  sqlite3* raw = nullptr;  // still schema 5
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT value FROM meta WHERE key = 'schema'", -1, &q, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)), "5");
  sqlite3_finalize(q);
  sqlite3_close(raw);
  fs::remove_all(dir);
}

TEST(Store, RefusesADatabaseOfAnotherSchema) {
  fs::path dir = testing::ScratchDir("store_old");
  // Schema 1: a meta table with an epoch and no version, jobs without the gpus column.
  Sql(dir / "old.db",
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES('epoch_ms', '5');");
  auto s = Store::Open((dir / "old.db").string(), 1000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("older tiresias (schema 1)"), std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("--state-dir"), std::string::npos);

  Sql(dir / "new.db",
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO meta VALUES('epoch_ms', '5'); INSERT INTO meta VALUES('schema', '9');");
  s = Store::Open((dir / "new.db").string(), 1000);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("schema 9"), std::string::npos) << s.status().message();
  fs::remove_all(dir);
}

TEST(Store, OlderSchemasAreUpgradedInPlaceAndTheirNewColumnsRoundTrip) {
  fs::path dir = testing::ScratchDir("store_v2");
  const fs::path db = dir / "t.db";
  {
    auto s = Store::Open(db.string(), 1000);
    ASSERT_TRUE(s.ok()) << s.status().message();
    JobRecord r{.name = "a", .gpus = 2};
    ASSERT_TRUE((*s)->InsertJob(r).ok());
    r.engine_job = "17";
    r.nodes = {"node3", "node4"};
    ASSERT_TRUE((*s)->UpdateJob(r).ok());
    auto jobs = (*s)->LoadJobs();
    ASSERT_TRUE(jobs.ok());
    EXPECT_EQ((*jobs)[0].engine_job, "17");
    EXPECT_EQ((*jobs)[0].nodes, (std::vector<std::string>{"node3", "node4"}));
  }
  // What schema 2 looked like: no engine, kills, held or lost columns (all come back with
  // their defaults).
  Sql(db,
      "ALTER TABLE jobs DROP COLUMN engine; ALTER TABLE jobs DROP COLUMN kills; ALTER TABLE jobs "
      "DROP COLUMN held; ALTER TABLE jobs DROP COLUMN lost; UPDATE meta SET value = '2' WHERE "
      "key = 'schema';");
  auto s = Store::Open(db.string(), 2000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->GetMeta("schema"), std::to_string(Store::kSchemaVersion));
  auto jobs = (*s)->LoadJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].lost, 0);
  // Schema 3 (this build's but the lost column): upgraded too, and lost round-trips.
  s->reset();
  Sql(db, "ALTER TABLE jobs DROP COLUMN lost; UPDATE meta SET value = '3' WHERE key = 'schema';");
  s = Store::Open(db.string(), 2000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->GetMeta("schema"), std::to_string(Store::kSchemaVersion));
  JobRecord r = (*(*s)->LoadJobs())[0];
  r.lost = 7'200'000;
  ASSERT_TRUE((*s)->UpdateJob(r).ok());
  EXPECT_EQ((*(*s)->LoadJobs())[0].lost, 7'200'000);
  // Schema 4 (no stop_preempted): a stop an older build left in progress (`preempting` or
  // `starting` with a process) is taken for a preemption's, as that build did; a running
  // process's is not. It round-trips after.
  r.pid = 42;
  r.state = LiveState::kPreempting;
  ASSERT_TRUE((*s)->UpdateJob(r).ok());
  JobRecord other{.name = "b", .gpus = 1};
  ASSERT_TRUE((*s)->InsertJob(other).ok());
  other.pid = 43;
  other.state = LiveState::kRunning;
  ASSERT_TRUE((*s)->UpdateJob(other).ok());
  s->reset();
  Sql(db,
      "ALTER TABLE jobs DROP COLUMN stop_preempted; UPDATE meta SET value = '4' WHERE key = "
      "'schema';");
  s = Store::Open(db.string(), 2000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->GetMeta("schema"), std::to_string(Store::kSchemaVersion));
  auto upgraded = *(*s)->LoadJobs();
  ASSERT_EQ(upgraded.size(), 2u);
  EXPECT_TRUE(upgraded[0].stop_preempted);
  EXPECT_FALSE(upgraded[1].stop_preempted);
  upgraded[0].stop_preempted = false;
  ASSERT_TRUE((*s)->UpdateJob(upgraded[0]).ok());
  EXPECT_FALSE((*(*s)->LoadJobs())[0].stop_preempted);
  EXPECT_EQ(upgraded[0].stop_sent, -1);
  // Schema 5 (no stop_sent): no stop is taken for one sent; it round-trips after. What
  // started a stop, which schema 5 kept, is kept (a review: the upgrade took every stop in
  // progress for a preemption's, a requeue's too).
  upgraded[0].stop_sent = 1500;
  ASSERT_TRUE((*s)->UpdateJob(upgraded[0]).ok());
  upgraded[1].pid = 44;
  upgraded[1].state = LiveState::kPreempting;  // a requeue's stop: stop_preempted false
  upgraded[1].stop_preempted = false;
  ASSERT_TRUE((*s)->UpdateJob(upgraded[1]).ok());
  EXPECT_EQ((*(*s)->LoadJobs())[0].stop_sent, 1500);
  s->reset();
  Sql(db,
      "ALTER TABLE jobs DROP COLUMN stop_sent; UPDATE meta SET value = '5' WHERE key = 'schema';");
  s = Store::Open(db.string(), 2000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->GetMeta("schema"), std::to_string(Store::kSchemaVersion));
  upgraded = *(*s)->LoadJobs();
  EXPECT_EQ(upgraded[0].stop_sent, -1);
  EXPECT_EQ(upgraded[1].stop_sent, -1);
  EXPECT_FALSE(upgraded[1].stop_preempted);
  // Schema 6 (no stop_deadline): a stop kept there has none (its serve's grace gives it,
  // LiveScheduler's meta grace_ms); it round-trips after.
  upgraded[0].stop_sent = 1500;
  ASSERT_TRUE((*s)->UpdateJob(upgraded[0]).ok());
  s->reset();
  Sql(db,
      "ALTER TABLE jobs DROP COLUMN stop_deadline; UPDATE meta SET value = '6' WHERE key = "
      "'schema';");
  s = Store::Open(db.string(), 2000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->GetMeta("schema"), std::to_string(Store::kSchemaVersion));
  upgraded = *(*s)->LoadJobs();
  EXPECT_EQ(upgraded[0].stop_sent, 1500);
  EXPECT_EQ(upgraded[0].stop_deadline, -1);
  upgraded[0].stop_deadline = 5500;
  ASSERT_TRUE((*s)->UpdateJob(upgraded[0]).ok());
  EXPECT_EQ((*(*s)->LoadJobs())[0].stop_deadline, 5500);
  EXPECT_EQ((*jobs)[0].name, "a");
  EXPECT_EQ((*jobs)[0].engine_job, "");
  EXPECT_TRUE((*jobs)[0].nodes.empty());
  EXPECT_EQ((*jobs)[0].kills, 0);
  EXPECT_FALSE((*jobs)[0].held);
  fs::remove_all(dir);
}

TEST(Store, UnreadableJournalRowsAreErrorsNamingTheirSeq) {
  // Rows with a valid checksum (as a newer build might write) that this build cannot read.
  fs::path dir = testing::ScratchDir("store_rows");
  const fs::path db = dir / "t.db";
  { ASSERT_TRUE(Store::Open(db.string(), 1).ok()); }
  Sql(db, fmt::format("INSERT INTO events(seq, t, kind, job, detail, sum) VALUES(1, 1, "
                      "'launched', 1, '{{}}', '{}');",
                      ChainSum(kJournalGenesis, 1, 1, "launched", 1, "{}"))
              .c_str());
  auto s = Store::Open(db.string(), 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  auto rows = (*s)->LoadEvents();
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(), "state database: journal event 1: unknown kind 'launched'");
  s->reset();
  Sql(db, fmt::format("UPDATE events SET kind = 'drain', detail = 'until 5', sum = '{}';",
                      ChainSum(kJournalGenesis, 1, 1, "drain", 1, "until 5"))
              .c_str());
  fs::remove(db.string() + ".head");  // else the head tells the row was replaced
  s = Store::Open(db.string(), 1);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)->warnings().size(), 1u);  // no head: loss cannot be ruled out
  rows = (*s)->LoadEvents(0, 0, /*inputs_only=*/true);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(),
            "state database: journal event 1: detail is not a JSON object");
  fs::remove_all(dir);
}

// A journal with two jobs and a few rows, written by Store as serve would; closed.
void WriteJournal(const fs::path& db, int jobs, Time t0 = 0) {
  auto s = Store::Open(db.string(), 1000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  for (int i = 0; i < jobs; ++i) {
    Store::Txn txn(**s);
    JobRecord r{.name = fmt::format("j{}", i), .argv = {"true"}};
    ASSERT_TRUE((*s)->InsertJob(r).ok());
    ASSERT_TRUE((*s)->AppendEvent({.t = t0 + i, .kind = EventKind::kSubmit, .job = r.id}).ok());
    ASSERT_TRUE(txn.Commit().ok());
  }
}

TEST(Store, RefusesAJournalThatWasAltered) {
  fs::path dir = testing::ScratchDir("store_altered");
  WriteJournal(dir / "t.db", 2);
  Sql(dir / "t.db", "UPDATE events SET t = 7 WHERE seq = 2;");
  auto s = Store::Open((dir / "t.db").string(), 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("journal row 2 does not match its checksum"),
            std::string::npos)
      << s.status().message();
  EXPECT_NE(s.status().message().find("restore tiresias.db"), std::string::npos);
  // Damage is not "loss": accepting loss does not open it either.
  s = Store::Open((dir / "t.db").string(), 1, {.accept_journal_loss = true});
  EXPECT_FALSE(s.ok());
  fs::remove_all(dir);
}

// serve's log of its events says only what the journal holds: a text given in a transaction
// reaches the sink at its commit, not at all when it is rolled back (found by a tester: a
// refused submit was logged, and its id then logged again for another job).
TEST(Store, OnCommitTextsReachTheSinkOnlyWhenCommitted) {
  fs::path dir = testing::ScratchDir("store_on_commit");
  auto s = Store::Open((dir / "t.db").string(), 1000);
  ASSERT_TRUE(s.ok()) << s.status().message();
  std::string seen;
  (*s)->SetCommitSink([&](const std::string& t) { seen += t; });
  (*s)->OnCommit("outside;");  // no transaction: at once
  EXPECT_EQ(seen, "outside;");
  {
    Store::Txn txn(**s);
    (*s)->OnCommit("rolled back;");
  }
  EXPECT_EQ(seen, "outside;");
  {
    Store::Txn txn(**s);
    (*s)->OnCommit("committed;");
    EXPECT_EQ(seen, "outside;");  // not before the commit
    ASSERT_TRUE(txn.Commit().ok());
  }
  EXPECT_EQ(seen, "outside;committed;");
  fs::remove_all(dir);
}

// A database cut to its first pages is refused as damaged, with its path and the choices
// (found by a tester: "set schema: database disk image is malformed", with or without
// --accept-journal-loss: it was taken for a new database and its version written first).
TEST(Store, ADatabaseCutToItsFirstPagesIsRefusedAsDamaged) {
  for (const int keep : {4096, 8192}) {
    SCOPED_TRACE(keep);
    fs::path dir = testing::ScratchDir("store_cut_" + std::to_string(keep));
    const fs::path db = dir / "t.db";
    WriteJournal(db, 200);
    Sql(db, "PRAGMA wal_checkpoint(TRUNCATE);");  // in the database file itself
    WriteJournal(db, 5);                          // and a few in its -wal file, as serve leaves it
    fs::resize_file(db, static_cast<uintmax_t>(keep));
    for (const bool accept : {false, true}) {
      auto s = Store::Open(db.string(), 5000, {.accept_journal_loss = accept});
      ASSERT_FALSE(s.ok());
      const std::string m = s.status().message();
      EXPECT_TRUE(m.starts_with(db.string() + ": ")) << m;
      EXPECT_TRUE(m.find("damaged") != std::string::npos ||
                  m.find("malformed") != std::string::npos)
          << m;
      EXPECT_NE(m.find("another --state-dir"), std::string::npos) << m;
      EXPECT_LT(m.size(), 1500u) << m;  // its findings cut short
    }
    fs::remove_all(dir);
  }
}

TEST(Store, RefusesAJournalThatLostCommittedRowsAndNeverReusesIds) {
  for (const char* damage : {"truncate", "replace"}) {
    SCOPED_TRACE(damage);
    fs::path dir = testing::ScratchDir(std::string("store_lost_") + damage);
    const fs::path db = dir / "t.db";
    WriteJournal(db, 3);  // jobs 1-3, journal rows 1-3
    if (std::string(damage) == "truncate") {
      fs::resize_file(db, 0);  // SQLite would open it as a new, empty database
      fs::remove(fs::path(db.string() + "-wal"));
    } else {
      fs::remove(db);  // another journal in its place, as long but with other rows
      fs::rename(fs::path(db.string() + ".head"), dir / "saved.head");
      WriteJournal(db, 4, /*t0=*/100);
      fs::rename(dir / "saved.head", fs::path(db.string() + ".head"));
    }
    auto s = Store::Open(db.string(), 5000);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
    const std::string m = s.status().message();
    EXPECT_NE(m.find(std::string(damage) == "truncate"
                         ? "the journal ends at row 0 but row 3 was committed"
                         : "journal row 3 is not the row that was committed"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("--accept-journal-loss"), std::string::npos) << m;
    EXPECT_NE(m.find("another --state-dir"), std::string::npos) << m;

    s = Store::Open(db.string(), 5000, {.accept_journal_loss = true});
    ASSERT_TRUE(s.ok()) << s.status().message();
    // Truncated: ids 1-3 were given out before the loss. Replaced: the new database has 4.
    const int64_t highest = std::string(damage) == "truncate" ? 3 : 4;
    ASSERT_EQ((*s)->warnings().size(), 1u);
    EXPECT_NE((*s)->warnings()[0].find(fmt::format("job ids after {}", highest)), std::string::npos)
        << (*s)->warnings()[0];
    JobRecord r{.argv = {"true"}};
    ASSERT_TRUE((*s)->InsertJob(r).ok());
    EXPECT_EQ(r.id, JobId(highest + 1));
    s->reset();
    // Accepted once, the journal and its head agree again.
    s = Store::Open(db.string(), 5000);
    EXPECT_TRUE(s.ok()) << s.status().message();
    fs::remove_all(dir);
  }
}

TEST(Store, ATornHeadRecordIsRefusedUnlessTheLossIsAccepted) {
  fs::path dir = testing::ScratchDir("store_torn");
  WriteJournal(dir / "t.db", 2);
  {  // half a record, as a power loss without --fsync might leave it
    std::ofstream(dir / "t.db.head", std::ios::binary | std::ios::trunc) << "{\"seq\": 2, \"su";
  }
  auto s = Store::Open((dir / "t.db").string(), 1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("damaged journal head"), std::string::npos)
      << s.status().message();
  s = Store::Open((dir / "t.db").string(), 1, {.accept_journal_loss = true});
  ASSERT_TRUE(s.ok()) << s.status().message();
  // The damaged head, and that nothing vouches for the journal any more.
  ASSERT_EQ((*s)->warnings().size(), 2u);
  EXPECT_NE((*s)->warnings()[0].find("damaged journal head"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Store, ReservedIdsAreSkipped) {
  fs::path dir = testing::ScratchDir("store_reserve");
  auto s = Store::Open((dir / "t.db").string(), 1);
  ASSERT_TRUE(s.ok());
  (*s)->ReserveJobIds(41);  // e.g. tiresias-jobs/41 exists
  JobRecord r{.argv = {"true"}};
  ASSERT_TRUE((*s)->InsertJob(r).ok());
  EXPECT_EQ(r.id, JobId(42));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tiresias
