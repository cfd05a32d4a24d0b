// HttpServer on libmicrohttpd (see http_server.h): request collection with a body limit,
// peer credentials of Unix-socket connections, and the connection count.
#include "api/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

namespace tiresias {
namespace {

// What libmicrohttpd keeps for one request while its body arrives.
struct RequestState {
  std::string body;
  bool too_large = false;
  const char* bad_url = nullptr;  // why the URL is refused (ConnectionState::bad_url)
};

// What it keeps for one connection.
struct ConnectionState {
  std::optional<PeerCredentials> peer;
  // Why the request line being read is refused: an encoded NUL, a malformed escape.
  const char* bad_url = nullptr;
};

// libmicrohttpd's own decoding of the path and of each query key and value, which also notes
// what makes the URL unusable: an encoded NUL (the decoded text is a C string that would end
// there, so that `/v1/jobs/29%00x` would read as job 29 and `?state=running%00x` as
// `running`), or a `%` without two hex digits (kept as it was: `?user=%ZZ` named "%ZZ").
size_t Unescape(void*, MHD_Connection* c, char* s) {
  const char* why = nullptr;
  for (const char* p = std::strchr(s, '%'); p && !why; p = std::strchr(p + 1, '%')) {
    if (!std::isxdigit(static_cast<unsigned char>(p[1])) ||
        !std::isxdigit(static_cast<unsigned char>(p[2]))) {
      why = "the URL has a % not followed by two hex digits (a malformed escape)";
    } else if (p[1] == '0' && p[2] == '0') {
      why = "the URL has an encoded NUL (%00), which no path or parameter may contain";
    }
  }
  if (why) {
    if (const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT)) {
      if (auto* cs = static_cast<ConnectionState*>(info->socket_context); cs && !cs->bad_url) {
        cs->bad_url = why;
      }
    }
  }
  return MHD_http_unescape(s);
}

MHD_Result Queue(MHD_Connection* c, const HttpResponse& r) {
  MHD_Response* resp = MHD_create_response_from_buffer(
      r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
  if (!resp) return MHD_NO;
  MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str());
  for (const auto& [k, v] : r.headers) MHD_add_response_header(resp, k.c_str(), v.c_str());
  const MHD_Result ret = MHD_queue_response(c, static_cast<unsigned>(r.status), resp);
  MHD_destroy_response(resp);
  return ret;
}

HttpResponse JsonError(int status, const std::string& msg) {
  return {.status = status,
          .body = nlohmann::json{{"error", msg}}.dump(-1, ' ', false,
                                                      nlohmann::json::error_handler_t::replace) +
                  "\n"};
}

// The query's parameters, and the first given twice (`?state=a&state=b` kept the last).
struct QueryValues {
  std::map<std::string, std::string>* values;
  std::optional<std::string> twice;
};

MHD_Result CollectValue(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* q = static_cast<QueryValues*>(cls);
  std::string k = key ? key : "";
  if (!q->values->emplace(k, value ? value : "").second && !q->twice) q->twice = k;
  return MHD_YES;
}

MHD_Result CollectHeader(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* m = static_cast<std::map<std::string, std::string>*>(cls);
  std::string k = key ? key : "";
  for (char& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  (*m)[k] = value ? value : "";
  return MHD_YES;
}

}  // namespace

struct HttpServerCallbacks {
  static MHD_Result Access(void* cls, MHD_Connection* c, const char* url, const char* method,
                           const char* /*version*/, const char* upload_data, size_t* upload_size,
                           void** state) {
    auto* self = static_cast<HttpServer*>(cls);
    if (*state == nullptr) {  // headers are in; the body (if any) follows
      auto* st = new RequestState;
      *state = st;
      if (const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT)) {
        if (auto* cs = static_cast<ConnectionState*>(info->socket_context)) {
          st->bad_url = std::exchange(cs->bad_url, nullptr);
        }
      }
      const char* len =
          MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
      if (len && std::strtoull(len, nullptr, 10) > self->limits_.max_body_bytes) {
        st->too_large = true;
      }
      return MHD_YES;
    }
    auto* st = static_cast<RequestState*>(*state);
    if (*upload_size > 0) {
      if (st->body.size() + *upload_size > self->limits_.max_body_bytes) {
        st->too_large = true;
        st->body.clear();
      }
      if (!st->too_large) st->body.append(upload_data, *upload_size);
      *upload_size = 0;
      return MHD_YES;
    }
    if (st->too_large) {
      return Queue(c, JsonError(413, fmt::format("request body larger than {} bytes",
                                                 self->limits_.max_body_bytes)));
    }
    if (st->bad_url) return Queue(c, JsonError(400, st->bad_url));
    HttpRequest req;
    if (const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT)) {
      if (auto* cs = static_cast<ConnectionState*>(info->socket_context)) req.peer = cs->peer;
    }
    if ((req.peer ? self->unix_open_ : self->open_) > self->limits_.max_connections) {
      return Queue(c, JsonError(503, fmt::format("too many connections (more than {}); retry",
                                                 self->limits_.max_connections)));
    }
    req.method = method ? method : "";
    req.path = url ? url : "";
    req.body = std::move(st->body);
    QueryValues query{.values = &req.query};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, &CollectValue, &query);
    if (query.twice) {
      return Queue(
          c, JsonError(400, fmt::format("query parameter {} given twice (give each once; "
                                        "several states: state=a,b)",
                                        nlohmann::json(*query.twice)
                                            .dump(-1, ' ', false,
                                                  nlohmann::json::error_handler_t::replace))));
    }
    MHD_get_connection_values(c, MHD_HEADER_KIND, &CollectHeader, &req.headers);
    HttpResponse resp;
    try {
      resp = self->handler_(req);
    } catch (const std::exception& e) {
      resp = JsonError(500, std::string("internal error: ") + e.what());
    } catch (...) {
      resp = JsonError(500, "internal error");
    }
    return Queue(c, resp);
  }

  static void Completed(void*, MHD_Connection*, void** state, MHD_RequestTerminationCode) {
    delete static_cast<RequestState*>(*state);
    *state = nullptr;
  }

  static void Connection(void* cls, MHD_Connection* c, void** socket_context,
                         MHD_ConnectionNotificationCode what) {
    auto* self = static_cast<HttpServer*>(cls);
    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
      auto* cs = new ConnectionState;
      if (const auto* info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)) {
        std::lock_guard lk(self->peers_mu_);
        if (auto it = self->pending_peers_.find(info->connect_fd);
            it != self->pending_peers_.end()) {
          cs->peer = it->second;
          self->pending_peers_.erase(it);
        }
      }
      ++(cs->peer ? self->unix_open_ : self->open_);
      *socket_context = cs;
      return;
    }
    auto* cs = static_cast<ConnectionState*>(*socket_context);
    if (cs && cs->peer) {
      --self->unix_open_;
      std::lock_guard lk(self->peers_mu_);
      self->ClosedByUid(cs->peer->uid);
    } else {
      --self->open_;
    }
    delete cs;
    *socket_context = nullptr;
  }
};

HttpServer::HttpServer(Handler handler, HttpLimits limits)
    : handler_(std::move(handler)), limits_(limits) {}

HttpServer::~HttpServer() {
  Stop();
}

namespace {

// host:port as a socket address; InvalidArgument for a host that is no numeric address.
StatusOr<sockaddr_storage> ListenAddress(const std::string& host, int port, bool* v6_out) {
  if (port < 0 || port > 65535) {
    return InvalidArgument(fmt::format("port {} is not in 0..65535", port));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* ai = nullptr;
  if (int rc = getaddrinfo(host.c_str(), nullptr, &hints, &ai); rc != 0) {
    return InvalidArgument(
        fmt::format("--host {}: not a numeric address ({})", host, gai_strerror(rc)));
  }
  sockaddr_storage addr{};
  std::memcpy(&addr, ai->ai_addr, ai->ai_addrlen);
  const bool v6 = ai->ai_family == AF_INET6;
  freeaddrinfo(ai);
  if (v6) {
    reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port = htons(static_cast<uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in*>(&addr)->sin_port = htons(static_cast<uint16_t>(port));
  }
  *v6_out = v6;
  return addr;
}

}  // namespace

Status HttpServer::CheckListen(const std::string& host, int port, const std::string& unix_path) {
  bool v6 = false;
  auto addr = ListenAddress(host, port, &v6);
  if (!addr.ok()) return addr.status();
  if (sockaddr_un a{}; unix_path.size() >= sizeof a.sun_path) {
    return InvalidArgument(fmt::format("{}: too long for a Unix socket path ({} bytes at most)",
                                       unix_path, sizeof a.sun_path - 1));
  }
  if (port == 0) return Status::Ok();  // any free port
  const int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return IoError(fmt::format("socket: {}", std::strerror(errno)));
  const int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as the daemon does
  const socklen_t len = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  const bool ok = bind(fd, reinterpret_cast<const sockaddr*>(&*addr), len) == 0;
  const int err = errno;
  close(fd);
  if (!ok)
    return IoError(fmt::format("cannot listen on {}:{}: {}", host, port, std::strerror(err)));
  return Status::Ok();
}

StatusOr<int> HttpServer::StartTcp(const std::string& host, int port) {
  if (daemon_) return FailedPrecondition("http server: already started");
  bool v6 = false;
  auto parsed = ListenAddress(host, port, &v6);
  if (!parsed.ok()) return parsed.status();
  sockaddr_storage addr = *parsed;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
  if (v6) flags |= MHD_USE_IPv6;
  daemon_ = MHD_start_daemon(
      flags, static_cast<uint16_t>(port), nullptr, nullptr, &HttpServerCallbacks::Access, this,
      MHD_OPTION_SOCK_ADDR, reinterpret_cast<sockaddr*>(&addr), MHD_OPTION_THREAD_POOL_SIZE,
      limits_.threads, MHD_OPTION_CONNECTION_LIMIT, limits_.hard_max_connections,
      MHD_OPTION_CONNECTION_TIMEOUT, limits_.connection_timeout_s,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits_.max_header_bytes, MHD_OPTION_LISTEN_BACKLOG_SIZE,
      512u, MHD_OPTION_NOTIFY_COMPLETED, &HttpServerCallbacks::Completed, this,
      MHD_OPTION_NOTIFY_CONNECTION, &HttpServerCallbacks::Connection, this,
      MHD_OPTION_UNESCAPE_CALLBACK, &Unescape, nullptr, MHD_OPTION_END);
  if (!daemon_) {
    return IoError(fmt::format("cannot listen on {}:{}: {}", host, port,
                               errno ? std::strerror(errno) : "in use, or bad address"));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon_, MHD_DAEMON_INFO_BIND_PORT);
  return info ? static_cast<int>(info->port) : port;
}

Status HttpServer::StartUnix(const std::string& path) {
  if (!daemon_) return FailedPrecondition("http server: StartTcp first");
  sockaddr_un a{};
  if (path.size() >= sizeof a.sun_path) {
    return InvalidArgument(fmt::format("{}: too long for a Unix socket path ({} bytes at most)",
                                       path, sizeof a.sun_path - 1));
  }
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  // The socket's connections go to a daemon of their own, with their own limits.
  unix_daemon_ = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET, 0,
      nullptr, nullptr, &HttpServerCallbacks::Access, this, MHD_OPTION_THREAD_POOL_SIZE,
      limits_.threads, MHD_OPTION_CONNECTION_LIMIT, limits_.hard_max_connections,
      MHD_OPTION_CONNECTION_TIMEOUT, limits_.connection_timeout_s,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, limits_.max_header_bytes, MHD_OPTION_NOTIFY_COMPLETED,
      &HttpServerCallbacks::Completed, this, MHD_OPTION_NOTIFY_CONNECTION,
      &HttpServerCallbacks::Connection, this, MHD_OPTION_UNESCAPE_CALLBACK, &Unescape, nullptr,
      MHD_OPTION_END);
  if (!unix_daemon_) return IoError(fmt::format("{}: cannot start its server", path));
  unix_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (unix_fd_ < 0) return IoError(fmt::format("{}: socket: {}", path, std::strerror(errno)));
  unlink(path.c_str());  // a stale socket of a dead serve (the state directory is locked)
  if (bind(unix_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      chmod(path.c_str(), 0666) != 0 || listen(unix_fd_, 512) != 0 ||
      pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    const int err = errno;
    close(unix_fd_);
    unix_fd_ = -1;
    return IoError(fmt::format("{}: cannot listen: {}", path, std::strerror(err)));
  }
  unix_path_ = path;
  unix_thread_ = std::thread([this] { AcceptUnix(); });
  return Status::Ok();
}

void HttpServer::AcceptUnix() {
  while (true) {
    pollfd fds[2] = {{unix_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    sockaddr_un peer_addr{};
    socklen_t len = sizeof peer_addr;
    const int fd = accept4(unix_fd_, reinterpret_cast<sockaddr*>(&peer_addr), &len, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ucred cred{};
    socklen_t cl = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) != 0) {
      close(fd);
      continue;
    }
    {
      std::lock_guard lk(peers_mu_);
      // A local user other than root and serve's own keeps at most so many open (any local
      // process may connect: one must not hold every connection).
      const bool limited = cred.uid != 0 && cred.uid != geteuid();
      if (limited && open_by_uid_[cred.uid] >= limits_.max_connections_per_local_user) {
        close(fd);
        continue;
      }
      ++open_by_uid_[cred.uid];
      pending_peers_[fd] = PeerCredentials{.uid = cred.uid, .gid = cred.gid, .pid = cred.pid};
    }
    // libmicrohttpd closes the fd when it refuses the connection (over the hard limit).
    if (MHD_add_connection(unix_daemon_, fd, reinterpret_cast<sockaddr*>(&peer_addr), len) !=
        MHD_YES) {
      std::lock_guard lk(peers_mu_);
      pending_peers_.erase(fd);
      ClosedByUid(cred.uid);
    }
  }
}

void HttpServer::ClosedByUid(uid_t uid) {
  if (auto it = open_by_uid_.find(uid); it != open_by_uid_.end() && --it->second == 0) {
    open_by_uid_.erase(it);
  }
}

void HttpServer::Stop() {
  if (unix_thread_.joinable()) {
    (void)!write(stop_pipe_[1], "x", 1);
    unix_thread_.join();
  }
  for (int& fd : {std::ref(unix_fd_), std::ref(stop_pipe_[0]), std::ref(stop_pipe_[1])}) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  if (!unix_path_.empty()) unlink(unix_path_.c_str());
  unix_path_.clear();
  if (unix_daemon_) MHD_stop_daemon(unix_daemon_);
  unix_daemon_ = nullptr;
  if (daemon_) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

}  // namespace tiresias
