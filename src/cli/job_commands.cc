// The job commands of the client, in the style of squeue, scontrol and sacct: ls, show, logs,
// cancel, hold, release, requeue, wait, history (submit: submit_command.cc; explain:
// explain_command.cc). Each is one or a few API calls (api/api_server.h) rendered for people,
// or printed as the API's JSON with -o json. A job is named by its id or, for an array task,
// ARRAY_INDEX ("42_7").
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/output.h"
#include "common/strings.h"
#include "live/submit_request.h"

namespace tiresias {
namespace {

// Whether a job belongs to a VC (Str() would say "-" for no field at all).
bool HasVc(const nlohmann::json& j) {
  const auto it = j.find("vc");
  return it != j.end() && it->is_string() && !it->get<std::string>().empty();
}

// "EXIT:SIGNAL" as sacct and scontrol print it: 0 for the part that does not apply (null in
// the API: a job a signal ended has no exit code).
std::string SlurmExitCode(const nlohmann::json& j) {
  auto part = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? std::max(it->get<int64_t>(), int64_t{0})
                                                    : int64_t{0};
  };
  return fmt::format("{}:{}", part("exit_code"), part("signal"));
}

struct ListFlags {
  bool all = false, me = false;
  std::string state, user, vc;
  int64_t limit = 0, offset = 0;
};

// Whether `ref`, as the user gave it, names a whole array: an id without an index whose job
// (`j`, what GET /v1/jobs/REF answered) is the array's first task (an array's id is its first
// task's: ref ID_INDEX, whatever its first index; it took only ID_0, so `wait` of an array
// 1-3 waited for task 1 alone).
bool NamesArray(const std::string& ref, const nlohmann::json& j) {
  return ref.find('_') == std::string::npos && ShownRef(j).starts_with(Str(j, "id") + "_");
}

// The ID column's width: 9, or the longest ref listed (an array's 30107_9997 pushed the other
// columns out of line).
size_t RefWidth(const nlohmann::json& jobs) {
  size_t w = 9;
  for (const auto& j : jobs) w = std::max(w, ShownRef(j).size());
  return w;
}

// Where a job runs, as squeue's NODELIST: its nodes, and locally the GPU devices too
// ("local:0,1"), in Slurm its job id too ("slurm:17 node1,node2"); "" when it holds none.
std::string Where(const nlohmann::json& j) {
  const auto nodes = j.value("nodes", std::vector<std::string>{});
  if (nodes.empty()) return "";
  if (!Str(j, "engine_job").empty())
    return "slurm:" + Str(j, "engine_job") + " " + Join(nodes, ",");
  std::string where = Join(nodes, ",");
  if (!Str(j, "devices").empty()) {
    where += ":" + Str(j, "devices");
  } else if (const std::string a = Str(j, "allocation");
             nodes.size() == 1 && a.find(':') != a.npos) {
    where += ":" + a.substr(a.find(':') + 1);  // placed, not launched yet: its GPUs ("n0:0-1")
  }
  // Placed, waiting to launch: said so (it was a bare "local").
  if (Str(j, "state") == "starting") where += " (" + Str(j, "reason") + ")";
  return where;
}

int List(const Common& o, const ListFlags& f) {
  int rc = 0;
  auto r = Fetch(o,
                 "/v1/jobs" + UrlQuery({{"state", f.state},
                                        {"user", f.user},
                                        {"me", f.me ? "1" : ""},
                                        {"vc", f.vc},
                                        {"active", f.all || !f.state.empty() ? "" : "1"},
                                        {"limit", f.limit > 0 ? std::to_string(f.limit) : ""},
                                        {"offset", f.offset > 0 ? std::to_string(f.offset) : ""},
                                        {"estimates", o.out == OutputFormat::kWide ? "1" : ""}}),
                 rc);
  if (!r) return rc;
  const bool wide = o.out == OutputFormat::kWide;
  // The VC column when the cluster has tenants (a job has a VC).
  const bool vcs = std::any_of(r->begin(), r->end(), HasVc);
  const size_t idw = RefWidth(*r);
  std::cout << fmt::format("{:>{}} {:<16} {:<10} {:>4} {:<10} {:>9} {:>9} {:>5}", "ID", idw, "NAME",
                           "USER", "GPUS", "STATE", "TIME", "ATTAINED", "QUEUE");
  if (vcs) std::cout << fmt::format(" {:<12}", "VC");
  if (wide)
    std::cout << fmt::format(" {:>9} {:>10} {:>7} {:<20} {:>10}", "WAIT", "TIME_LIMIT", "PREEMPT",
                             "SUBMITTED", "START_EST");
  std::cout << "  NODELIST(REASON)\n";
  for (const auto& j : *r) {
    const std::string st = Str(j, "state");
    std::string where = !Where(j).empty() ? Where(j)
                        : Str(j, "reason") != "-" && !Str(j, "reason").empty()
                            ? "(" + Str(j, "reason") + ")"
                            : (Terminal(st) ? Str(j, "message") : "-");
    // A job that ran and did not finish: why, after where it ran ("exit 126: cannot open...").
    if (Terminal(st) && st != "finished" && !Where(j).empty() && j.contains("message") &&
        j["message"].is_string() && !j["message"].get<std::string>().empty()) {
      std::string why = Str(j, "message");
      if (why.starts_with(st + ": ")) why.erase(0, st.size() + 2);  // the STATE column says it
      where += " (" + why + ")";
    }
    std::cout << fmt::format("{:>{}} {:<16} {:<10} {:>4} {:<10} {:>9} {:>9.3f} {:>5}", ShownRef(j),
                             idw, Clip(Str(j, "name"), 16), Clip(Str(j, "user"), 10),
                             j.value("gpus", 0), st, Human(j.value("time_s", 0.0)),
                             j.value("attained_gpu_s", 0.0) / 3600, Str(j, "queue"));
    if (vcs) std::cout << fmt::format(" {:<12}", Clip(Str(j, "vc"), 12));
    if (wide) {
      // START_EST: for a waiting job, the likely (p50) start from now: a preempted one's too
      // (under dlas most waiting jobs; it showed only jobs never started).
      std::string est = "-";
      if (j.contains("start_estimate_ms") && Str(j, "state") == "pending") {
        const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
        est = "~" +
              Human(std::max<double>(0, (j["start_estimate_ms"].get<int64_t>() - now) / 1000.0));
      }
      std::cout << fmt::format(" {:>9} {:>10} {:>7} {:<20} {:>10}", Human(j.value("wait_s", 0.0)),
                               Str(j, "time_limit"), j.value("preemptions", 0),
                               IsoTime(j["submitted_at_ms"]), est);
    }
    std::cout << "  " << where << "\n";
  }
  return 0;
}

// `events`: its timeline, if fetched already (an array's, all at once); else asked.
void ShowOne(const Common& o, const nlohmann::json& j, const nlohmann::json* events = nullptr);

// An array's id names every task (as `scontrol show job` of an array's id): each is shown,
// and -o json gives their list; a task (42_7) or a plain job, its object.
int Show(const Common& o, const std::string& ref) {
  int rc = 0;
  const Common text{.conn = o.conn};
  auto r = Fetch(text, "/v1/jobs/" + ref, rc);
  if (!r) return rc;
  nlohmann::json jobs = nlohmann::json::array({*r});
  const bool whole_array = NamesArray(ref, *r);
  if (whole_array) {
    auto tasks = Fetch(text, "/v1/jobs?array=" + Str(*r, "id"), rc);
    if (!tasks) return rc;
    jobs = std::move(*tasks);
  }
  if (o.json()) {
    std::cout << (whole_array ? jobs : jobs.front()).dump(2) << "\n";
    return 0;
  }
  // An array's timelines at once (one request per task took 20 s for 10,000 tasks), a page of
  // events at a time; from a server without `array=` (events of other jobs come), or when a
  // page fails, each task's own.
  std::map<int64_t, nlohmann::json> timelines;
  bool together = whole_array;
  if (whole_array) {
    const int64_t first = jobs.front().value("id", int64_t{0});
    const int64_t last = jobs.back().value("id", int64_t{0});
    constexpr int kPage = 100000;
    for (int64_t after = 0; together;) {
      int quiet = 0;
      auto page = Fetch(
          Common{.conn = o.conn},
          fmt::format("/v1/events?array={}&after={}&limit={}", Str(*r, "id"), after, kPage), quiet);
      if (!page || !page->is_array()) together = false;
      if (!together) break;
      for (auto& e : *page) {
        const int64_t job = e.value("job", int64_t{0});
        if (job < first || job > last) together = false;
        timelines[job].push_back(e);
        after = std::max(after, e.value("seq", int64_t{0}));
      }
      if (page->size() < static_cast<size_t>(kPage)) break;
    }
  }
  for (size_t k = 0; k < jobs.size(); ++k) {
    if (k > 0) std::cout << "\n";
    const nlohmann::json none = nlohmann::json::array();
    auto t = timelines.find(jobs[k].value("id", int64_t{0}));
    ShowOne(o, jobs[k], !together ? nullptr : t != timelines.end() ? &t->second : &none);
  }
  return 0;
}

void ShowOne(const Common& o, const nlohmann::json& j, const nlohmann::json* events) {
  int rc = 0;
  std::optional<nlohmann::json> ev;
  if (events) {
    ev = *events;
  } else {
    ev = Fetch(Common{.conn = o.conn}, fmt::format("/v1/events?job={}&limit=1000", Str(j, "id")),
               rc);
  }
  std::vector<std::string> argv = j.value("argv", std::vector<std::string>{});
  for (auto& a : argv) a = EscapeControl(a);
  const int kills = j.value("kills", 0), preemptions = j.value("preemptions", 0);
  std::cout << fmt::format("JobId={}{} Name={} User={}{}\n", Str(j, "id"),
                           ShownRef(j) != Str(j, "id") ? " ArrayTask=" + ShownRef(j) : "",
                           Str(j, "name"), Str(j, "user"), HasVc(j) ? " VC=" + Str(j, "vc") : "");
  std::cout << fmt::format("   State={} Reason={} Queue={} Held={} Attempt={}\n", Str(j, "state"),
                           Str(j, "reason") == "" ? "None" : Str(j, "reason"), Str(j, "queue"),
                           !j.value("held", false)         ? "no"
                           : Str(j, "held_by") == "admin"  ? "yes (by an admin)"
                           : Str(j, "held_by") == "engine" ? "yes (by an admin, in Slurm)"
                                                           : "yes",
                           j.value("attempt", -1) < 0 ? "none" : Str(j, "attempt"));
  const int lost_runs = j.value("lost_with_node", 0);
  const int checkpointed = j.value("checkpointed", preemptions - kills - lost_runs);
  const int stopping = preemptions - kills - lost_runs - checkpointed;
  std::cout << fmt::format(
      "   Preemptions={} (checkpointed {}, killed at the grace deadline {}{}{}) Lost={:.3f} "
      "GPU-h{}\n",
      preemptions, checkpointed, kills,
      lost_runs > 0 ? fmt::format(", lost with their node {}", lost_runs) : "",
      stopping > 0 ? ", 1 being stopped now" : "", j.value("lost_gpu_s", 0.0) / 3600,
      j.contains("stop_at_checkpoint_ms")
          ? fmt::format(" StopAtCheckpoint={}",
                        Human(j["stop_at_checkpoint_ms"].get<double>() / 1000))
          : "");
  std::cout << fmt::format("   SubmitTime={} StartTime={} LastStart={} EndTime={}\n",
                           IsoTime(j["submitted_at_ms"]), IsoTime(j["first_start_ms"]),
                           IsoTime(j["last_start_ms"]), IsoTime(j["end_ms"]));
  std::cout << fmt::format("   RunTime={} Waited={} TimeLimit={} Attained={:.3f} GPU-h\n",
                           Human(j.value("time_s", 0.0)), Human(j.value("wait_s", 0.0)),
                           Has(j, "time_limit") ? Str(j, "time_limit") : "UNLIMITED",
                           j.value("attained_gpu_s", 0.0) / 3600);
  std::cout << fmt::format("   LastCheckpoint={}{}\n",
                           j.value("last_checkpoint_ms", nlohmann::json()).is_null()
                               ? std::string("never reported (work lost if stopped: unknown)")
                               : IsoTime(j["last_checkpoint_ms"]),
                           j.contains("at_risk_gpu_s")
                               ? fmt::format(" AtRisk={:.3f} GPU-h (since it, if stopped now)",
                                             j.value("at_risk_gpu_s", 0.0) / 3600)
                               : "");
  std::cout << fmt::format("   GPUs={} TasksPerGpu={} Nodes={} Devices={} Model={}\n",
                           Str(j, "gpus"), j.value("tasks_per_gpu", 0),
                           Join(j.value("nodes", std::vector<std::string>{}), ","),
                           Str(j, "devices"), Str(j, "model"));
  if (!Str(j, "engine_job").empty()) {
    std::cout << fmt::format("   SlurmJobId={} SlurmState={}\n", Str(j, "engine_job"),
                             Str(j, "engine_state").empty() ? "-" : Str(j, "engine_state"));
  }
  if (Has(j, "dependencies") && !j["dependencies"].empty()) {
    std::cout << "   Dependency="
              << EscapeControl(fmt::format(
                     "{}", fmt::join(j["dependencies"].get<std::vector<std::string>>(), ",")))
              << "\n";
  }
  std::cout << fmt::format("   Command={}\n   WorkDir={}\n   StdOut={}\n   StdErr={}\n",
                           Join(argv, " "), Str(j, "cwd"), Str(j, "stdout_path"),
                           Str(j, "stderr_path"));
  if (Has(j, "exit_code") || Has(j, "signal")) {
    std::cout << fmt::format("   ExitCode={}\n", SlurmExitCode(j));
  }
  std::cout << fmt::format("   Message={}\n", Str(j, "message"));
  if (ev) {
    std::cout << "Timeline:\n";
    for (const auto& e : *ev) {
      std::cout << fmt::format("   {} {:<9} {}\n", IsoTime(e["time_ms"]), Str(e, "kind"),
                               Str(e, "text"));
    }
  }
}

int Logs(const Common& o, const std::string& ref, bool follow, int64_t tail, bool stderr_stream) {
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  const std::string stream = stderr_stream ? "&stream=stderr" : "";
  // An array's id is its first task's too: each task has its own log, and that is said (on
  // stderr: the log itself stays what stdout carries).
  if (ref.find('_') == std::string::npos) {
    if (auto j = c->GetJson("/v1/jobs/" + ref); j.ok() && NamesArray(ref, *j)) {
      std::cerr << fmt::format(
          "tiresias: job {} is an array: this is task {}'s log (`tiresias logs {}_N` for "
          "task N)\n",
          ref, ShownRef(*j), ref);
    }
  }
  int64_t offset = 0;
  std::string file;  // the file `offset` is in: a log rotated since is read to its end first
  // Without -f: the log as it was at the first reply, to its end then (the file and its size;
  // a rotation since moved it to output.log.1, which the server reads on).
  std::string stop_file;
  int64_t stop_at = -1;
  for (bool first = true;; first = false) {
    // --tail 0: nothing of what is there (the last line is asked for its end offset only).
    const std::string tail_q =
        first && tail >= 0 ? fmt::format("&tail_lines={}", std::max<int64_t>(tail, 1)) : "";
    // -f: through a restart of serve (for up to 10 minutes without it), as `wait`.
    const std::string path = fmt::format("/v1/jobs/{}/logs?offset={}{}{}{}", ref, offset,
                                         file.empty() ? "" : "&log_file=" + file, stream, tail_q);
    auto r = follow ? c->GetThroughRestarts(path, o.conn, std::chrono::seconds(600)) : c->Get(path);
    if (!r.ok()) return Error(r.status());
    if (Status s = ErrorOf(*r); !s.ok()) return Error(s);
    if (!(first && tail == 0)) std::cout << r->body << std::flush;
    const auto next = ParseInt(r->next_offset);
    const auto end = ParseInt(r->log_end);
    if (!next) return Error(IoError("the server's reply has no X-Next-Offset"));
    offset = *next;
    if (!r->log_file.empty()) file = r->log_file;
    // --tail 0: from the end (the last line, read to learn it, may be longer than a reply).
    if (first && tail == 0 && end) offset = *end;
    if (first) {
      stop_file = file;
      stop_at = end.value_or(-1);
    }
    // Without -f: on to that end (one reply carries at most 1 MiB: only the first was printed,
    // cut mid-line; found by a tester). An older serve, saying no end: its one reply.
    if (!follow && (r->body.empty() || stop_at < 0 || (first && tail == 0) ||
                    (file == stop_file && offset >= stop_at))) {
      return 0;
    }
    if (follow && r->body.empty() && Terminal(r->job_state)) return 0;
    if (r->body.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

// What a job's end says as an exit status: 0 finished, its exit code (or 128 + signal) when
// it failed, 124 when it ran out of time (as timeout(1)), 125 when it was cancelled.
int ExitStatusOf(const nlohmann::json& j) {
  const std::string st = j.value("state", "");
  if (st == "finished") return 0;
  if (st == "timeout") return 124;
  if (st == "cancelled") return 125;
  if (Has(j, "signal") && j["signal"].get<int>() > 0) return 128 + j["signal"].get<int>();
  const int code = Has(j, "exit_code") ? j["exit_code"].get<int>() : 1;
  return code > 0 ? code : 1;
}

int Wait(const Common& o, const std::vector<std::string>& refs, double timeout_s) {
  auto c = ApiClient::Connect(o.conn);
  if (!c.ok()) return Error(c.status());
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  // Through a restart of serve: until the wait's own deadline, or 10 minutes without it.
  auto get = [&](const std::string& path) {
    auto patience = std::chrono::seconds(600);
    if (timeout_s > 0) {
      patience =
          std::max(std::chrono::seconds(0), std::chrono::duration_cast<std::chrono::seconds>(
                                                deadline - std::chrono::steady_clock::now()));
    }
    return JsonOf(c->GetThroughRestarts(path, o.conn, patience));
  };
  for (;;) {
    int worst = 0;
    bool all_ended = true;
    nlohmann::json states = nlohmann::json::array();
    for (const auto& ref : refs) {
      auto j = get("/v1/jobs/" + ref);
      if (!j.ok()) return Error(j.status());
      std::vector<nlohmann::json> jobs = {*j};
      // An array's id (its first task's): every task of the array, as cancel does.
      if (NamesArray(ref, *j)) {
        auto tasks = get("/v1/jobs?array=" + ref);
        if (!tasks.ok()) return Error(tasks.status());
        jobs.assign(tasks->begin(), tasks->end());
      }
      for (const auto& t : jobs) {
        states.push_back(t);
        if (!Terminal(t.value("state", ""))) all_ended = false;
        worst = std::max(worst, ExitStatusOf(t));
      }
      if (!all_ended) break;
    }
    if (all_ended) {
      if (o.json()) std::cout << states.dump(2) << "\n";
      for (const auto& j : states) {
        if (!o.json()) std::cout << fmt::format("job {}: {}\n", ShownRef(j), Str(j, "state"));
      }
      return worst;
    }
    if (timeout_s > 0 && std::chrono::steady_clock::now() > deadline) {
      std::cerr << "tiresias: wait: timed out\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
}

// "2026-11-30", "2026-11-30T20:00[:00]" (UTC), or an age: "90m", "2h", "3d" ago; wall ms.
StatusOr<int64_t> ParseWhen(const std::string& s) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  if (!s.empty() && std::string_view("smhd").find(s.back()) != std::string_view::npos) {
    const int64_t unit = s.back() == 's'   ? 1000
                         : s.back() == 'm' ? 60000
                         : s.back() == 'h' ? 3600000
                                           : 86400000;
    constexpr int64_t kCentury = int64_t{100} * 366 * 86400000;  // ages up to a century
    if (auto n = ParseInt(std::string_view(s).substr(0, s.size() - 1));
        n && *n >= 0 && *n <= kCentury / unit) {
      return now - *n * unit;
    }
  }
  // UTC as tiresias prints it ("...Z"), with "+00:00", or as is.
  std::string utc = s;
  for (const char* zone : {"Z", "+00:00"}) {
    if (utc.size() > std::strlen(zone) && utc.ends_with(zone) && utc.find('T') != std::string::npos)
      utc.resize(utc.size() - std::strlen(zone));
  }
  for (const char* fmt : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"}) {
    std::tm tm{};
    std::istringstream in(utc);
    in >> std::get_time(&tm, fmt);
    if (in.fail() || in.peek() != EOF) continue;
    // A date that does not exist (2026-02-30) is refused, not moved to another day.
    const std::tm given = tm;
    const time_t t = timegm(&tm);
    std::tm back{};
    if (gmtime_r(&t, &back) && back.tm_year == given.tm_year && back.tm_mon == given.tm_mon &&
        back.tm_mday == given.tm_mday && back.tm_hour == given.tm_hour &&
        back.tm_min == given.tm_min && back.tm_sec == given.tm_sec) {
      return int64_t{t} * 1000;
    }
  }
  return InvalidArgument(fmt::format(
      "'{}' is not a time: YYYY-MM-DD[THH:MM[:SS][Z]] (UTC) or an age such as 90m, 2h, 3d", s));
}

struct HistoryFlags {
  std::string user, state, since, until, vc;
  bool me = false;
  int64_t limit = 0;
};

int History(const Common& o, const HistoryFlags& f) {
  std::string since, until;
  for (const auto& [text, out] : {std::pair{&f.since, &since}, std::pair{&f.until, &until}}) {
    if (text->empty()) continue;
    auto t = ParseWhen(*text);
    if (!t.ok()) {  // a value out of range: a usage error
      std::cerr << "tiresias: " << t.status().message() << "\n";
      return 2;
    }
    *out = std::to_string(*t);
  }
  int rc = 0;
  auto r = Fetch(o,
                 "/v1/history" + UrlQuery({{"user", f.user},
                                           {"me", f.me ? "1" : ""},
                                           {"vc", f.vc},
                                           {"state", f.state},
                                           {"since_ms", since},
                                           {"until_ms", until},
                                           {"limit", f.limit > 0 ? std::to_string(f.limit) : ""},
                                           {"newest", f.limit > 0 ? "1" : ""}}),
                 rc);
  if (!r) return rc;
  const size_t idw = RefWidth(*r);
  std::cout << fmt::format(
      "{:>{}} {:<16} {:<10} {:<10} {:<20} {:<20} {:<20} {:>9} {:>9} {:>7} {:>9} {:>8}\n", "ID", idw,
      "NAME", "USER", "STATE", "SUBMIT", "START", "END", "ELAPSED", "GPU-HOURS", "PREEMPT",
      "LOST-GPUH", "EXITCODE");
  double used = 0, lost = 0;
  for (const auto& j : *r) {
    used += j.value("attained_gpu_s", 0.0) / 3600;
    lost += j.value("lost_gpu_s", 0.0) / 3600;
    // As sacct's Elapsed: from the (first) start to the end; never started: 0.
    const double elapsed =
        j["end_ms"].is_number() && j["first_start_ms"].is_number()
            ? (j["end_ms"].get<int64_t>() - j["first_start_ms"].get<int64_t>()) / 1000.0
            : 0;
    std::cout << fmt::format(
        "{:>{}} {:<16} {:<10} {:<10} {:<20} {:<20} {:<20} {:>9} {:>9.3f} {:>7} {:>9.3f} {:>8}\n",
        ShownRef(j), idw, Clip(Str(j, "name"), 16), Clip(Str(j, "user"), 10), Str(j, "state"),
        IsoTime(j["submitted_at_ms"]), IsoTime(j["first_start_ms"]), IsoTime(j["end_ms"]),
        Human(elapsed), j.value("attained_gpu_s", 0.0) / 3600, j.value("preemptions", 0),
        j.value("lost_gpu_s", 0.0) / 3600,
        Has(j, "exit_code") || Has(j, "signal") ? SlurmExitCode(j) : "-");
  }
  if (!r->empty()) {
    std::cout << fmt::format("{} jobs: {:.3f} GPU-hours used, {:.3f} lost to preemptions\n",
                             r->size(), used, lost);
  }
  return 0;
}

}  // namespace

void AddJobCommands(CLI::App& app, int& rc) {
  AddSubmitCommand(app, rc);
  static Common o;
  static ListFlags lf;
  static HistoryFlags hf;
  static std::string ref;
  static std::vector<std::string> refs;
  static bool follow = false, stderr_stream = false;
  static int64_t tail = -1;  // not given: the whole log
  static double wait_timeout = 0;
  static bool requeue_hold = false;

  auto* ls = app.add_subcommand("ls", "list jobs, like squeue: where each runs or why it waits");
  AddConnFlags(ls, o);
  AddOutputFlag(ls, o, /*wide=*/true);
  ls->add_flag("-a,--all", lf.all, "include jobs that have ended");
  ls->add_option("--state,-t", lf.state, "only these states, comma-separated")
      ->transform(JobStates());
  ls->add_option("--user,-u", lf.user, "only this user's jobs");
  ls->add_option("--vc,--account,-A", lf.vc, "only this virtual cluster's jobs");
  ls->add_flag("--me", lf.me, "only my jobs");
  ls->add_option("--limit", lf.limit, "at most this many (0: all)")->check(IntegerIn(0, 1000000));
  ls->add_option("--offset", lf.offset, "skip this many (paging)")->check(IntegerIn(0, INT64_MAX));
  ls->callback([&rc] { rc = List(o, lf); });

  auto* show = app.add_subcommand(
      "show",
      "one job in detail, with its timeline (like scontrol show job; an array's id: every task)");
  AddConnFlags(show, o);
  AddOutputFlag(show, o);
  show->add_option("job", ref, "job id or ARRAY_INDEX")->required()->check(JobRef());
  show->callback([&rc] { rc = Show(o, ref); });

  auto* logs = app.add_subcommand("logs", "print a job's output");
  AddConnFlags(logs, o);
  logs->add_option("job", ref, "job id or ARRAY_INDEX")->required()->check(JobRef());
  logs->add_flag("-f,--follow", follow, "keep printing until the job ends");
  logs->add_option("--tail", tail,
                   "start with the last N lines (0: none, as tail -n 0; with -f, "
                   "only what comes)")
      ->check(IntegerIn(0, 1000000));
  logs->add_flag("--stderr", stderr_stream, "its stderr (when --error sent it elsewhere)");
  logs->callback([&rc] { rc = Logs(o, ref, follow, tail, stderr_stream); });

  for (const auto& [verb, help] :
       {std::pair{"cancel", "cancel jobs (an array's id: all its tasks)"},
        std::pair{"hold", "hold waiting jobs until released"},
        std::pair{"release", "release held jobs"},
        std::pair{"requeue",
                  "stop running jobs (checkpoint signal, grace) and queue them again"}}) {
    auto* c = app.add_subcommand(verb, help);
    AddConnFlags(c, o);
    AddOutputFlag(c, o);
    c->add_option("jobs", refs, "job ids or ARRAY_INDEX")->required()->check(JobRef());
    if (std::string_view(verb) == "requeue") {
      c->add_flag("--hold", requeue_hold,
                  "and hold them, waiting until `tiresias release` (scontrol requeuehold)");
    }
    c->callback([&rc, v = std::string(verb)] {
      rc = ActOnJobs(o, v == "requeue" && requeue_hold ? "requeuehold" : v, refs);
    });
  }

  auto* wait = app.add_subcommand(
      "wait", "wait until jobs end; exit 0 if all finished, else the worst status (documented)");
  AddConnFlags(wait, o);
  AddOutputFlag(wait, o);
  wait->add_option("jobs", refs, "job ids or ARRAY_INDEX")->required()->check(JobRef());
  wait->add_option("--timeout", wait_timeout, "give up after this many seconds (0 = never)")
      ->check(NumberIn(0, kMaxRequestDurationS));
  wait->callback([&rc] { rc = Wait(o, refs, wait_timeout); });

  auto* hist = app.add_subcommand("history", "jobs that ended, like sacct");
  AddConnFlags(hist, o);
  AddOutputFlag(hist, o);
  hist->add_option("--user,-u", hf.user, "only this user's jobs");
  hist->add_option("--vc,--account,-A", hf.vc, "only this virtual cluster's jobs");
  hist->add_flag("--me", hf.me, "only my jobs");
  hist->add_option("--state,-s", hf.state,
                   "only these end states (finished, failed, cancelled, timeout)")
      ->transform(JobStates(/*ended_only=*/true));
  hist->add_option("--since,-S", hf.since,
                   "ended at or after: YYYY-MM-DD[THH:MM[:SS]] UTC, or 2h, 3d ago");
  hist->add_option("--until,-E", hf.until, "ended before (same forms)");
  hist->add_option("--limit", hf.limit, "only the last this many (the newest jobs; 0: all)")
      ->check(IntegerIn(0, 1000000));
  hist->callback([&rc] { rc = History(o, hf); });

  AddExplainCommand(app, rc);
}

}  // namespace tiresias
