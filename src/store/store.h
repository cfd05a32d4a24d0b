// The daemon's crash-safe state: an SQLite database in WAL mode with three tables.
//   meta    key/value: the epoch (wall-clock ms at creation) and the serve configuration;
//   jobs    one row per job (request + what happened), the API's view;
//   events  an append-only journal of Events (core/event_log.h: kind by name, detail as a
//           JSON object). Its input rows are every call the daemon made into the scheduling
//           core, with the core time: replaying them through a fresh core rebuilds its exact
//           state after a crash. Other rows (start, preempt, exit, ...) narrate what
//           happened, for `tiresias events`.
// Every write that acknowledges a request is committed before the reply: in the WAL, which
// survives a crash of the daemon; with fsync_commits, on disk (survives power loss).
// Not thread-safe: the daemon serialises access.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/event_log.h"
#include "store/job_record.h"

struct sqlite3;

namespace tiresias {

struct EventRow {
  int64_t seq = 0;
  Event event;
};

class Store {
 public:
  // The layout this build reads and writes; a database of another version is refused.
  static constexpr int kSchemaVersion = 2;

  // fsync_commits: survive power loss too (synchronous=FULL), at ~10x the cost per commit.
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, int64_t now_wall_ms,
                                               bool fsync_commits = false);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Wall-clock ms at which core time 0 lies.
  int64_t epoch_ms() const { return epoch_ms_; }
  std::optional<std::string> GetMeta(const std::string& key);
  Status SetMeta(const std::string& key, const std::string& value);

  // Groups writes into one atomic commit.
  class Txn {
   public:
    explicit Txn(Store& s);
    ~Txn();  // rolls back unless committed
    Status Commit();

   private:
    Store& s_;
    Status begun_;
    bool done_ = false;
  };

  // Assigns r.id (ids are never reused).
  Status InsertJob(JobRecord& r);
  Status UpdateJob(const JobRecord& r);
  StatusOr<std::vector<JobRecord>> LoadJobs();

  // Returns the new row's seq.
  StatusOr<int64_t> AppendEvent(const Event& e);
  // Rows with seq > after, oldest first, at most `limit` (0 = all); only the core's inputs
  // (EventKindInfo::core_input) with inputs_only. A row of an unknown kind or with a detail
  // that is not a JSON object is an error naming its seq: the journal is not replayed wrong.
  StatusOr<std::vector<EventRow>> LoadEvents(int64_t after = 0, int limit = 0,
                                             bool inputs_only = false, bool skip_ticks = false);

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);
  Status CheckSchema(const std::string& path);
  Status Error(std::string_view what);

  sqlite3* db_;
  int64_t epoch_ms_ = 0;
};

}  // namespace tiresias
