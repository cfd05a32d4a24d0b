// AccountByName / AccountById (see accounts.h).
#include "common/accounts.h"

#include <pwd.h>

#include <array>

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

}  // namespace

std::optional<Account> AccountByName(const std::string& name) {
  std::array<char, 4096> buf{};
  passwd pw{};
  passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0) return std::nullopt;
  return Of(found);
}

std::optional<Account> AccountById(uid_t uid) {
  std::array<char, 4096> buf{};
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0) return std::nullopt;
  return Of(found);
}

}  // namespace tiresias
