// How the CLI finds and talks to `tiresias serve`: the server address (--server, env
// TIRESIAS_SERVER, or tiresias.addr in the state directory) and the token (env
// TIRESIAS_TOKEN or tiresias.token in the state directory, written 0600 by serve).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"

namespace tiresias {

struct ClientOptions {
  std::string server;     // "" = discover
  std::string state_dir;  // "" = env TIRESIAS_STATE_DIR or "."
};

struct HttpReply {
  int status = 0;
  std::string body;
  std::string next_offset;  // logs only
  std::string job_state;    // logs only
};

// Ok for a 2xx reply, else the server's error message with a matching code.
Status ErrorOf(const HttpReply& r);

class ApiClient {
 public:
  static StatusOr<ApiClient> Connect(const ClientOptions& o);
  StatusOr<HttpReply> Get(const std::string& path) const;
  StatusOr<HttpReply> Post(const std::string& path, const std::string& body) const;
  StatusOr<HttpReply> Delete(const std::string& path) const;
  // The JSON body of a 2xx reply, or the server's error message.
  StatusOr<nlohmann::json> GetJson(const std::string& path) const;
  StatusOr<nlohmann::json> PostJson(const std::string& path, const nlohmann::json& body) const;
  const std::string& url() const { return url_; }

 private:
  std::string url_;
  std::string token_;
};

std::string StateDirOrDefault(const std::string& flag);

}  // namespace tiresias
