// The REST/JSON API of `tiresias serve`: on TCP (loopback by default) and on the Unix socket
// tiresias.sock in the state directory. Every call but /v1/health needs an identity
// (identity.h): a local user through the socket, or a token.
//   GET  /v1/health                      liveness (no identity needed)
//   GET  /v1/whoami                      the caller as the server sees them
//   POST /v1/jobs                         submit (the job is the caller's; an array: one job
//                                         per task, {"id", "array_id", "jobs"})
//   GET  /v1/jobs[?state=S,..&user=U&active=1&offset=N&limit=N]  list, filtered and paged
//                                         (X-Total-Count; others' jobs without environment)
//   GET  /v1/history[?user=&state=&since_ms=&until_ms=&offset=&limit=]  ended jobs
//   GET  /v1/jobs/{ref}                   one job; ref is an id or ARRAY_INDEX ("42_7")
//   POST /v1/jobs/{ref}/cancel|hold|release|requeue|requeuehold, DELETE /v1/jobs/{ref} (owner or
//                                         admin; an array's id acts on all its tasks)
//   GET  /v1/jobs/{ref}/explain           why it waits
//   GET  /v1/jobs/{ref}/logs?offset=N[&log_file=F][&stream=stderr][&tail_lines=N]   log
//                                         bytes from N of file F (owner or admin);
//                                         X-Next-Offset, X-Log-File, X-Job-State
//   GET  /v1/version
//   GET  /v1/nodes                        GPUs and who holds them
//   GET  /v1/events?after=SEQ&limit=N[&job=ID]   the journal, oldest first
//   GET  /v1/queues                       Q1..QK with their jobs, why each waits
//   GET  /v1/stats?after_ms=T             the cluster over time (dashboard charts)
//   POST /v1/sessions                     a 12-hour dashboard token for the caller
//   GET  /metrics                         Prometheus text format (needs an identity)
//   GET  /, /app.js, ...                  the dashboard (public files; data via the API)
//   POST /v1/tokens {"user"}, GET /v1/tokens, DELETE /v1/tokens/{user}   (admin)
// Errors are JSON {"error": "..."} with 400 (bad request), 401 (no identity), 403 (not
// allowed), 404, 409 (wrong state), 413 (body too large), 503 (too many connections), 500.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/http_server.h"
#include "api/identity.h"
#include "common/status.h"
#include "live/live_scheduler.h"

namespace tiresias {

// JSON bodies nested deeper than this are refused (400) before they are built.
inline constexpr int kMaxJsonDepth = 32;
// The most bytes of a job's log one reply of GET /v1/jobs/{ref}/logs carries: a reader goes
// on from its X-Next-Offset (up to X-Log-End, the file's size then, to read it as it was).
inline constexpr size_t kLogReplyMaxBytes = 1 << 20;

class ApiServer {
 public:
  ApiServer(LiveScheduler& sched, Identities& ids, HttpLimits limits = {});
  // Listens on host:port (0 = any free port) and on `unix_socket` ("" = none); returns the
  // bound TCP port.
  StatusOr<int> Start(const std::string& host, int port, const std::string& unix_socket);
  void Stop();
  // One request, as the HTTP server hands it over (tests call it directly).
  HttpResponse Handle(const HttpRequest& req);

 private:
  HttpResponse Dispatch(const HttpRequest& req);
  HttpResponse List(const HttpRequest& req, const Caller& caller, bool history);
  HttpResponse Events(const HttpRequest& req);  // GET /v1/events (api_server_lists.cc)
  HttpResponse Route(const HttpRequest& req, const Caller& caller);
  HttpResponse Dashboard(const std::string& path);
  HttpResponse Submit(const HttpRequest& req, const Caller& caller);
  HttpResponse Tokens(const HttpRequest& req, const Caller& caller, const std::string& user);

  LiveScheduler& sched_;
  Identities& ids_;
  HttpServer http_;
};

// Parses a submit body into a request: JSON types and known fields only (the values are
// checked by Validate, live/submit_request.h); errors name the field and the problem. A body
// nested deeper than kMaxJsonDepth is refused before it is built.
StatusOr<SubmitRequest> ParseSubmit(const std::string& body);
// A request path's non-empty parts ("/v1//jobs/7" -> v1, jobs, 7).
std::vector<std::string> PathParts(const std::string& path);
// The API's routes, ids as {id} ("/v1/jobs/{id}/logs"), and the methods each answers.
const std::map<std::string, std::vector<std::string>>& ApiRoutes();
// A request path as a metrics label, one of a closed set: the API's routes with job ids,
// array tasks and token users as {id}; "/dashboard" for its pages; "other" for the rest.
std::string RouteOf(const std::string& path);
// The query parameters that `method route` (a route of ApiRoutes) takes; none when unlisted.
// Any other is refused (400), as an unknown field of a body is: a misspelled filter listed
// every job.
const std::vector<std::string>& QueryParamsOf(const std::string& method, const std::string& route);
// A request method as a metrics label: the HTTP methods by name, anything else "other".
std::string MethodOf(const std::string& method);
// Parses a JSON body no deeper than kMaxJsonDepth.
StatusOr<nlohmann::json> ParseJsonBody(const std::string& body);

}  // namespace tiresias
