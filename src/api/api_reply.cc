// The API's replies (see api_reply.h).
#include "api/api_reply.h"

#include <fmt/format.h>

#include "common/strings.h"

namespace tiresias::api {

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
    case StatusCode::kResourceExhausted:
      return 507;  // Insufficient Storage
    default:
      return 500;
  }
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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

StatusOr<bool> QueryBool(const HttpRequest& req, const char* key, bool def) {
  auto it = req.query.find(key);
  if (it == req.query.end()) return def;
  if (it->second == "1" || it->second == "true") return true;
  if (it->second == "0" || it->second == "false") return false;
  return InvalidArgument(fmt::format("query parameter {}: expected 1 or 0 (true or false), got {}",
                                     key, Echo(nlohmann::json(it->second))));
}

nlohmann::json Visible(nlohmann::json job, const Caller& caller) {
  if (caller.May(job.value("user", ""))) return job;
  if (job.contains("env")) {
    job["env_hidden"] = job["env"].size();
    job.erase("env");
  }
  return job;
}

}  // namespace tiresias::api
