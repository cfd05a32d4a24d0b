// Routes of the REST API onto LiveScheduler, with identity and visibility (see api_server.h).
#include "api/api_server.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "api/api_reply.h"
#include "common/accounts.h"
#include "common/strings.h"
#include "core/event_log.h"
#include "live/submit_request.h"

namespace tiresias {
namespace {

using api::Dump;
using api::Echo;
using api::Fail;
using api::QueryInt;
using api::Reply;
using api::Visible;

// A SAX pass that only measures nesting, so a deep body is refused before a tree of it (and
// its recursive destruction or printing) exists.
// A request body's shape before it is parsed: not nested too deep, and no object with a key
// twice (`{"gpus": 1, "gpus": 2}` took the last silently).
struct DepthCheck : nlohmann::json_sax<nlohmann::json> {
  int depth = 0;
  bool too_deep = false;
  std::vector<std::set<std::string>> keys;  // of each open object, innermost last
  std::optional<std::string> twice;         // the first key found twice
  bool Enter() {
    too_deep = ++depth > kMaxJsonDepth;
    return !too_deep;
  }
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    keys.emplace_back();
    return Enter();
  }
  bool key(string_t& k) override {
    if (!keys.back().insert(k).second) twice = k;
    return !twice;
  }
  bool end_object() override {
    keys.pop_back();
    return --depth, true;
  }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_array() override { return --depth, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

// Why a change to an array's tasks was refused, each task named as its user names it
// ("job 64_1", not its own id 65), the tasks refused alike in one line ("jobs 64_0, 64_1:
// already finished"): it named only the last task refused.
class RefusedTasks {
 public:
  // Whether some task was refused for more than its state (an admin's hold, a fault): what a
  // change that did the others must still say (ended tasks are left as they are, quietly).
  bool AnyButState() const { return code_ != StatusCode::kOk && !StateOnly(code_); }
  // Whether `s` refuses a task for its state only (an ended task, one the change cannot take).
  static bool ForState(const Status& s) { return StateOnly(s.code()); }
  void Add(JobId id, const std::string& ref, const Status& s) {
    // The reply's code: a fault (a failed write) before a refusal that only says the state.
    if (code_ == StatusCode::kOk || (StateOnly(code_) && !StateOnly(s.code()))) code_ = s.code();
    const std::string own = fmt::format("job {}: ", id.value());
    const bool named = s.message().starts_with(own);
    const std::string why = named ? s.message().substr(own.size()) : s.message();
    auto g = std::find_if(groups_.begin(), groups_.end(),
                          [&](const Group& x) { return x.why == why && x.named == named; });
    if (g == groups_.end()) g = groups_.insert(groups_.end(), Group{why, named, {}});
    g->refs.push_back(ref);
  }
  Status Said() const {
    constexpr size_t kNamed = 5;  // a large array's tasks: the first few, then a count
    std::vector<std::string> parts;
    for (const Group& g : groups_) {
      if (!g.named) {
        parts.push_back(g.why);
        continue;
      }
      const size_t shown = std::min(g.refs.size(), kNamed);
      std::string who =
          Join({g.refs.begin(), g.refs.begin() + static_cast<ptrdiff_t>(shown)}, ", ");
      if (g.refs.size() > shown) who += fmt::format(" and {} more", g.refs.size() - shown);
      parts.push_back(fmt::format("{} {}: {}", g.refs.size() == 1 ? "job" : "jobs", who, g.why));
    }
    return Status(code_, Join(parts, "; "));
  }

 private:
  struct Group {
    std::string why;
    bool named;  // the message began "job ID: " (then said once per group, with the refs)
    std::vector<std::string> refs;
  };
  static bool StateOnly(StatusCode c) {
    return c == StatusCode::kFailedPrecondition || c == StatusCode::kNotFound;
  }
  StatusCode code_ = StatusCode::kOk;
  std::vector<Group> groups_;
};

}  // namespace

StatusOr<nlohmann::json> ParseJsonBody(const std::string& body) {
  DepthCheck depth;
  const bool ok = nlohmann::json::sax_parse(body, &depth, nlohmann::json::input_format_t::json,
                                            /*strict=*/true, /*ignore_comments=*/false);
  if (depth.too_deep) {
    return InvalidArgument(fmt::format("request body nested deeper than {} levels", kMaxJsonDepth));
  }
  if (depth.twice) {
    return InvalidArgument(
        fmt::format("request body: field {} given twice", Echo(nlohmann::json(*depth.twice))));
  }
  if (!ok) return InvalidArgument("request body is not valid JSON");
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("request body is not valid JSON");
  return j;
}

StatusOr<SubmitRequest> ParseSubmit(const std::string& body) {
  auto parsed = ParseJsonBody(body);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& j = *parsed;
  if (!j.is_object()) return InvalidArgument("request body must be a JSON object");
  SubmitRequest r;
  for (const auto& item : j.items()) {
    // Named, not structured bindings: lambdas cannot capture those before clang 16.
    const std::string& key = item.key();
    const nlohmann::json& v = item.value();
    auto bad = [&](const char* want) {
      return InvalidArgument(fmt::format("field '{}': expected {}, got {}", key, want, Echo(v)));
    };
    if (key == "name" || key == "user" || key == "model" || key == "cwd" || key == "vc") {
      if (!v.is_string()) return bad("a string");
      (key == "name"    ? r.name
       : key == "user"  ? r.user
       : key == "model" ? r.model
       : key == "vc"    ? r.vc
                        : r.cwd) = v.get<std::string>();
    } else if (key == "gpus") {
      if (!v.is_number_integer()) return bad("an integer");
      // Larger than int64 (a uint64 only): kept as the largest, which Validate refuses.
      r.gpus =
          v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX ? INT64_MAX : v.get<int64_t>();
    } else if (key == "argv") {
      if (!v.is_array() || v.empty()) return bad("a non-empty array of strings");
      for (const auto& a : v) {
        if (!a.is_string()) return bad("a non-empty array of strings");
        r.argv.push_back(a.get<std::string>());
      }
    } else if (key == "env") {
      if (!v.is_object()) return bad("an object of strings");
      for (const auto& [k, x] : v.items()) {
        if (!x.is_string()) return bad("an object of strings");
        r.env.emplace_back(k, x.get<std::string>());
      }
    } else if (key == "duration_s" || key == "stop_at_checkpoint_s") {
      if (!v.is_number()) return bad("a number of seconds");
      if (key == "duration_s") {
        r.duration_s = v.get<double>();
      } else {
        r.stop_at_checkpoint_s = v.get<double>();
      }
    } else if (key == "time" || key == "dependency" || key == "array" || key == "output" ||
               key == "error") {
      if (!v.is_string()) return bad("a string");
      (key == "time"         ? r.time
       : key == "dependency" ? r.dependency
       : key == "array"      ? r.array
       : key == "output"     ? r.output
                             : r.error) = v.get<std::string>();
    } else if (key == "hold" || key == "keep_checkpoints") {
      if (!v.is_boolean()) return bad("true or false");
      (key == "hold" ? r.hold : r.keep_checkpoints) = v.get<bool>();
    } else if (key == "tasks_per_gpu") {
      if (!v.is_number_integer()) return bad("an integer");
      r.tasks_per_gpu =
          v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX ? INT64_MAX : v.get<int64_t>();
    } else {
      return InvalidArgument(
          fmt::format("unknown field {} (known: name, user, model, gpus, argv, cwd, env, "
                      "duration_s, time, dependency, array, output, error, hold, tasks_per_gpu, "
                      "keep_checkpoints, stop_at_checkpoint_s, vc)",
                      Echo(nlohmann::json(key))));
    }
  }
  return r;  // LiveScheduler::Submit validates the values
}

ApiServer::ApiServer(LiveScheduler& sched, Identities& ids, HttpLimits limits)
    : sched_(sched), ids_(ids), http_([this](const HttpRequest& r) { return Handle(r); }, limits) {}

StatusOr<int> ApiServer::Start(const std::string& host, int port, const std::string& unix_socket) {
  auto bound = http_.StartTcp(host, port);
  if (!bound.ok()) return bound.status();
  if (!unix_socket.empty()) {
    if (Status s = http_.StartUnix(unix_socket); !s.ok()) return s;
  }
  return bound;
}

void ApiServer::Stop() {
  http_.Stop();
}

HttpResponse ApiServer::Handle(const HttpRequest& req) {
  const auto start = std::chrono::steady_clock::now();
  HttpResponse resp = Dispatch(req);
  sched_.metrics().ObserveRequest(
      RouteOf(req.path), MethodOf(req.method), resp.status,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return resp;
}

HttpResponse ApiServer::Dispatch(const HttpRequest& req) {
  if (auto route = ApiRoutes().find(RouteOf(req.path)); route != ApiRoutes().end()) {
    const auto has = [](const std::vector<std::string>& v, const std::string& m) {
      return std::find(v.begin(), v.end(), m) != v.end();
    };
    // HEAD is taken wherever GET is: GET without the body (RFC 9110; libmicrohttpd leaves the
    // body out).
    std::vector<std::string> methods = route->second;
    if (auto get = std::find(methods.begin(), methods.end(), "GET");
        get != methods.end() && !has(methods, "HEAD")) {
      methods.insert(get + 1, "HEAD");
    }
    if (!has(methods, req.method)) {
      const std::string allow = Join(methods, ", ");
      HttpResponse r = Fail(405, fmt::format("{} does not take {}: {}", route->first,
                                             Echo(nlohmann::json(req.method)), allow));
      r.headers.emplace_back("Allow", allow);
      return r;
    }
    if (req.method == "HEAD" && !has(route->second, "HEAD")) {
      HttpRequest get = req;
      get.method = "GET";
      return Dispatch(get);
    }
    const std::vector<std::string>& known = QueryParamsOf(req.method, route->first);
    for (const auto& [key, value] : req.query) {
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      return Fail(400, fmt::format("{} {} takes no query parameter {}{}", req.method, route->first,
                                   Echo(nlohmann::json(key)),
                                   known.empty() ? "" : " (known: " + Join(known, ", ") + ")"));
    }
  }
  if (req.path == "/v1/health") {  // GET or HEAD: the table above refused the rest
    nlohmann::json health = {{"ok", true}};
    if (auto w = sched_.Warnings(); !w.empty()) health["warnings"] = w;
    return Reply(200, health);
  }
  // The dashboard's page and scripts are public; everything they show comes from the API.
  if ((req.method == "GET" || req.method == "HEAD") && !req.path.starts_with("/v1/") &&
      req.path != "/metrics") {
    return Dashboard(req.path);
  }
  auto caller = ids_.Resolve(req);
  if (!caller.ok()) {
    HttpResponse r = Fail(caller.status());
    // 401: who calls is not known; the challenge RFC 6750 asks for, with the error when a
    // token was sent. (403: known, and not allowed.)
    if (r.status == 401) {
      r.headers.emplace_back("WWW-Authenticate",
                             req.headers.contains("authorization")
                                 ? R"(Bearer realm="tiresias", error="invalid_token")"
                                 : R"(Bearer realm="tiresias")");
    }
    return r;
  }
  if (req.path == "/metrics" && req.method == "GET") {
    return {.status = 200,
            .body = sched_.MetricsText(),
            .content_type = "text/plain; version=0.0.4; charset=utf-8"};
  }
  return Route(req, *caller);
}

HttpResponse ApiServer::Route(const HttpRequest& req, const Caller& caller) {
  const std::vector<std::string> p = PathParts(req.path);
  const std::string& m = req.method;
  auto no_such = [&] {
    return Fail(404, fmt::format("no such endpoint: {} {} (see /v1/jobs, /v1/nodes, /v1/events, "
                                 "/v1/vcs, /v1/whoami, /v1/tokens)",
                                 m, Echo(nlohmann::json(req.path))));
  };
  if (p.size() < 2 || p[0] != "v1") return no_such();
  const std::string& what = p[1];
  if (what == "whoami" && p.size() == 2 && m == "GET") {
    nlohmann::json j = {{"user", caller.user}, {"admin", caller.admin}, {"via", caller.via}};
    if (caller.uid) j["uid"] = *caller.uid;
    return Reply(200, j);
  }
  if (what == "nodes" && p.size() == 2 && m == "GET") return Reply(200, sched_.Nodes());
  if (what == "queues" && p.size() == 2 && m == "GET") return Reply(200, sched_.Queues());
  if (what == "vcs" && p.size() == 2 && m == "GET") return Reply(200, sched_.Vcs());
  if (what == "stats" && p.size() == 2 && m == "GET") {
    auto after = QueryInt(req, "after_ms", 0);
    if (!after.ok()) return Fail(after.status());
    return Reply(200, sched_.Stats(*after));
  }
  if (what == "sessions" && p.size() == 2 && m == "POST") {
    auto tok = ids_.CreateSession(caller, std::chrono::hours(12));
    if (!tok.ok()) return Fail(tok.status());
    return Reply(201, {{"user", caller.user}, {"token", *tok}, {"expires_in_s", 12 * 3600}});
  }
  if (what == "events" && p.size() == 2 && m == "GET") return Events(req);
  if (what == "tokens") {
    if (p.size() > 3) return no_such();
    return Tokens(req, caller, p.size() == 3 ? p[2] : "");
  }
  if (what == "whatif" && p.size() == 2 && m == "POST") {  // when would such a job run?
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) return Fail(body.status());
    if (!body->is_object()) return Fail(400, "request body must be a JSON object");
    for (const auto& [key, v] : body->items()) {  // as submit: a typo is not silently ignored
      if (key != "gpus" && key != "duration" && key != "time" && key != "vc") {
        return Fail(400, fmt::format("unknown field {} (expected gpus, duration, time, vc)",
                                     Echo(nlohmann::json(key))));
      }
    }
    const auto gpus = IntField(*body, "gpus");
    if (!gpus || *gpus < 1 || *gpus > kMaxRequestGpus) {
      return Fail(400, fmt::format("field 'gpus': an integer in 1..{}", kMaxRequestGpus));
    }
    std::optional<Duration> run, time_limit;
    if (body->contains("duration")) {
      const auto& d = (*body)["duration"];
      if (!d.is_number() || !(d.get<double>() > 0) || d.get<double>() > kMaxRequestDurationS) {
        return Fail(400, fmt::format("field 'duration': seconds in (0, {}]", kMaxRequestDurationS));
      }
      run = static_cast<Duration>(d.get<double>() * kMsPerSecond);
    }
    if (body->contains("time") &&
        !((*body)["time"].is_string() && NoTimeLimit((*body)["time"].get<std::string>()))) {
      if (!(*body)["time"].is_string()) return Fail(400, "field 'time': a Slurm time string");
      auto limit = ParseSlurmTime((*body)["time"].get<std::string>());
      if (!limit.ok()) return Fail(400, "field 'time': " + limit.status().message());
      // Its limit, or less with a shorter duration: it never runs past the limit (a longer
      // duration was forecast in full). Without a duration: the end is pessimistic, the start
      // is not.
      run = std::min(run.value_or(*limit), *limit);
      time_limit = *limit;  // and no end past it (and the grace)
    }
    if (body->contains("vc") && !(*body)["vc"].is_string()) {
      return Fail(400, "field 'vc': a VC's name");
    }
    // As the caller would submit it: their VC (or the one named), its quota.
    auto est = sched_.WhatIfSubmit(static_cast<int>(*gpus), run, caller.user,
                                   body->value("vc", std::string()), time_limit);
    return est.ok() ? Reply(200, *est) : Fail(est.status());
  }
  if (what == "version" && p.size() == 2 && m == "GET") {
    return Reply(200, {{"version", TIRESIAS_VERSION}});
  }
  if (what == "history" && p.size() == 2 && m == "GET") return List(req, caller, /*history=*/true);
  if (what != "jobs") return no_such();
  if (p.size() == 2) {
    if (m == "POST") return Submit(req, caller);
    if (m != "GET") return no_such();
    return List(req, caller, /*history=*/false);
  }
  if (p.size() > 4) return no_such();
  const std::string action = p.size() == 4 ? p[3] : "";
  // Changes: DELETE /v1/jobs/ID cancels, POST /v1/jobs/ID/ACTION does ACTION; nothing else.
  const bool change =
      (m == "DELETE" && action.empty()) ||
      (m == "POST" && (action == "cancel" || action == "hold" || action == "release" ||
                       action == "requeue" || action == "requeuehold"));
  if ((m == "POST" || m == "DELETE") && !change) return no_such();
  // Changes to an array's id act on all its tasks; "42_7" names one task.
  auto ids = sched_.Resolve(p[2], /*on_array=*/change);
  if (!ids.ok()) return Fail(ids.status());
  auto job = sched_.Get(ids->front());
  if (!job.ok()) return Fail(job.status());
  const JobId id = ids->front();
  const bool mine = caller.May(job->value("user", ""));
  auto not_yours = [&](const char* what) {
    return Fail(403, fmt::format("job {} is {}'s; only they or an admin may {} it", p[2],
                                 job->value("user", ""), what));
  };
  if (change) {
    const std::string verb = action.empty() ? "cancel" : action;
    if (!mine) return not_yours(verb.c_str());
    // An array: every task that can still take it (ended tasks are left as they are).
    // `unchanged`: those a hold or release found so already.
    // `timed_out`: those a cancel found in their time limit's grace, which end `timeout`.
    // `left`: those left as they are for their state (ended ones; they were in no list).
    nlohmann::json done = nlohmann::json::array(), unchanged = nlohmann::json::array(),
                   timed_out = nlohmann::json::array(), left = nlohmann::json::array();
    RefusedTasks refused;
    std::vector<Status> cancelled;
    if (verb == "cancel") cancelled = sched_.Cancel(*ids);  // all tasks in one step
    for (size_t k = 0; k < ids->size(); ++k) {
      const JobId t = (*ids)[k];
      bool changed = true;
      Status s = verb == "cancel"    ? cancelled[k]
                 : verb == "hold"    ? sched_.Hold(t, true, &changed, caller.user, caller.admin)
                 : verb == "release" ? sched_.Hold(t, false, &changed, caller.user, caller.admin)
                 : verb == "requeue" ? sched_.Requeue(t, caller.user, /*hold=*/false, caller.admin)
                                     : sched_.RequeueHold(t, caller.user, &changed, caller.admin);
      if (s.ok()) {
        done.push_back(t.value());
        if (!changed) unchanged.push_back(t.value());
        if (auto after = sched_.Get(t);
            verb == "cancel" && after.ok() && after->value("state", "") == "timeout") {
          timed_out.push_back(t.value());
        }
      } else {
        auto task = sched_.Get(t);
        refused.Add(t, task.ok() ? task->value("ref", t.str()) : t.str(), s);
        if (RefusedTasks::ForState(s)) left.push_back(t.value());
      }
    }
    if (done.empty()) return Fail(refused.Said());
    nlohmann::json reply = {{"id", id.value()},
                            {"ref", p[2]},
                            {"action", verb},
                            {"jobs", done},
                            {"unchanged", unchanged},
                            {"timed_out", timed_out},
                            {"left", left}};
    // Tasks left out for more than their state (an admin's hold on a release): said (a
    // release of such an array said it released it all).
    if (refused.AnyButState()) reply["refused"] = refused.Said().message();
    return Reply(200, reply);
  }
  if (m != "GET") return no_such();
  if (action.empty()) return Reply(200, Visible(*job, caller));
  if (action == "explain") {
    // An array's id: its first task still waiting (else the first not ended, else its first),
    // and its tasks by state (it explained task 0 alone, whatever the others did).
    JobId target = id;
    nlohmann::json array;
    if (auto tasks = sched_.Resolve(p[2], /*whole_array=*/true);
        tasks.ok() && tasks->size() > 1 && p[2].find('_') == std::string::npos) {
      std::tie(target, array) = sched_.ExplainArray(*tasks);
    }
    auto j = sched_.Explain(target);
    if (!j.ok()) return Fail(j.status());
    if (!array.is_null()) (*j)["array"] = array;
    if (auto est = sched_.Estimate(target); est.ok()) {
      (*j)["estimate"] = *est;
    } else {
      (*j)["estimate_error"] = est.status().message();  // e.g. a policy that cannot be copied
    }
    return Reply(200, *j);
  }
  if (action == "logs") {
    if (!mine) return not_yours("read the log of");
    auto offset = QueryInt(req, "offset", 0);
    if (!offset.ok()) return Fail(offset.status());
    auto tail = QueryInt(req, "tail_lines", -1);  // -1: not given (0 is no lines)
    if (!tail.ok()) return Fail(tail.status());
    const auto stream = req.query.contains("stream") ? req.query.at("stream") : "stdout";
    if (stream != "stdout" && stream != "stderr") {
      return Fail(400, "query parameter stream: stdout or stderr");
    }
    // log_file: the file the offset is in (X-Log-File of the last read), so that a log
    // rotated since is read to its end first.
    auto file = QueryInt(req, "log_file", 0);
    if (!file.ok()) return Fail(file.status());
    LiveScheduler::LogCursor next;
    auto text = sched_.Logs(id, {.offset = *offset, .file = static_cast<uint64_t>(*file)},
                            kLogReplyMaxBytes, next, stream == "stderr",
                            *tail < 0 ? std::nullopt : std::optional<size_t>(*tail));
    if (!text.ok()) return Fail(text.status());
    return {.status = 200,
            .body = *text,
            .content_type = "text/plain",
            .headers = {{"X-Next-Offset", std::to_string(next.offset)},
                        {"X-Log-File", std::to_string(next.file)},
                        {"X-Log-End", std::to_string(next.end)},
                        {"X-Job-State", job->value("state", "")}}};
  }
  return no_such();
}

HttpResponse ApiServer::Submit(const HttpRequest& req, const Caller& caller) {
  auto r = ParseSubmit(req.body);
  if (!r.ok()) return Fail(r.status());
  // The job is the caller's; only an admin submits for someone else.
  if (r->user.empty() || r->user == caller.user) {
    r->user = caller.user;
    r->uid = caller.uid;
    r->gid = caller.gid;
  } else if (!caller.admin) {
    return Fail(403, fmt::format("field 'user': you are {}; only an admin submits as {}",
                                 caller.user, Echo(nlohmann::json(r->user))));
  } else if (caller.via.starts_with("session")) {
    // A session is a URL that can leak: it must not run code as any user (as minting a token
    // would let it).
    return Fail(403, fmt::format("field 'user': a dashboard session cannot submit as {}; use "
                                 "the CLI (the Unix socket) or the admin token",
                                 Echo(nlohmann::json(r->user))));
  } else {
    if (const auto account = AccountByName(r->user)) {
      r->uid = account->uid;
      r->gid = account->gid;
    }
  }
  if (geteuid() == 0 && !r->uid) {
    return Fail(400, fmt::format("user {} has no account on this machine, and serve runs as "
                                 "root: a job runs as its submitter, never as root for them",
                                 Echo(nlohmann::json(r->user))));
  }
  if (r->cwd.empty()) {
    // None given (the CLI sends its own): the home directory of the user it runs as, as a
    // login would (it ran in serve's own directory, and `show` said WorkDir= empty).
    // (Its user's when serve is root; else serve runs it as serve's own user. "/" for a
    // service account whose home is none, e.g. /nonexistent.)
    const auto account = AccountById(geteuid() == 0 ? r->uid.value_or(0) : geteuid());
    std::error_code ec;
    const bool home = account && account->home.starts_with('/') &&
                      std::filesystem::is_directory(account->home, ec);
    r->cwd = home ? account->home : "/";
  }
  std::vector<JobId> ids;
  auto id = sched_.Submit(*r, &ids);
  if (!id.ok()) return Fail(id.status());
  nlohmann::json reply = {{"id", id->value()}, {"user", r->user}};
  if (!r->array.empty()) {
    nlohmann::json all = nlohmann::json::array();
    for (JobId t : ids) all.push_back(t.value());
    reply["array_id"] = id->value();
    reply["jobs"] = all;
  }
  return Reply(201, reply);
}

}  // namespace tiresias
