// The API's pages outside its JSON routes: the dashboard's files and the admin's tokens (see
// api_server.h).
#include <fmt/format.h>

#include "api/api_reply.h"
#include "api/api_server.h"
#include "api/dashboard.h"

namespace tiresias {

using api::Echo;
using api::Fail;
using api::Reply;

HttpResponse ApiServer::Dashboard(const std::string& path) {
  const std::string want = path == "/" ? "/index.html" : path;
  for (const WebAsset& a : DashboardAssets()) {
    if (a.path == want) {
      return {.status = 200,
              .body = std::string(a.body),
              .content_type = std::string(a.content_type),
              .headers = {{"Cache-Control", "no-cache"}}};
    }
  }
  if (DashboardAssets().empty() && want == "/index.html") {
    return {.status = 200,
            .body =
                "<!doctype html><title>tiresias</title><p>This tiresias was built without "
                "node/npm, so it has no dashboard. The API is at /v1/.</p>\n",
            .content_type = "text/html; charset=utf-8"};
  }
  return Fail(404, fmt::format("no such page: {}", Echo(nlohmann::json(path))));
}

HttpResponse ApiServer::Tokens(const HttpRequest& req, const Caller& caller,
                               const std::string& user) {
  if (!caller.admin) return Fail(403, "only an admin manages tokens");
  // A token outlives the session that would create it, and a session is a URL that can leak
  // (a browser's history): an admin's dashboard must not mint credentials for any user.
  if (caller.via.starts_with("session")) {
    return Fail(403,
                "a dashboard session cannot manage tokens: use `tiresias token` on the server "
                "(the Unix socket) or the admin token");
  }
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
    for (const auto& [key, value] : body->items()) {  // as /v1/jobs: a typo is not ignored
      if (key != "user") {
        return Fail(400, fmt::format("unknown field {} (known: user)", Echo(nlohmann::json(key))));
      }
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
