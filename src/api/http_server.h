// A small HTTP server for the API, on libmicrohttpd: an event loop (a slow or stalled client
// never holds up others), listening on TCP and on a Unix socket whose callers the kernel
// names (SO_PEERCRED), with limits that answer with a clear status instead of giving in:
// request body (413), request line and headers (431, libmicrohttpd's own), concurrent
// connections (503 above the soft limit; closed above the hard one), and an inactivity
// timeout. Handlers get a whole request (body collected) and return a whole response.
//
// Thread-safe: handlers run on a few internal threads at once; Start/Stop from one thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"

struct MHD_Daemon;

namespace tiresias {

// Who is on the other end of a Unix-socket connection, as the kernel says.
struct PeerCredentials {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
};

struct HttpRequest {
  std::string method;
  std::string path;  // decoded, without the query
  std::map<std::string, std::string> query;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::optional<PeerCredentials> peer;  // Unix-socket callers only
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpLimits {
  size_t max_body_bytes = 1 << 20;       // larger bodies get 413
  size_t max_header_bytes = 32 << 10;    // request line + headers; larger get 431
  unsigned connection_timeout_s = 10;    // a connection idle this long is closed
  unsigned max_connections = 256;        // above: 503 for each request
  unsigned hard_max_connections = 1024;  // above: new connections are closed at once
  // Each of the above counts TCP and the Unix socket apart, so that a flood on one (loopback
  // is open to every local process) cannot lock local users out of the other; on the socket a
  // user other than root and serve's own has at most this many connections open.
  unsigned max_connections_per_local_user = 64;
  unsigned threads = 4;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;
  HttpServer(Handler handler, HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Whether StartTcp(host, port) and StartUnix(unix_path) could listen now (the port free,
  // the path short enough), so that serve can say so before it writes anything.
  static Status CheckListen(const std::string& host, int port, const std::string& unix_path);
  // Listens on host:port (port 0: any free port) and serves; returns the bound port.
  StatusOr<int> StartTcp(const std::string& host, int port);
  // Also listens on a Unix socket at `path` (replacing a stale one), mode 0666: any local
  // user may connect, and each request carries its caller's credentials.
  Status StartUnix(const std::string& path);
  void Stop();

  // For tests: connections currently open (TCP and the Unix socket).
  unsigned open_connections() const { return open_ + unix_open_; }

 private:
  friend struct HttpServerCallbacks;  // libmicrohttpd's callbacks (http_server.cc)
  void AcceptUnix();
  void ClosedByUid(uid_t uid);  // one of uid's socket connections is gone; under peers_mu_

  Handler handler_;
  HttpLimits limits_;
  MHD_Daemon* daemon_ = nullptr;       // TCP
  MHD_Daemon* unix_daemon_ = nullptr;  // the Unix socket's connections (no listening socket)
  std::atomic<unsigned> open_{0}, unix_open_{0};
  // Credentials of accepted Unix-socket connections, by fd, until libmicrohttpd takes them,
  // and the socket's open connections by uid.
  std::mutex peers_mu_;
  std::map<int, PeerCredentials> pending_peers_;
  std::map<uid_t, unsigned> open_by_uid_;
  int unix_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  std::string unix_path_;
  std::thread unix_thread_;
};

}  // namespace tiresias
