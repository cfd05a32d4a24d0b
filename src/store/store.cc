// SQLite-backed journal and job table for the daemon (see store.h).
#include "store/store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include "common/strings.h"

namespace tiresias {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  request TEXT NOT NULL,
  submit INTEGER NOT NULL,
  state TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  start_ticks INTEGER NOT NULL,
  gpus TEXT NOT NULL,
  devices TEXT NOT NULL,
  exit_code INTEGER NOT NULL,
  signal INTEGER NOT NULL,
  first_start INTEGER NOT NULL,
  last_start INTEGER NOT NULL,
  end_time INTEGER NOT NULL,
  preemptions INTEGER NOT NULL,
  kills INTEGER NOT NULL DEFAULT 0,
  held INTEGER NOT NULL DEFAULT 0,
  message TEXT NOT NULL,
  engine TEXT NOT NULL DEFAULT '{}',
  lost INTEGER NOT NULL DEFAULT 0,
  stop_preempted INTEGER NOT NULL DEFAULT 0,
  stop_sent INTEGER NOT NULL DEFAULT -1,
  stop_deadline INTEGER NOT NULL DEFAULT -1);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  t INTEGER NOT NULL,
  kind TEXT NOT NULL,
  job INTEGER NOT NULL,
  detail TEXT NOT NULL,
  sum TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_by_job ON events(job, seq);
)sql";

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return rc_ == SQLITE_OK; }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  int Step() { return sqlite3_step(s_); }
  int64_t Int(int c) const { return sqlite3_column_int64(s_, c); }
  std::string Text(int c) const {
    auto* p = sqlite3_column_text(s_, c);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_;
};

// The `held` column: 0 not held, 1 held by its user, 2 by an admin (JobRecord::held_by_admin).
// (A hold in the engine is in the `engine` column: JobRecord::held_in_engine.)
int HeldColumn(const JobRecord& r) {
  return r.held ? (r.held_by_admin ? 2 : 1) : 0;
}

}  // namespace

Status Store::Error(std::string_view what) {
  return IoError(fmt::format("state database: {}: {}", what, sqlite3_errmsg(db_)));
}

Status Store::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "unknown error";
    sqlite3_free(err);
    return IoError(fmt::format("state database: {}", m));
  }
  return Status::Ok();
}

// What an operator can do about a journal that cannot be trusted.
std::string Choices(bool can_accept) {
  return fmt::format(
      " Choices: (1) stop, and restore tiresias.db with its -wal file together from a backup; "
      "{}({}) start serve with another --state-dir.",
      can_accept ? "(2) start serve with --accept-journal-loss to continue from what the journal "
                   "holds (job ids continue after the highest ever given out; job directories "
                   "are kept); "
                 : "",
      can_accept ? 3 : 2);
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, int64_t now_wall_ms,
                                             Options opts) {
  const bool fsync_commits = opts.fsync_commits;
  sqlite3* db = nullptr;
  const int mode =
      opts.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db, mode | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string m = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return IoError(fmt::format("{}: cannot open state database: {}", path, m));
  }
  std::unique_ptr<Store> s(new Store(db));
  sqlite3_busy_timeout(db, opts.busy_timeout_ms);
  // WAL with synchronous=NORMAL: a commit is in the WAL file before it returns, so it
  // survives the daemon's crash (kill -9); FULL also fsyncs each commit (power loss).
  const char* sync = fsync_commits ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;";
  // Before the schema is read or written (found by a tester: a database cut to its first pages
  // was taken for a new one, and the write of its version failed without the path), and before
  // WAL is asked for (on a file that is no database it failed first, as "damaged").
  if (Status st = s->QuickCheck(path); !st.ok()) return st;
  // The WAL is never truncated while open: the room serve keeps allocated past its end
  // (DiskReserve::KeepRoomIn) stays serve's.
  for (const char* sql :
       {"PRAGMA journal_mode=WAL;", "PRAGMA journal_size_limit=-1;", sync, kSchema}) {
    if (opts.read_only) break;
    if (Status st = s->Exec(sql); !st.ok()) {
      return FailedPrecondition(fmt::format("{}: {}.{}", path, st.message(), Choices(false)));
    }
  }
  if (opts.read_only) {
    const auto v = s->GetMeta("schema");
    if (!v) {  // (it said "schema unknown ... use the tiresias that wrote it")
      return FailedPrecondition(fmt::format(
          "{}: not a tiresias journal (no schema recorded: not a database serve wrote)", path));
    }
    if (v != std::to_string(kSchemaVersion)) {
      const auto n = v ? ParseInt(*v) : std::nullopt;
      return FailedPrecondition(fmt::format(
          "{}: schema {}, and this build reads schema {}{}", path, v.value_or("unknown"),
          kSchemaVersion,
          n && *n < kSchemaVersion ? ": a serve of this build upgrades it when it starts"
                                   : ": use the tiresias that wrote it"));
    }
  } else if (Status st = s->CheckSchema(path); !st.ok()) {
    return st;
  }
  s->head_path_ = JournalHeadPath(path);
  s->read_only_ = opts.read_only;
  s->path_ = path;
  if (struct stat st; !opts.read_only && path != ":memory:" && ::stat(path.c_str(), &st) == 0) {
    s->file_id_.emplace(st.st_dev, st.st_ino);
  }
  if (Status st = s->Verify(path, opts.accept_journal_loss); !st.ok()) return st;
  if (opts.read_only) {
    auto e = s->GetMeta("epoch_ms");
    auto v = e ? ParseInt(*e) : std::nullopt;
    if (!v) return FailedPrecondition(fmt::format("{}: no epoch recorded", path));
    s->epoch_ms_ = *v;
    return s;
  }
  auto head_file = JournalHeadFile::Open(s->head_path_, fsync_commits);
  if (!head_file.ok()) return head_file.status();
  s->head_file_ = std::move(*head_file);
  if (Status st = s->head_file_->Write(s->head_); !st.ok()) return st;
  if (auto e = s->GetMeta("epoch_ms")) {
    auto v = ParseInt(*e);
    if (!v)
      return FailedPrecondition(fmt::format("{}: damaged epoch '{}'.{}", path, *e, Choices(false)));
    s->epoch_ms_ = *v;
  } else {
    s->epoch_ms_ = now_wall_ms;
    if (Status st = s->SetMeta("epoch_ms", std::to_string(now_wall_ms)); !st.ok()) return st;
  }
  return s;
}

Status Store::CheckSchema(const std::string& path) {
  auto v = GetMeta("schema");
  if (!v) {
    // A new database (no epoch yet) takes this version; one with data but no version was
    // written before versions were recorded, in a layout this build does not read.
    if (GetMeta("epoch_ms")) {
      return FailedPrecondition(fmt::format(
          "{}: written by an older tiresias (schema 1); this build reads schema {}. Finish its "
          "jobs with the older build, or start serve with another --state-dir",
          path, kSchemaVersion));
    }
    return SetMeta("schema", std::to_string(kSchemaVersion));
  }
  // 3 added kills, held, engine; 4 lost; 5 stop_preempted; 6 stop_sent; 7 stop_deadline: all
  // with defaults. One
  // transaction: an upgrade cut off half-way is not taken for a finished one.
  if (*v == "2" || *v == "3" || *v == "4" || *v == "5" || *v == "6") {
    auto failed = [&](const Status& st) {
      (void)Exec("ROLLBACK");
      return FailedPrecondition(
          fmt::format("{}: upgrading schema {} to {}: {}", path, *v, kSchemaVersion, st.message()));
    };
    if (Status st = Exec("BEGIN IMMEDIATE"); !st.ok()) return failed(st);
    std::set<std::string> have;
    {
      Stmt cols(db_, "PRAGMA table_info(jobs)");
      while (cols.Step() == SQLITE_ROW) have.insert(cols.Text(1));
    }
    const std::pair<const char*, const char*> added[] = {
        {"kills", "INTEGER NOT NULL DEFAULT 0"},
        {"held", "INTEGER NOT NULL DEFAULT 0"},
        {"engine", "TEXT NOT NULL DEFAULT '{}'"},
        {"lost", "INTEGER NOT NULL DEFAULT 0"},
        {"stop_preempted", "INTEGER NOT NULL DEFAULT 0"},
        {"stop_sent", "INTEGER NOT NULL DEFAULT -1"},
        {"stop_deadline", "INTEGER NOT NULL DEFAULT -1"}};
    for (const auto& [name, type] : added) {
      if (have.contains(name)) continue;
      if (Status st = Exec(fmt::format("ALTER TABLE jobs ADD COLUMN {} {}", name, type).c_str());
          !st.ok()) {
        return failed(st);
      }
    }
    // A stop that a build before schema 5 left in progress: what started it was not kept; as
    // that build assumed, a preemption's (`starting` with a process: the core started the next
    // run while it stopped). Schema 5 kept it: left as it is.
    if (!have.contains("stop_preempted")) {
      if (Status st = Exec("UPDATE jobs SET stop_preempted = 1 WHERE pid > 0 AND state IN "
                           "('preempting', 'starting')");
          !st.ok()) {
        return failed(st);
      }
    }
    if (Status st = SetMeta("schema", std::to_string(kSchemaVersion)); !st.ok()) {
      return failed(st);
    }
    if (Status st = Exec("COMMIT"); !st.ok()) return failed(st);
    return Status::Ok();
  }
  if (*v != std::to_string(kSchemaVersion)) {
    return FailedPrecondition(
        fmt::format("{}: schema {} (this build reads schema {}); use the tiresias that wrote "
                    "it, or another --state-dir",
                    path, *v, kSchemaVersion));
  }
  return Status::Ok();
}

Status Store::QuickCheck(const std::string& path) {
  Stmt q(db_, "PRAGMA quick_check");
  if (sqlite3_errcode(db_) == SQLITE_NOTADB) {  // another kind of file, not a damaged journal
    return FailedPrecondition(fmt::format(
        "{}: not a tiresias journal (not a SQLite database: not a database serve wrote)", path));
  }
  if (!q.ok() || q.Step() != SQLITE_ROW || q.Text(0) != "ok") {
    std::string what = q.ok() ? q.Text(0) : sqlite3_errmsg(db_);
    // Its page-by-page findings can run to kilobytes: the start says enough.
    if (what.size() > 300) what = what.substr(0, 300) + " ...";
    return FailedPrecondition(fmt::format("{}: the database is damaged (SQLite quick_check: {}).{}",
                                          path, what, Choices(false)));
  }
  return Status::Ok();
}

Status Store::Verify(const std::string& path, bool accept_loss) {
  // Recompute the chain; note the sum at the head's row on the way.
  auto head = ReadJournalHead(head_path_);
  // Beside a running serve, which rewrites the head in place at each commit, a read may meet
  // one half-written: read again.
  for (int again = 0; read_only_ && !head.ok() && again < 5; ++again) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    head = ReadJournalHead(head_path_);
  }
  if (!head.ok()) {
    if (!accept_loss) return FailedPrecondition(head.status().message() + "." + Choices(true));
    warnings_.push_back(head.status().message() + "; continuing (--accept-journal-loss)");
    head = std::optional<JournalHead>();
  }
  std::optional<std::string> sum_at_head;
  last_seq_ = 0;
  last_sum_ = std::string(kJournalGenesis);
  {
    Stmt q(db_, "SELECT seq, t, kind, job, detail, sum FROM events ORDER BY seq");
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) {
      const int64_t seq = q.Int(0);
      const std::string want = ChainSum(last_sum_, seq, q.Int(1), q.Text(2), q.Int(3), q.Text(4));
      if (q.Text(5) != want) {
        return FailedPrecondition(fmt::format(
            "{}: journal row {} does not match its checksum: the database was altered or "
            "damaged, and replaying it could run jobs wrong.{}",
            path, seq, Choices(false)));
      }
      last_seq_ = seq;
      last_sum_ = want;
      if (*head && seq == (*head)->seq) sum_at_head = want;
    }
    if (rc != SQLITE_DONE) return Error("verify journal");
  }
  {
    Stmt q(db_, "SELECT MAX(id) FROM jobs");
    if (q.Step() == SQLITE_ROW) max_job_ = q.Int(0);
  }
  if (!*head) {
    if (last_seq_ > 0) {
      warnings_.push_back(fmt::format(
          "{}: no journal head ({}); cannot tell whether committed rows were lost. Writing a "
          "new one at row {}",
          path, head_path_, last_seq_));
    }
  } else {
    const JournalHead& h = **head;
    const bool behind = h.seq > last_seq_;
    const bool replaced = !behind && h.seq > 0 && sum_at_head != h.sum;
    if (behind || replaced) {
      std::string what = behind ? fmt::format(
                                      "the journal ends at row {} but row {} was committed: its "
                                      "write-ahead log was lost, or the database was truncated or "
                                      "replaced, and everything after row {} is gone",
                                      last_seq_, h.seq, last_seq_)
                                : fmt::format(
                                      "journal row {} is not the row that was committed: the "
                                      "database was replaced",
                                      h.seq);
      if (!accept_loss)
        return FailedPrecondition(fmt::format("{}: {}.{}", path, what, Choices(true)));
      warnings_.push_back(
          fmt::format("{}: {}; continuing (--accept-journal-loss), job ids after {}", path, what,
                      std::max(max_job_, h.max_job)));
    }
    max_job_ = std::max(max_job_, h.max_job);
  }
  head_ = JournalHead{.seq = last_seq_, .sum = last_sum_, .max_job = max_job_};
  return Status::Ok();
}

Status Store::Committed() {
  if (txn_depth_ > 0) return Status::Ok();
  if (head_.seq == last_seq_ && head_.max_job == max_job_) return Status::Ok();
  head_ = JournalHead{.seq = last_seq_, .sum = last_sum_, .max_job = max_job_};
  return head_file_ ? head_file_->Write(head_) : Status::Ok();
}

Store::~Store() {
  sqlite3_close(db_);
}

std::optional<std::string> Store::GetMeta(const std::string& key) {
  Stmt q(db_, "SELECT value FROM meta WHERE key = ?");
  q.Bind(1, key);
  if (q.Step() == SQLITE_ROW) return q.Text(0);
  return std::nullopt;
}

Status Store::SetMeta(const std::string& key, const std::string& value) {
  if (!Writable().ok()) return Writable();
  Stmt q(db_,
         "INSERT INTO meta(key, value) VALUES(?, ?) "
         "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  q.Bind(1, key).Bind(2, value);
  return q.Step() == SQLITE_DONE ? Status::Ok() : Error("set " + key);
}

int64_t Store::Changes() const {
  return sqlite3_total_changes64(db_);
}

Status Store::InPlace() const {
  if (!file_id_) return Status::Ok();
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    return Unavailable(fmt::format(
        "{}: the journal is gone from its path (its directory removed or renamed?): nothing is "
        "recorded until it is back there",
        path_));
  }
  if (std::pair<uint64_t, uint64_t>(st.st_dev, st.st_ino) != *file_id_) {
    return Unavailable(fmt::format(
        "{}: another file replaced the journal open since the start: nothing is recorded until "
        "the journal is back there, or serve is restarted on the new one",
        path_));
  }
  return Status::Ok();
}

Store::Txn::Txn(Store& s, bool even_if_moved)
    : s_(s), seq_(s.last_seq_), max_job_(s.max_job_), sum_(s.last_sum_) {
  begun_ = even_if_moved ? Status::Ok() : s_.InPlace();
  if (begun_.ok()) begun_ = s_.Exec("BEGIN IMMEDIATE");
  if (!begun_.ok()) s_.txn_failed_ = begun_;
  ++s_.txn_depth_;
}

Store::Txn::~Txn() {
  --s_.txn_depth_;
  if (!begun_.ok()) {
    s_.txn_failed_ = Status::Ok();
    return;  // nothing was written (Writable refused it): nothing to roll back
  }
  if (done_) return;
  s_.on_commit_.clear();
  (void)s_.Exec("ROLLBACK");
  s_.last_seq_ = seq_;
  s_.last_sum_ = sum_;
  s_.max_job_ = max_job_;
}

Status Store::Txn::Commit() {
  if (!begun_.ok()) return begun_;  // the writes were not grouped: refuse to call it atomic
  Status s = s_.Exec("COMMIT");
  done_ = s.ok();  // a failed COMMIT is rolled back by the destructor
  if (!done_) return s;
  for (const std::string& text : s_.on_commit_) {
    if (s_.sink_) s_.sink_(text);
  }
  s_.on_commit_.clear();
  --s_.txn_depth_;
  Status head = s_.Committed();
  ++s_.txn_depth_;  // the destructor undoes it
  return head;
}

void Store::OnCommit(std::string text) {
  if (txn_depth_ > 0) {
    on_commit_.push_back(std::move(text));
  } else if (sink_) {
    sink_(text);
  }
}

Status Store::InsertJob(JobRecord& r) {
  if (!Writable().ok()) return Writable();
  Stmt q(
      db_,
      "INSERT INTO jobs(id, request, submit, state, attempt, pid, start_ticks, gpus, "
      "devices, exit_code, signal, first_start, last_start, end_time, preemptions, kills, "
      "held, message, engine, lost, stop_preempted, stop_sent, stop_deadline) VALUES(?, ?, ?, ?, "
      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  const int64_t id = max_job_ + 1;
  q.Bind(1, id).Bind(2, RequestToJson(r).dump()).Bind(3, r.submit).Bind(4, ToString(r.state));
  q.Bind(5, r.attempt).Bind(6, r.pid).Bind(7, r.start_ticks);
  q.Bind(8, GpusToJson(r.gpus_held).dump()).Bind(9, r.devices).Bind(10, r.exit_code);
  q.Bind(11, r.signal).Bind(12, r.first_start).Bind(13, r.last_start).Bind(14, r.end);
  q.Bind(15, r.preemptions).Bind(16, r.kills).Bind(17, HeldColumn(r)).Bind(18, r.message);
  q.Bind(19, EngineToJson(r).dump()).Bind(20, r.lost).Bind(21, r.stop_preempted ? 1 : 0);
  q.Bind(22, r.stop_sent).Bind(23, r.stop_deadline);
  if (q.Step() != SQLITE_DONE) return Error("insert job");
  r.id = JobId(id);
  max_job_ = id;
  return Committed();
}

Status Store::UpdateJob(const JobRecord& r) {
  if (!Writable().ok()) return Writable();
  Stmt q(db_,
         "UPDATE jobs SET state = ?, attempt = ?, pid = ?, start_ticks = ?, gpus = ?, "
         "devices = ?, exit_code = ?, signal = ?, first_start = ?, last_start = ?, "
         "end_time = ?, preemptions = ?, kills = ?, held = ?, message = ?, engine = ?, "
         "lost = ?, stop_preempted = ?, stop_sent = ?, stop_deadline = ? WHERE id = ?");
  q.Bind(1, ToString(r.state)).Bind(2, r.attempt).Bind(3, r.pid).Bind(4, r.start_ticks);
  q.Bind(5, GpusToJson(r.gpus_held).dump()).Bind(6, r.devices).Bind(7, r.exit_code);
  q.Bind(8, r.signal).Bind(9, r.first_start).Bind(10, r.last_start).Bind(11, r.end);
  q.Bind(12, r.preemptions).Bind(13, r.kills).Bind(14, HeldColumn(r)).Bind(15, r.message);
  q.Bind(16, EngineToJson(r).dump()).Bind(17, r.lost).Bind(18, r.stop_preempted ? 1 : 0);
  q.Bind(19, r.stop_sent).Bind(20, r.stop_deadline).Bind(21, r.id.value());
  if (q.Step() != SQLITE_DONE) return Error(fmt::format("update job {}", r.id.value()));
  return Status::Ok();
}

StatusOr<std::vector<JobRecord>> Store::LoadJobs() {
  Stmt q(db_,
         "SELECT id, request, submit, state, attempt, pid, start_ticks, gpus, devices, "
         "exit_code, signal, first_start, last_start, end_time, preemptions, kills, held, "
         "message, engine, lost, stop_preempted, stop_sent, stop_deadline FROM jobs ORDER BY id");
  std::vector<JobRecord> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    JobRecord r;
    r.id = JobId(q.Int(0));
    auto req = nlohmann::json::parse(q.Text(1), nullptr, false);
    if (req.is_discarded()) {
      return IoError(fmt::format("state database: job {}: unreadable request", r.id.value()));
    }
    RequestFromJson(req, r);
    r.submit = q.Int(2);
    auto st = ParseLiveState(q.Text(3));
    if (!st) {
      return IoError(
          fmt::format("state database: job {}: unknown state '{}'", r.id.value(), q.Text(3)));
    }
    r.state = *st;
    r.attempt = static_cast<int>(q.Int(4));
    r.pid = static_cast<int>(q.Int(5));
    r.start_ticks = q.Int(6);
    r.gpus_held = GpusFromJson(nlohmann::json::parse(q.Text(7), nullptr, false));
    r.devices = q.Text(8);
    r.exit_code = static_cast<int>(q.Int(9));
    r.signal = static_cast<int>(q.Int(10));
    r.first_start = q.Int(11);
    r.last_start = q.Int(12);
    r.end = q.Int(13);
    r.preemptions = static_cast<int>(q.Int(14));
    r.kills = static_cast<int>(q.Int(15));
    r.held = q.Int(16) != 0;
    r.held_by_admin = q.Int(16) == 2;
    r.message = q.Text(17);
    EngineFromJson(nlohmann::json::parse(q.Text(18), nullptr, false), r);
    r.lost = q.Int(19);
    r.stop_preempted = q.Int(20) != 0;
    r.stop_sent = q.Int(21);
    r.stop_deadline = q.Int(22);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return Error("load jobs");
  return out;
}

StatusOr<int64_t> Store::AppendEvent(const Event& e) {
  if (!Writable().ok()) return Writable();
  const int64_t seq = last_seq_ + 1;
  const std::string detail =
      e.detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string sum = ChainSum(last_sum_, seq, e.t, ToString(e.kind), e.job.value(), detail);
  Stmt q(db_, "INSERT INTO events(seq, t, kind, job, detail, sum) VALUES(?, ?, ?, ?, ?, ?)");
  q.Bind(1, seq).Bind(2, e.t).Bind(3, ToString(e.kind)).Bind(4, e.job.value());
  q.Bind(5, detail).Bind(6, sum);
  if (q.Step() != SQLITE_DONE) return Error("append event");
  last_seq_ = seq;
  last_sum_ = sum;
  if (Status st = Committed(); !st.ok()) return st;
  return seq;
}

StatusOr<std::vector<EventRow>> Store::LoadEvents(int64_t after, int limit, bool inputs_only,
                                                  bool skip_ticks, std::optional<JobId> job,
                                                  bool latest, int64_t jobs) {
  // A job's rows through the index by job (a range of jobs was planned as a scan of the whole
  // journal by seq).
  std::string sql = job ? "SELECT seq, t, kind, job, detail FROM events INDEXED BY events_by_job "
                          "WHERE seq > ?"
                        : "SELECT seq, t, kind, job, detail FROM events WHERE seq > ?";
  if (inputs_only) {
    std::vector<std::string> names;
    for (const auto& k : EventKinds()) {
      if (k.core_input) names.push_back(fmt::format("'{}'", k.name));
    }
    sql += fmt::format(" AND kind IN ({})", fmt::join(names, ", "));
  }
  if (skip_ticks) sql += fmt::format(" AND kind != '{}'", ToString(EventKind::kTick));
  if (job) {
    const int64_t last = job->value() + std::max<int64_t>(jobs, 1) - 1;
    sql += fmt::format(" AND job BETWEEN {} AND {}", job->value(), last);
  }
  sql += latest ? " ORDER BY seq DESC" : " ORDER BY seq";  // the last `limit`, reversed below
  if (limit > 0) sql += fmt::format(" LIMIT {}", limit);
  Stmt q(db_, sql.c_str());
  q.Bind(1, after);
  std::vector<EventRow> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const int64_t seq = q.Int(0);
    auto kind = ParseEventKind(q.Text(2));
    if (!kind) {
      return IoError(
          fmt::format("state database: journal event {}: unknown kind '{}'", seq, q.Text(2)));
    }
    auto detail = nlohmann::json::parse(q.Text(4), nullptr, false);
    if (!detail.is_object()) {
      return IoError(
          fmt::format("state database: journal event {}: detail is not a JSON object", seq));
    }
    out.push_back(EventRow{
        .seq = seq,
        .event = {
            .t = q.Int(1), .kind = *kind, .job = JobId(q.Int(3)), .detail = std::move(detail)}});
  }
  if (rc != SQLITE_DONE) return Error("load events");
  if (latest) std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace tiresias
