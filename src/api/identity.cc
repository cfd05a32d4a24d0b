// Callers of the API: kernel-named local users and token holders (see identity.h).
#include "api/identity.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/api_reply.h"
#include "common/accounts.h"
#include "common/atomic_file.h"
#include "common/sha256.h"
#include "common/strings.h"

namespace tiresias {
namespace {

// Constant time in the contents (both are hex SHA-256, so the lengths are public).
bool SameHash(const std::string& a, const std::string& b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// The token of an `Authorization: Bearer TOKEN` header (the scheme in any case, RFC 9110);
// nullopt without the header; a status for another scheme or no token.
std::optional<StatusOr<std::string>> BearerToken(const HttpRequest& req) {
  const std::string h = req.Header("authorization");
  if (h.empty()) return std::nullopt;
  const std::string_view v = Trim(h);
  const std::string_view scheme = v.substr(0, v.find(' '));
  const std::string_view token = Trim(v.substr(scheme.size()));
  if (scheme.size() != 6 || !std::equal(scheme.begin(), scheme.end(), "bearer", [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == b;
      })) {
    // The scheme is named only if it looks like one: `Authorization: TOKEN` would echo the
    // secret into a reply that scripts print.
    const bool word =
        !scheme.empty() && scheme.size() <= 16 &&
        std::all_of(scheme.begin(), scheme.end(),
                    [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }) &&
        !token.empty();
    return Unauthenticated(fmt::format(
        "Authorization: expected the scheme Bearer ('Authorization: Bearer <token>'), got {}",
        word ? api::Echo(nlohmann::json(std::string(scheme))) : "a value without a scheme"));
  }
  if (token.empty()) {
    return Unauthenticated("Authorization: Bearer without a token");
  }
  return std::string(token);
}

// Writes `text` to `path` with mode 0600 (atomically).
Status WritePrivate(const std::string& path, const std::string& text) {
  const mode_t old = umask(077);  // never readable by others, not even briefly
  Status s = WriteFileAtomically(path, text);
  umask(old);
  if (s.ok() && chmod(path.c_str(), 0600) != 0) return IoError(path + ": chmod 0600 failed");
  return s;
}

}  // namespace

StatusOr<std::string> NewToken() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return IoError("cannot draw random bytes for a token");
  }
  std::string tok;
  for (unsigned char b : bytes) tok += fmt::format("{:02x}", b);
  return tok;
}

StatusOr<std::string> EnsureAdminToken(const std::string& path) {
  std::ifstream in(path);
  std::string tok;
  if (in && std::getline(in, tok) && !Trim(tok).empty()) {
    if (chmod(path.c_str(), 0600) != 0) return IoError(path + ": chmod 0600 failed");
    return std::string(Trim(tok));
  }
  auto fresh = NewToken();
  if (!fresh.ok()) return fresh.status();
  if (Status s = WritePrivate(path, *fresh + "\n"); !s.ok()) {
    return IoError("cannot write the API token: " + s.message());
  }
  return *fresh;
}

namespace {

// Why no token acts for a superuser: its holder's jobs would run as uid 0, yet it would not
// be an admin (an exploratory test: `token create root` made one).
std::string SuperuserToken(const std::string& user) {
  return fmt::format(
      "{} is uid 0: a token for it would run its holder's jobs as the superuser; the admin "
      "token (tiresias.token in the state directory) acts for the operator",
      user);
}

}  // namespace

bool IsUserName(const std::string& name) {
  if (name.empty() || name.size() > 32) return false;
  if (!(std::islower(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      return false;
    }
  }
  return true;
}

StatusOr<std::unique_ptr<Identities>> Identities::Open(std::string admin_token,
                                                       std::string tokens_path,
                                                       uid_t operator_uid) {
  std::unique_ptr<Identities> ids(new Identities);
  ids->admin_sha256_ = Sha256Hex(admin_token);
  ids->tokens_path_ = std::move(tokens_path);
  ids->operator_uid_ = operator_uid;
  std::ifstream in(ids->tokens_path_);
  if (!in) return ids;  // no user tokens yet
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array()) {
    return IoError(
        fmt::format("{}: not a tokens file (expected {{\"tokens\": [...]}})", ids->tokens_path_));
  }
  for (const auto& t : j["tokens"]) {
    if (!t.is_object() || !t.contains("user") || !t["user"].is_string() || !t.contains("sha256") ||
        !t["sha256"].is_string()) {
      return IoError(fmt::format("{}: an entry without user and sha256", ids->tokens_path_));
    }
    ids->tokens_.push_back({t["user"].get<std::string>(), t["sha256"].get<std::string>()});
  }
  if (chmod(ids->tokens_path_.c_str(), 0600) != 0) {
    return IoError(ids->tokens_path_ + ": chmod 0600 failed");
  }
  return ids;
}

Caller Identities::LocalCaller(uid_t uid, gid_t gid) const {
  Caller c{.uid = uid, .gid = gid, .via = "unix socket"};
  const auto account = AccountById(uid);
  c.user = account ? account->name : fmt::format("uid:{}", uid);
  c.admin = uid == 0 || uid == operator_uid_;
  return c;
}

StatusOr<Caller> Identities::Resolve(const HttpRequest& req) const {
  if (auto token = BearerToken(req)) {
    if (!token->ok()) return token->status();
    const std::string hash = Sha256Hex(**token);
    if (SameHash(hash, admin_sha256_)) {
      Caller c = LocalCaller(operator_uid_, getgid());
      c.via = "admin token";
      return c;
    }
    std::lock_guard lk(mu_);
    if (auto it = sessions_.find(hash); it != sessions_.end()) {
      if (it->second.expires > std::chrono::steady_clock::now()) return it->second.caller;
      sessions_.erase(it);
      return Unauthenticated("the session has expired; run `tiresias dashboard` again");
    }
    for (const Entry& e : tokens_) {
      if (!SameHash(hash, e.sha256)) continue;
      Caller c{.user = e.user, .via = "token"};
      if (const auto account = AccountByName(e.user)) {
        c.uid = account->uid;
        c.gid = account->gid;
      }
      if (c.uid == 0u) return PermissionDenied(SuperuserToken(e.user));  // (a file edited)
      return c;
    }
    return Unauthenticated("the token is not valid (revoked, or never issued by this server)");
  }
  if (req.peer) return LocalCaller(req.peer->uid, req.peer->gid);
  return Unauthenticated(
      "who is calling? Local users: connect through the Unix socket tiresias.sock in the state "
      "directory (the tiresias CLI does); remote callers: send 'Authorization: Bearer <token>' "
      "(an admin creates one with `tiresias token create USER`)");
}

StatusOr<std::string> Identities::CreateToken(const std::string& user) {
  if (!IsUserName(user)) {
    return InvalidArgument(
        fmt::format("'{}' is not a user name ([a-z_][a-z0-9_.-]*, at most 32)", user));
  }
  if (const auto account = AccountByName(user); account && account->uid == 0) {
    return InvalidArgument(SuperuserToken(user));
  }
  auto tok = NewToken();
  if (!tok.ok()) return tok.status();
  std::lock_guard lk(mu_);
  std::erase_if(tokens_, [&](const Entry& e) { return e.user == user; });
  EndTokenSessions(user);  // the old token's sessions end with it
  tokens_.push_back({user, Sha256Hex(*tok)});
  if (Status s = Save(); !s.ok()) return s;
  return *tok;
}

Status Identities::RevokeToken(const std::string& user) {
  std::lock_guard lk(mu_);
  const size_t before = tokens_.size();
  std::erase_if(tokens_, [&](const Entry& e) { return e.user == user; });
  if (tokens_.size() == before) return NotFound(fmt::format("user {} has no token", user));
  EndTokenSessions(user);
  return Save();
}

void Identities::EndTokenSessions(const std::string& user) {
  std::erase_if(sessions_, [&](const auto& kv) {
    return kv.second.from_token && kv.second.caller.user == user;
  });
}

StatusOr<std::string> Identities::CreateSession(const Caller& caller, std::chrono::seconds ttl) {
  if (caller.via.starts_with("session")) {
    return PermissionDenied(
        "a session cannot start another: ask with your own token or through the Unix socket "
        "(`tiresias dashboard`)");
  }
  auto tok = NewToken();
  if (!tok.ok()) return tok.status();
  std::lock_guard lk(mu_);
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(sessions_, [&](const auto& kv) { return kv.second.expires <= now; });
  // At most kMaxSessionsPerUser each: the one that expires first (the oldest) makes room.
  size_t mine = 0;
  auto oldest = sessions_.end();
  for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
    if (it->second.caller.user != caller.user) continue;
    ++mine;
    if (oldest == sessions_.end() || it->second.expires < oldest->second.expires) oldest = it;
  }
  if (mine >= kMaxSessionsPerUser) sessions_.erase(oldest);
  Caller c = caller;
  c.via = "session (" + caller.via + ")";
  sessions_[Sha256Hex(*tok)] = Session{c, now + ttl, caller.via == "token"};
  return *tok;
}

std::vector<std::string> Identities::TokenUsers() const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (const Entry& e : tokens_) out.push_back(e.user);
  return out;
}

Status Identities::Save() const {
  nlohmann::json j = {{"tokens", nlohmann::json::array()}};
  for (const Entry& e : tokens_) j["tokens"].push_back({{"user", e.user}, {"sha256", e.sha256}});
  return WritePrivate(tokens_path_, j.dump(2) + "\n");
}

}  // namespace tiresias
