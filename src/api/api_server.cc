// Routes of the REST API onto LiveScheduler, with identity and visibility (see api_server.h).
#include "api/api_server.h"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cstdint>

#include "common/strings.h"

namespace tiresias {
namespace {

int HttpCode(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

// Text from requests (paths, values) may be invalid UTF-8: replace, never throw.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A value echoed in an error message: short, whatever the caller sent.
std::string Echo(const nlohmann::json& j) {
  std::string s = Dump(j);
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

HttpResponse Reply(int code, const nlohmann::json& body) {
  return {.status = code, .body = Dump(body) + "\n"};
}

HttpResponse Fail(int code, const std::string& msg) {
  return Reply(code, {{"error", msg}});
}

HttpResponse Fail(const Status& s) {
  return Fail(HttpCode(s), s.message());
}

// A SAX pass that only measures nesting, so a deep body is refused before a tree of it (and
// its recursive destruction or printing) exists.
struct DepthCheck : nlohmann::json_sax<nlohmann::json> {
  int depth = 0;
  bool too_deep = false;
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
  bool start_object(std::size_t) override { return Enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return --depth, true; }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_array() override { return --depth, true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

StatusOr<JobId> PathId(const std::string& part) {
  auto v = ParseInt(part);
  if (!v || *v <= 0) {
    return InvalidArgument(fmt::format("'{}' is not a job id", Echo(nlohmann::json(part))));
  }
  return JobId(*v);
}

StatusOr<int64_t> QueryInt(const HttpRequest& req, const char* key, int64_t def) {
  auto it = req.query.find(key);
  if (it == req.query.end()) return def;
  auto v = ParseInt(it->second);
  if (!v || *v < 0) {
    return InvalidArgument(fmt::format("query parameter {}: {} is not a non-negative integer", key,
                                       Echo(nlohmann::json(it->second))));
  }
  return *v;
}

// A job as `caller` may see it: another user's job without its environment.
nlohmann::json Visible(nlohmann::json job, const Caller& caller) {
  if (caller.May(job.value("user", ""))) return job;
  if (job.contains("env")) {
    job["env_hidden"] = job["env"].size();
    job.erase("env");
  }
  return job;
}

std::vector<std::string> PathParts(const std::string& path) {
  std::vector<std::string> parts;
  for (auto p : Split(path, '/')) {
    if (!p.empty()) parts.emplace_back(p);
  }
  return parts;
}

}  // namespace

StatusOr<nlohmann::json> ParseJsonBody(const std::string& body) {
  DepthCheck depth;
  const bool ok = nlohmann::json::sax_parse(body, &depth, nlohmann::json::input_format_t::json,
                                            /*strict=*/true, /*ignore_comments=*/false);
  if (depth.too_deep) {
    return InvalidArgument(fmt::format("request body nested deeper than {} levels", kMaxJsonDepth));
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
  for (const auto& [key, v] : j.items()) {
    auto bad = [&](const char* want) {
      return InvalidArgument(fmt::format("field '{}': expected {}, got {}", key, want, Echo(v)));
    };
    if (key == "name" || key == "user" || key == "model" || key == "cwd") {
      if (!v.is_string()) return bad("a string");
      (key == "name"    ? r.name
       : key == "user"  ? r.user
       : key == "model" ? r.model
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
    } else if (key == "duration_s") {
      if (!v.is_number()) return bad("a number of seconds");
      r.duration_s = v.get<double>();
    } else {
      return InvalidArgument(fmt::format(
          "unknown field {} (known: name, user, model, gpus, argv, cwd, env, duration_s)",
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
  if (req.path == "/v1/health" && req.method == "GET") {
    return Reply(200, {{"ok", true}});
  }
  auto caller = ids_.Resolve(req);
  if (!caller.ok()) return Fail(caller.status());
  return Route(req, *caller);
}

HttpResponse ApiServer::Route(const HttpRequest& req, const Caller& caller) {
  const std::vector<std::string> p = PathParts(req.path);
  const std::string& m = req.method;
  auto no_such = [&] {
    return Fail(404, fmt::format("no such endpoint: {} {} (see /v1/jobs, /v1/nodes, /v1/events, "
                                 "/v1/whoami, /v1/tokens)",
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
  if (what == "events" && p.size() == 2 && m == "GET") {
    auto after = QueryInt(req, "after", 0);
    if (!after.ok()) return Fail(after.status());
    auto limit = QueryInt(req, "limit", 1000);
    if (!limit.ok()) return Fail(limit.status());
    if (*limit < 1 || *limit > 100000) return Fail(400, "limit must be in 1..100000");
    auto ev = sched_.Events(*after, static_cast<int>(*limit));
    return ev.ok() ? Reply(200, *ev) : Fail(ev.status());
  }
  if (what == "tokens") {
    if (p.size() > 3) return no_such();
    return Tokens(req, caller, p.size() == 3 ? p[2] : "");
  }
  if (what != "jobs") return no_such();
  if (p.size() == 2) {
    if (m == "POST") return Submit(req, caller);
    if (m != "GET") return no_such();
    std::optional<LiveState> only;
    if (auto it = req.query.find("state"); it != req.query.end()) {
      only = ParseLiveState(it->second);
      if (!only) {
        return Fail(400, fmt::format("unknown state {} (pending, starting, running, preempting, "
                                     "finished, failed, cancelled)",
                                     Echo(nlohmann::json(it->second))));
      }
    }
    nlohmann::json out = nlohmann::json::array();
    for (auto& j : sched_.List(only)) out.push_back(Visible(std::move(j), caller));
    return Reply(200, out);
  }
  auto id = PathId(p[2]);
  if (!id.ok()) return Fail(id.status());
  auto job = sched_.Get(*id);
  if (!job.ok()) return Fail(job.status());
  const bool mine = caller.May(job->value("user", ""));
  const std::string action = p.size() == 4 ? p[3] : "";
  if (p.size() > 4) return no_such();
  if ((action == "cancel" && m == "POST") || (action.empty() && m == "DELETE")) {
    if (!mine) {
      return Fail(403, fmt::format("job {} is {}'s; only they or an admin may cancel it",
                                   id->value(), job->value("user", "")));
    }
    Status s = sched_.Cancel(*id);
    return s.ok() ? Reply(200, {{"id", id->value()}, {"state", "cancelled"}}) : Fail(s);
  }
  if (m != "GET") return no_such();
  if (action.empty()) return Reply(200, Visible(*job, caller));
  if (action == "explain") {
    auto j = sched_.Explain(*id);
    return j.ok() ? Reply(200, *j) : Fail(j.status());
  }
  if (action == "logs") {
    if (!mine) {
      return Fail(403, fmt::format("job {} is {}'s; only they or an admin may read its log",
                                   id->value(), job->value("user", "")));
    }
    auto offset = QueryInt(req, "offset", 0);
    if (!offset.ok()) return Fail(offset.status());
    int64_t next = 0;
    auto text = sched_.Logs(*id, *offset, 1 << 20, next);
    if (!text.ok()) return Fail(text.status());
    return {.status = 200,
            .body = *text,
            .content_type = "text/plain",
            .headers = {{"X-Next-Offset", std::to_string(next)},
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
  } else {
    std::array<char, 4096> buf{};
    passwd pw{};
    passwd* found = nullptr;
    if (getpwnam_r(r->user.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found) {
      r->uid = found->pw_uid;
      r->gid = found->pw_gid;
    }
  }
  if (geteuid() == 0 && !r->uid) {
    return Fail(400, fmt::format("user {} has no account on this machine, and serve runs as "
                                 "root: a job runs as its submitter, never as root for them",
                                 Echo(nlohmann::json(r->user))));
  }
  auto id = sched_.Submit(*r);
  if (!id.ok()) return Fail(id.status());
  return Reply(201, {{"id", id->value()}, {"user", r->user}});
}

HttpResponse ApiServer::Tokens(const HttpRequest& req, const Caller& caller,
                               const std::string& user) {
  if (!caller.admin) return Fail(403, "only an admin manages tokens");
  if (req.method == "GET" && user.empty()) return Reply(200, {{"users", ids_.TokenUsers()}});
  if (req.method == "DELETE" && !user.empty()) {
    Status s = ids_.RevokeToken(user);
    return s.ok() ? Reply(200, {{"user", user}, {"revoked", true}}) : Fail(s);
  }
  if (req.method == "POST" && user.empty()) {
    auto body = ParseJsonBody(req.body);
    if (!body.ok()) return Fail(body.status());
    if (!body->is_object() || !body->contains("user") || !(*body)["user"].is_string()) {
      return Fail(400, "field 'user': expected the user name the token is for");
    }
    const std::string name = (*body)["user"].get<std::string>();
    auto tok = ids_.CreateToken(name);
    if (!tok.ok()) return Fail(tok.status());
    return Reply(201, {{"user", name}, {"token", *tok}});
  }
  return Fail(404,
              fmt::format("no such endpoint: {} {}", req.method, Echo(nlohmann::json(req.path))));
}

}  // namespace tiresias
