// Routes of the REST API onto LiveScheduler (see api_server.h).
#include "api/api_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <thread>

#include "common/strings.h"

namespace tiresias {
namespace {

int HttpCode(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kFailedPrecondition:
      return 409;
    default:
      return 500;
  }
}

// Text from requests (paths, values) may be invalid UTF-8: replace, never throw.
std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void Reply(httplib::Response& res, int code, const nlohmann::json& body) {
  res.status = code;
  res.set_content(Dump(body) + "\n", "application/json");
}

void Fail(httplib::Response& res, int code, const std::string& msg) {
  Reply(res, code, {{"error", msg}});
}

void Fail(httplib::Response& res, const Status& s) {
  Fail(res, HttpCode(s), s.message());
}

std::optional<JobId> PathId(const httplib::Request& req, httplib::Response& res) {
  auto v = ParseInt(req.matches[1].str());
  if (!v || *v <= 0) {
    Fail(res, 400, fmt::format("'{}' is not a job id", req.matches[1].str()));
    return std::nullopt;
  }
  return JobId(*v);
}

std::optional<int64_t> QueryInt(const httplib::Request& req, httplib::Response& res,
                                const char* key, int64_t def) {
  if (!req.has_param(key)) return def;
  auto v = ParseInt(req.get_param_value(key));
  if (!v || *v < 0) {
    Fail(res, 400,
         fmt::format("query parameter {}: '{}' is not a non-negative integer", key,
                     req.get_param_value(key)));
    return std::nullopt;
  }
  return *v;
}

}  // namespace

StatusOr<SubmitRequest> ParseSubmit(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("request body is not valid JSON");
  if (!j.is_object()) return InvalidArgument("request body must be a JSON object");
  SubmitRequest r;
  for (const auto& item : j.items()) {
    // Named, not structured bindings: lambdas cannot capture those before clang 16.
    const std::string& key = item.key();
    const nlohmann::json& v = item.value();
    auto bad = [&](const char* want) {
      return InvalidArgument(fmt::format("field '{}': expected {}, got {}", key, want, Dump(v)));
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
          "unknown field '{}' (known: name, user, model, gpus, argv, cwd, env, duration_s)", key));
    }
  }
  return r;  // LiveScheduler::Submit validates the values
}

ApiServer::ApiServer(LiveScheduler& sched, std::string token)
    : sched_(sched), token_(std::move(token)), srv_(std::make_unique<httplib::Server>()) {
  Routes();
}

ApiServer::~ApiServer() = default;

StatusOr<int> ApiServer::Bind(const std::string& host, int port) {
  int bound =
      port == 0 ? srv_->bind_to_any_port(host) : (srv_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    return IoError(fmt::format("cannot listen on {}:{} (in use, or bad address)", host, port));
  }
  return bound;
}

void ApiServer::Serve() {
  srv_->listen_after_bind();
}

void ApiServer::WaitUntilServing() {
  while (!srv_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ApiServer::Stop() {
  srv_->stop();
}

void ApiServer::Routes() {
  auto authorized = [this](const httplib::Request& req, httplib::Response& res) {
    const std::string h = req.get_header_value("Authorization");
    if (h.empty()) {
      Fail(res, 401,
           "this call changes state: send 'Authorization: Bearer <token>' (the token "
           "is in tiresias.token in the server's state directory)");
      return false;
    }
    if (h != "Bearer " + token_) {
      Fail(res, 403, "wrong token");
      return false;
    }
    return true;
  };
  auto& s = *srv_;
  s.Get("/v1/health", [this](const httplib::Request&, httplib::Response& res) {
    const auto nodes = sched_.Nodes();
    Reply(res, 200, {{"ok", true}, {"nodes", nodes["nodes"]}, {"policy", nodes["policy"]}});
  });
  s.Post("/v1/jobs", [this, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    auto r = ParseSubmit(req.body);
    if (!r.ok()) return Fail(res, r.status());
    auto id = sched_.Submit(*r);
    if (!id.ok()) return Fail(res, id.status());
    Reply(res, 201, {{"id", id->value()}});
  });
  s.Get("/v1/jobs", [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<LiveState> only;
    if (req.has_param("state")) {
      only = ParseLiveState(req.get_param_value("state"));
      if (!only) {
        return Fail(res, 400,
                    fmt::format("unknown state '{}' (pending, starting, running, preempting, "
                                "finished, failed, cancelled)",
                                req.get_param_value("state")));
      }
    }
    Reply(res, 200, sched_.List(only));
  });
  s.Get(R"(/v1/jobs/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    auto id = PathId(req, res);
    if (!id) return;
    auto j = sched_.Get(*id);
    j.ok() ? Reply(res, 200, *j) : Fail(res, j.status());
  });
  auto cancel = [this, authorized](const httplib::Request& req, httplib::Response& res) {
    if (!authorized(req, res)) return;
    auto id = PathId(req, res);
    if (!id) return;
    Status st = sched_.Cancel(*id);
    st.ok() ? Reply(res, 200, {{"id", id->value()}, {"cancelled", true}}) : Fail(res, st);
  };
  s.Post(R"(/v1/jobs/([^/]+)/cancel)", cancel);
  s.Delete(R"(/v1/jobs/([^/]+))", cancel);
  s.Get(R"(/v1/jobs/([^/]+)/explain)", [this](const httplib::Request& req, httplib::Response& res) {
    auto id = PathId(req, res);
    if (!id) return;
    auto j = sched_.Explain(*id);
    j.ok() ? Reply(res, 200, *j) : Fail(res, j.status());
  });
  s.Get(R"(/v1/jobs/([^/]+)/logs)", [this](const httplib::Request& req, httplib::Response& res) {
    auto id = PathId(req, res);
    if (!id) return;
    auto offset = QueryInt(req, res, "offset", 0);
    if (!offset) return;
    int64_t next = 0;
    auto text = sched_.Logs(*id, *offset, 1 << 20, next);
    if (!text.ok()) return Fail(res, text.status());
    auto job = sched_.Get(*id);
    res.set_header("X-Next-Offset", std::to_string(next));
    if (job.ok()) res.set_header("X-Job-State", (*job)["state"].get<std::string>());
    res.set_content(*text, "text/plain");
  });
  s.Get("/v1/nodes", [this](const httplib::Request&, httplib::Response& res) {
    Reply(res, 200, sched_.Nodes());
  });
  s.Get("/v1/events", [this](const httplib::Request& req, httplib::Response& res) {
    auto after = QueryInt(req, res, "after", 0);
    if (!after) return;
    auto limit = QueryInt(req, res, "limit", 1000);
    if (!limit) return;
    if (*limit < 1 || *limit > 100000) return Fail(res, 400, "limit must be in 1..100000");
    auto ev = sched_.Events(*after, static_cast<int>(*limit));
    ev.ok() ? Reply(res, 200, *ev) : Fail(res, ev.status());
  });
  // Runs outside httplib's try block: it must not throw.
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status != 404 || !res.body.empty()) return;
    try {
      Fail(res, 404,
           fmt::format("no such endpoint: {} {} (see /v1/health, /v1/jobs, /v1/nodes, /v1/events)",
                       req.method, req.path));
    } catch (...) {
      res.set_content("{\"error\": \"no such endpoint\"}\n", "application/json");
    }
  });
  s.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        Fail(res, 500, what);
      });
}

}  // namespace tiresias
