// The daemon's crash-safe state: an SQLite database in WAL mode with three tables.
//   meta    key/value: the epoch (wall-clock ms at creation), the serve configuration, the
//           liveness stamp and the forecasts' learned margins;
//   jobs    one row per job (request + what happened, the cluster engine's job id), the API's
//           view;
//   events  an append-only journal of Events (core/event_log.h: kind by name, detail as a
//           JSON object). Its input rows are every call the daemon made into the scheduling
//           core, with the core time: replaying them through a fresh core rebuilds its exact
//           state after a crash. Other rows (start, preempt, exit, ...) narrate what
//           happened, for `tiresias events`.
// Every write that acknowledges a request is committed before the reply: in the WAL, which
// survives a crash of the daemon; with fsync_commits, on disk (survives power loss).
//
// Integrity (journal_head.h): Open runs SQLite's quick_check, recomputes the checksum chain
// over every journal row, and compares the journal with its head file; a damaged journal, or
// one that lost committed rows (a deleted or broken WAL, a truncated or replaced database),
// is refused with the choices there are. Job ids are never given out twice, even after such
// a loss is accepted.
// Not thread-safe: the daemon serialises access.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/event_log.h"
#include "store/job_record.h"
#include "store/journal_head.h"

struct sqlite3;

namespace tiresias {

struct EventRow {
  int64_t seq = 0;
  Event event;
};

class Store {
 public:
  // The layout this build reads and writes; a database of another version is refused, except
  // versions 2 to 6, which are upgraded in place (3 added the jobs' engine column: the Slurm
  // job id and nodes; 4 the GPU-time lost to preemptions; 5 what started a stop in progress;
  // 6 when the stop signal was sent; 7 the stop's kill deadline).
  static constexpr int kSchemaVersion = 7;

  struct Options {
    // Survive power loss too (synchronous=FULL, head file fsynced), at ~10x the cost per
    // commit.
    bool fsync_commits = false;
    // Open a journal that lost committed rows anyway (not a damaged one): continue from what
    // it holds, with job ids after the highest ever given out. warnings() says what was lost.
    bool accept_journal_loss = false;
    // How long a write waits for another process's lock on the database before it fails.
    int busy_timeout_ms = 5000;
    // For readers beside serve (whatif): nothing is created, upgraded or written (not the
    // journal head either); a database of another schema is refused, not upgraded.
    bool read_only = false;
  };
  // FailedPrecondition with the recovery choices for a damaged or truncated journal.
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, int64_t now_wall_ms,
                                               Options opts);
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, int64_t now_wall_ms) {
    return Open(path, now_wall_ms, Options{});
  }
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Wall-clock ms at which core time 0 lies.
  int64_t epoch_ms() const { return epoch_ms_; }
  std::optional<std::string> GetMeta(const std::string& key);
  Status SetMeta(const std::string& key, const std::string& value);

  // Text for `sink` once what is being written is committed (at once outside a transaction),
  // dropped if it is rolled back: serve's log of its events says only what the journal holds
  // (found by a tester: a refused submit was logged, and its id then logged for another job).
  void OnCommit(std::string text);
  void SetCommitSink(std::function<void(const std::string&)> sink) { sink_ = std::move(sink); }

  // Ok while the database file at Open's path is still the one open: Unavailable, naming the
  // path, once it was removed, renamed or replaced (its directory deleted, a backup restored
  // over it), since what is written then would not be where the next start reads it. A Txn
  // does not begin then (serve decides nothing and refuses requests until the file is back).
  Status InPlace() const;

  // Rows this connection has inserted, updated or deleted since it opened (a transaction that
  // wrote none leaves it as it was).
  int64_t Changes() const;

  // Groups writes into one atomic commit.
  class Txn {
   public:
    // `even_if_moved`: begins without InPlace's check, for what must be recorded whatever
    // happened to the path since (processes just started: serve's launch).
    explicit Txn(Store& s, bool even_if_moved = false);
    ~Txn();  // rolls back unless committed
    Status Commit();
    // Whether it began (the write lock was had within the busy timeout). Until the Txn is
    // gone, the Store refuses writes when it did not: none may commit on its own.
    const Status& begun() const { return begun_; }
    // Whether its COMMIT went through (Commit may still fail after it: the head file).
    bool committed() const { return done_; }

   private:
    Store& s_;
    Status begun_;
    bool done_ = false;
    // The chain's state before the transaction, restored on rollback.
    int64_t seq_ = 0, max_job_ = 0;
    std::string sum_;
  };

  // Assigns r.id: one above every id ever given out (ids are never reused).
  Status InsertJob(JobRecord& r);
  // The id the next InsertJob gives out.
  int64_t NextJobId() const { return max_job_ + 1; }
  // Job ids up to `id` are taken (e.g. job directories found on disk).
  void ReserveJobIds(int64_t id) { max_job_ = std::max(max_job_, id); }
  // What Open accepted that the caller should tell the operator.
  const std::vector<std::string>& warnings() const { return warnings_; }
  Status UpdateJob(const JobRecord& r);
  StatusOr<std::vector<JobRecord>> LoadJobs();

  // Returns the new row's seq.
  StatusOr<int64_t> AppendEvent(const Event& e);
  // Rows with seq > after, oldest first, at most `limit` (0 = all); only the core's inputs
  // (EventKindInfo::core_input) with inputs_only. A row of an unknown kind or with a detail
  // that is not a JSON object is an error naming its seq: the journal is not replayed wrong.
  // `job`: its rows only, and those of the `jobs` - 1 ids after it too (an array's tasks,
  // whose ids are in a row).
  StatusOr<std::vector<EventRow>> LoadEvents(int64_t after = 0, int limit = 0,
                                             bool inputs_only = false, bool skip_ticks = false,
                                             std::optional<JobId> job = std::nullopt,
                                             bool latest = false, int64_t jobs = 1);

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  Status Exec(const char* sql);
  Status CheckSchema(const std::string& path);
  // SQLite's quick_check, before anything is read: a damaged file refused with the choices.
  Status QuickCheck(const std::string& path);
  // quick_check, the checksum chain, the head file; sets last_seq_, last_sum_, max_job_.
  Status Verify(const std::string& path, bool accept_loss);
  // After a commit: the head file follows the journal.
  Status Committed();
  Status Error(std::string_view what);
  // Ok unless a Txn in scope could not begin.
  const Status& Writable() const { return txn_failed_; }

  sqlite3* db_;
  std::string path_;  // Open's path, as InPlace looks at it
  // The database file's identity (st_dev, st_ino) when opened; unset for readers and for
  // databases that are no file of their own (":memory:").
  std::optional<std::pair<uint64_t, uint64_t>> file_id_;
  int64_t epoch_ms_ = 0;
  std::string head_path_;
  bool read_only_ = false;  // Options::read_only: a reader beside serve, which writes the head
  std::unique_ptr<JournalHeadFile> head_file_;
  int txn_depth_ = 0;
  std::vector<std::string> on_commit_;  // OnCommit's texts in the open transaction
  std::function<void(const std::string&)> sink_;
  Status txn_failed_;     // a Txn in scope that could not begin: writes are refused
  int64_t last_seq_ = 0;  // the chain: last journal row and its sum
  std::string last_sum_;
  int64_t max_job_ = 0;  // the highest job id ever given out
  JournalHead head_;     // as last written
  std::vector<std::string> warnings_;
};

}  // namespace tiresias
