// SQLite-backed journal and job table for the daemon (see store.h).
#include "store/store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

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
  message TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  t INTEGER NOT NULL,
  kind TEXT NOT NULL,
  job INTEGER NOT NULL,
  detail TEXT NOT NULL);
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

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, int64_t now_wall_ms,
                                             bool fsync_commits) {
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string m = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return IoError(fmt::format("{}: cannot open state database: {}", path, m));
  }
  std::unique_ptr<Store> s(new Store(db));
  sqlite3_busy_timeout(db, 5000);
  // WAL with synchronous=NORMAL: a commit is in the WAL file before it returns, so it
  // survives the daemon's crash (kill -9); FULL also fsyncs each commit (power loss).
  const char* sync = fsync_commits ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;";
  for (const char* sql : {"PRAGMA journal_mode=WAL;", sync, kSchema}) {
    if (Status st = s->Exec(sql); !st.ok()) {
      return IoError(fmt::format("{}: {}", path, st.message()));
    }
  }
  if (Status st = s->CheckSchema(path); !st.ok()) return st;
  if (auto e = s->GetMeta("epoch_ms")) {
    s->epoch_ms_ = std::stoll(*e);
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
  if (*v != std::to_string(kSchemaVersion)) {
    return FailedPrecondition(
        fmt::format("{}: schema {} (this build reads schema {}); use the tiresias that wrote "
                    "it, or another --state-dir",
                    path, *v, kSchemaVersion));
  }
  return Status::Ok();
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
  Stmt q(db_,
         "INSERT INTO meta(key, value) VALUES(?, ?) "
         "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  q.Bind(1, key).Bind(2, value);
  return q.Step() == SQLITE_DONE ? Status::Ok() : Error("set " + key);
}

Store::Txn::Txn(Store& s) : s_(s) {
  begun_ = s_.Exec("BEGIN IMMEDIATE");
}

Store::Txn::~Txn() {
  if (!done_) (void)s_.Exec("ROLLBACK");
}

Status Store::Txn::Commit() {
  if (!begun_.ok()) return begun_;  // the writes were not grouped: refuse to call it atomic
  Status s = s_.Exec("COMMIT");
  done_ = s.ok();  // a failed COMMIT is rolled back by the destructor
  return s;
}

Status Store::InsertJob(JobRecord& r) {
  Stmt q(db_,
         "INSERT INTO jobs(request, submit, state, attempt, pid, start_ticks, gpus, devices, "
         "exit_code, signal, first_start, last_start, end_time, preemptions, message) "
         "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  q.Bind(1, RequestToJson(r).dump()).Bind(2, r.submit).Bind(3, ToString(r.state));
  q.Bind(4, r.attempt)
      .Bind(5, r.pid)
      .Bind(6, r.start_ticks)
      .Bind(7, GpusToJson(r.gpus_held).dump());
  q.Bind(8, r.devices).Bind(9, r.exit_code).Bind(10, r.signal).Bind(11, r.first_start);
  q.Bind(12, r.last_start).Bind(13, r.end).Bind(14, r.preemptions).Bind(15, r.message);
  if (q.Step() != SQLITE_DONE) return Error("insert job");
  r.id = JobId(sqlite3_last_insert_rowid(db_));
  return Status::Ok();
}

Status Store::UpdateJob(const JobRecord& r) {
  Stmt q(db_,
         "UPDATE jobs SET state = ?, attempt = ?, pid = ?, start_ticks = ?, gpus = ?, "
         "devices = ?, exit_code = ?, signal = ?, first_start = ?, last_start = ?, "
         "end_time = ?, preemptions = ?, message = ? WHERE id = ?");
  q.Bind(1, ToString(r.state)).Bind(2, r.attempt).Bind(3, r.pid).Bind(4, r.start_ticks);
  q.Bind(5, GpusToJson(r.gpus_held).dump()).Bind(6, r.devices).Bind(7, r.exit_code);
  q.Bind(8, r.signal).Bind(9, r.first_start).Bind(10, r.last_start).Bind(11, r.end);
  q.Bind(12, r.preemptions).Bind(13, r.message).Bind(14, r.id.value());
  if (q.Step() != SQLITE_DONE) return Error(fmt::format("update job {}", r.id.value()));
  return Status::Ok();
}

StatusOr<std::vector<JobRecord>> Store::LoadJobs() {
  Stmt q(db_,
         "SELECT id, request, submit, state, attempt, pid, start_ticks, gpus, devices, "
         "exit_code, signal, first_start, last_start, end_time, preemptions, message FROM jobs "
         "ORDER BY id");
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
    r.message = q.Text(15);
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return Error("load jobs");
  return out;
}

StatusOr<int64_t> Store::AppendEvent(const Event& e) {
  Stmt q(db_, "INSERT INTO events(t, kind, job, detail) VALUES(?, ?, ?, ?)");
  q.Bind(1, e.t).Bind(2, ToString(e.kind)).Bind(3, e.job.value());
  q.Bind(4, e.detail.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  if (q.Step() != SQLITE_DONE) return Error("append event");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

StatusOr<std::vector<EventRow>> Store::LoadEvents(int64_t after, int limit, bool inputs_only,
                                                  bool skip_ticks) {
  std::string sql = "SELECT seq, t, kind, job, detail FROM events WHERE seq > ?";
  if (inputs_only) {
    std::vector<std::string> names;
    for (const auto& k : EventKinds()) {
      if (k.core_input) names.push_back(fmt::format("'{}'", k.name));
    }
    sql += fmt::format(" AND kind IN ({})", fmt::join(names, ", "));
  }
  if (skip_ticks) sql += fmt::format(" AND kind != '{}'", ToString(EventKind::kTick));
  sql += " ORDER BY seq";
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
  return out;
}

}  // namespace tiresias
