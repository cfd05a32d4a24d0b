// The REST/JSON API of `tiresias serve` (cpp-httplib), on loopback by default.
//   GET  /v1/health                      liveness, GPU count
//   POST /v1/jobs                         submit          (token)
//   GET  /v1/jobs[?state=S]               list
//   GET  /v1/jobs/{id}                    one job
//   POST /v1/jobs/{id}/cancel, DELETE /v1/jobs/{id}   cancel (token)
//   GET  /v1/jobs/{id}/explain            why it waits
//   GET  /v1/jobs/{id}/logs?offset=N      log bytes from N; X-Next-Offset, X-Job-State headers
//   GET  /v1/nodes                        GPUs and who holds them
//   GET  /v1/events?after=SEQ&limit=N     the journal, oldest first
// Mutating calls need `Authorization: Bearer <token>`. Errors are JSON {"error": "..."} with
// 400 (bad request), 401/403 (token), 404, 409 (wrong state), 500.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "live/live_scheduler.h"

namespace httplib {
class Server;
}

namespace tiresias {

class ApiServer {
 public:
  ApiServer(LiveScheduler& sched, std::string token);
  ~ApiServer();
  // Binds host:port (port 0 = any free port); returns the bound port.
  StatusOr<int> Bind(const std::string& host, int port);
  void Serve();  // blocks until Stop()
  // Waits until Serve() accepts connections: Stop() before that has no effect in httplib.
  void WaitUntilServing();
  void Stop();

 private:
  void Routes();
  LiveScheduler& sched_;
  std::string token_;
  std::unique_ptr<httplib::Server> srv_;
};

// Parses a submit body into a request: JSON types and known fields only (the values are
// checked by Validate, live/submit_request.h); errors name the field and the problem.
StatusOr<SubmitRequest> ParseSubmit(const std::string& body);

}  // namespace tiresias
