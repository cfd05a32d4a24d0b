// AccountByName / AccountById (see accounts.h).
#include "common/accounts.h"

#include <pwd.h>

#include <cerrno>
#include <vector>

namespace tiresias {
namespace {

std::optional<Account> Of(const passwd* p) {
  if (!p) return std::nullopt;
  return Account{.name = p->pw_name ? p->pw_name : "",
                 .uid = p->pw_uid,
                 .gid = p->pw_gid,
                 .home = p->pw_dir ? p->pw_dir : "",
                 .shell = p->pw_shell ? p->pw_shell : ""};
}

// Calls `lookup(pw, buf, size, &found)` (getpwnam_r or getpwuid_r) with a buffer that grows
// while it is too small (ERANGE: an entry with many fields, from LDAP).
template <typename Lookup>
std::optional<Account> Find(Lookup lookup) {
  for (size_t size = 4096; size <= (size_t{1} << 20); size *= 2) {
    std::vector<char> buf(size);
    passwd pw{};
    passwd* found = nullptr;
    const int err = lookup(&pw, buf.data(), buf.size(), &found);
    if (err == ERANGE) continue;
    if (err != 0) return std::nullopt;
    return Of(found);
  }
  return std::nullopt;
}

}  // namespace

std::optional<Account> AccountByName(const std::string& name) {
  return Find([&](passwd* pw, char* buf, size_t size, passwd** found) {
    return getpwnam_r(name.c_str(), pw, buf, size, found);
  });
}

std::optional<Account> AccountById(uid_t uid) {
  return Find([&](passwd* pw, char* buf, size_t size, passwd** found) {
    return getpwuid_r(uid, pw, buf, size, found);
  });
}

}  // namespace tiresias
