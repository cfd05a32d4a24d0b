// Who calls the API and what they may do. A local user is named by the kernel: a request
// over the Unix socket in the state directory carries its caller's uid (SO_PEERCRED), which
// cannot be forged. Remote callers (TCP) name themselves with a token: the operator's admin
// token (tiresias.token, 0600) or a per-user token the admin created (`tiresias token
// create USER`), kept only as SHA-256 hashes in tiresias.tokens (0600) and compared in
// constant time. The dashboard uses short-lived session tokens that stand for a caller who
// asked for one (`tiresias dashboard`). Anything else is unauthenticated, reads included.
//
// Admins (root, the user serve runs as, the admin token) see and do everything; other users
// see every job's state but only their own jobs' environment and logs, and cancel only their
// own jobs. Thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/http_server.h"
#include "common/status.h"

namespace tiresias {

struct Caller {
  std::string user;          // login name; "uid:N" for a uid without one
  std::optional<uid_t> uid;  // known for local users, and token users with an account here
  std::optional<gid_t> gid;
  bool admin = false;
  std::string via;  // "unix socket", "admin token", "token"

  bool May(const std::string& owner) const { return admin || owner == user; }
};

// A fresh random token (32 hex digits) from the system's CSPRNG.
StatusOr<std::string> NewToken();
// The admin token in `path`, created (0600) if missing.
StatusOr<std::string> EnsureAdminToken(const std::string& path);
// A valid login-style user name: [a-z_][a-z0-9_.-]{0,31}.
bool IsUserName(const std::string& name);

class Identities {
 public:
  // `operator_uid`: the user serve runs as (an admin, like root).
  static StatusOr<std::unique_ptr<Identities>> Open(std::string admin_token,
                                                    std::string tokens_path, uid_t operator_uid);
  // Unauthenticated (401) without a usable identity (none, or a token that is not valid or
  // has expired); PermissionDenied (403) for a token that names a user no token may be.
  StatusOr<Caller> Resolve(const HttpRequest& req) const;
  // A new token for `user` (replacing theirs); only its hash is kept.
  StatusOr<std::string> CreateToken(const std::string& user);
  Status RevokeToken(const std::string& user);
  std::vector<std::string> TokenUsers() const;
  // A session for the dashboard: a token that stands for `caller` (who asked for it through
  // the socket or with their own token) until it expires, or until the token it came from is
  // revoked or replaced. A session cannot start another (it would outlive itself); a user has
  // at most kMaxSessionsPerUser, the oldest ending first. Kept in memory only.
  StatusOr<std::string> CreateSession(const Caller& caller, std::chrono::seconds ttl);
  static constexpr size_t kMaxSessionsPerUser = 16;
  // The caller that a local uid is.
  Caller LocalCaller(uid_t uid, gid_t gid) const;

 private:
  struct Entry {
    std::string user;
    std::string sha256;  // hex
  };
  Identities() = default;
  Status Save() const;  // under mu_

  std::string admin_sha256_;
  std::string tokens_path_;
  uid_t operator_uid_ = 0;
  mutable std::mutex mu_;
  std::vector<Entry> tokens_;
  struct Session {
    Caller caller;
    std::chrono::steady_clock::time_point expires;
    bool from_token = false;  // started with the user's own token: ends with it
  };
  void EndTokenSessions(const std::string& user);    // under mu_
  mutable std::map<std::string, Session> sessions_;  // by token hash
};

}  // namespace tiresias
