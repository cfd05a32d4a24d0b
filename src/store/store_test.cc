// Store: a database of another schema version is refused with a message that says what to
// do, and a journal row of an unknown kind or with a detail that is not JSON is an error
// naming its seq, never replayed wrong or skipped.
#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

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
              {.t = 5, .kind = EventKind::kHold, .job = JobId(3), .detail = {{"until_ms", 9}}})
          .ok());
  s->reset();
  auto again = Store::Open((dir / "t.db").string(), 2000);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)->epoch_ms(), 1000);
  auto rows = (*again)->LoadEvents(0, 0, /*inputs_only=*/true);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].event.kind, EventKind::kHold);
  EXPECT_EQ((*rows)[0].event.detail["until_ms"], 9);
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

TEST(Store, UnreadableJournalRowsAreErrorsNamingTheirSeq) {
  fs::path dir = testing::ScratchDir("store_rows");
  const fs::path db = dir / "t.db";
  { ASSERT_TRUE(Store::Open(db.string(), 1).ok()); }
  Sql(db, "INSERT INTO events(t, kind, job, detail) VALUES(1, 'launched', 1, '{}');");
  auto s = Store::Open(db.string(), 1);
  ASSERT_TRUE(s.ok());
  auto rows = (*s)->LoadEvents();
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(), "state database: journal event 1: unknown kind 'launched'");
  s->reset();
  Sql(db, "UPDATE events SET kind = 'hold', detail = 'until 5';");
  s = Store::Open(db.string(), 1);
  rows = (*s)->LoadEvents(0, 0, /*inputs_only=*/true);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().message(),
            "state database: journal event 1: detail is not a JSON object");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tiresias
