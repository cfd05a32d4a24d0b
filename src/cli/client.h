// How the CLI finds and talks to `tiresias serve`. By default through the Unix socket
// tiresias.sock in the state directory (--state-dir, TIRESIAS_STATE_DIR, or "."): the kernel
// tells serve who is calling, so no token is needed. With --server URL (or TIRESIAS_SERVER)
// over TCP, with a token: --token, TIRESIAS_TOKEN, or tiresias.token in the state directory
// when readable (the operator's). HTTP by libcurl.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace tiresias {

struct ClientOptions {
  std::string server;       // "" = discover; "http://host:port" or "unix:PATH"
  std::string state_dir;    // "" = env TIRESIAS_STATE_DIR or "."
  std::string token;        // "" = env TIRESIAS_TOKEN, then tiresias.token if readable
  long timeout_ms = 60000;  // a whole request, reply included
};

struct HttpReply {
  int status = 0;
  std::string body;
  std::string next_offset;  // logs only
  std::string log_file;     // logs only: the file next_offset is in
  std::string log_end;      // logs only: that file's size when it was read
  std::string job_state;    // logs only
};

// Ok for a 2xx reply, else the server's error message with a matching code.
Status ErrorOf(const HttpReply& r);
// The JSON body of a 2xx reply, or the server's error message (or the request's failure).
StatusOr<nlohmann::json> JsonOf(const StatusOr<HttpReply>& r);

class ApiClient {
 public:
  static StatusOr<ApiClient> Connect(const ClientOptions& o);
  // Any method; `headers` are extra "Name: value" lines.
  StatusOr<HttpReply> Call(const std::string& method, const std::string& path,
                           const std::string& body = "",
                           const std::vector<std::string>& headers = {}) const;
  StatusOr<HttpReply> Get(const std::string& path) const { return Call("GET", path); }
  StatusOr<HttpReply> Post(const std::string& path, const std::string& body) const {
    return Call("POST", path, body);
  }
  StatusOr<HttpReply> Delete(const std::string& path) const { return Call("DELETE", path); }
  // The JSON body of a 2xx reply, or the server's error message.
  StatusOr<nlohmann::json> GetJson(const std::string& path) const;
  StatusOr<nlohmann::json> PostJson(const std::string& path, const nlohmann::json& body) const;
  // Where it connects: the socket path or the URL.
  std::string where() const { return socket_.empty() ? url_ : "unix:" + socket_; }
  // GET through a restart of serve (an upgrade, a crash: the jobs go on, so does a `wait` or
  // `logs -f`): while serve cannot be reached, or says it is unavailable (503), again every
  // second, connecting anew with `o` each time (a restarted serve may listen elsewhere), for
  // at most `patience`; said once on stderr. Other failures and replies come back at once.
  StatusOr<HttpReply> GetThroughRestarts(const std::string& path, const ClientOptions& o,
                                         std::chrono::seconds patience);

 private:
  std::string socket_;  // Unix socket path, or "" for TCP
  std::string url_;     // base URL (for the socket: http://localhost)
  std::string token_;
  long timeout_ms_ = 60000;
};

std::string StateDirOrDefault(const std::string& flag);

// "?k=v&..." of the pairs with a non-empty value, in order, each value URL-encoded (curl's
// escaping: a user or VC name may hold '&' or spaces); "" when none.
std::string UrlQuery(const std::vector<std::pair<std::string, std::string>>& kv);

}  // namespace tiresias
