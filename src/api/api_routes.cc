// The API's routes and their methods, and the closed set of labels requests are counted
// under in the metrics (see api_server.h).
#include <map>
#include <string>
#include <vector>

#include "api/api_server.h"
#include "common/strings.h"

namespace tiresias {

std::vector<std::string> PathParts(const std::string& path) {
  std::vector<std::string> parts;
  for (auto p : Split(path, '/')) {
    if (!p.empty()) parts.emplace_back(p);
  }
  return parts;
}

// The API's routes (ids as {id}) and the methods each answers.
const std::map<std::string, std::vector<std::string>>& ApiRoutes() {
  static const std::map<std::string, std::vector<std::string>> kRoutes = {
      {"/metrics", {"GET"}},
      {"/v1/health", {"GET", "HEAD"}},
      {"/v1/whoami", {"GET"}},
      {"/v1/nodes", {"GET"}},
      {"/v1/queues", {"GET"}},
      {"/v1/vcs", {"GET"}},
      {"/v1/stats", {"GET"}},
      {"/v1/sessions", {"POST"}},
      {"/v1/events", {"GET"}},
      {"/v1/tokens", {"GET", "POST"}},
      {"/v1/tokens/{id}", {"DELETE"}},
      {"/v1/whatif", {"POST"}},
      {"/v1/version", {"GET"}},
      {"/v1/history", {"GET"}},
      {"/v1/jobs", {"GET", "POST"}},
      {"/v1/jobs/{id}", {"GET", "DELETE"}},
      {"/v1/jobs/{id}/cancel", {"POST"}},
      {"/v1/jobs/{id}/hold", {"POST"}},
      {"/v1/jobs/{id}/release", {"POST"}},
      {"/v1/jobs/{id}/requeue", {"POST"}},
      {"/v1/jobs/{id}/requeuehold", {"POST"}},
      {"/v1/jobs/{id}/explain", {"GET"}},
      {"/v1/jobs/{id}/logs", {"GET"}}};
  return kRoutes;
}

const std::vector<std::string>& QueryParamsOf(const std::string& method, const std::string& route) {
  static const std::vector<std::string> kNone;
  static const std::map<std::string, std::vector<std::string>> kParams = {
      {"GET /v1/jobs",
       {"state", "active", "user", "me", "vc", "array", "since_ms", "until_ms", "offset", "limit",
        "newest", "estimates"}},
      {"GET /v1/history",
       {"state", "user", "me", "vc", "array", "since_ms", "until_ms", "offset", "limit", "newest"}},
      {"GET /v1/events", {"after", "latest", "limit", "job", "array"}},
      {"GET /v1/stats", {"after_ms"}},
      {"GET /v1/jobs/{id}/logs", {"offset", "log_file", "stream", "tail_lines"}}};
  auto it = kParams.find(method + " " + route);
  return it == kParams.end() ? kNone : it->second;
}

std::string RouteOf(const std::string& path) {
  // A closed set of label values, whatever callers send (every distinct path once became a
  // series of its own: 20,000 made-up paths grew /metrics to 580 MB): the API's routes with
  // ids (job ids, array tasks, token users) as {id}, the dashboard's pages as one, and
  // anything else as "other".
  std::vector<std::string> p = PathParts(path);
  if (p.empty() || (p[0] != "v1" && path != "/metrics")) return "/dashboard";
  if (p.size() >= 3 && (p[1] == "jobs" || p[1] == "tokens")) p[2] = "{id}";
  std::string out;
  for (const auto& part : p) out += "/" + part;
  return ApiRoutes().contains(out) ? out : "other";
}

std::string MethodOf(const std::string& method) {
  for (const char* m : {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}) {
    if (method == m) return m;
  }
  return "other";
}

}  // namespace tiresias
