// The system's user accounts (passwd: files, LDAP, ... through NSS), looked up by name or by
// uid: who a caller is, whom a job runs as, its home and groups. One place for getpwnam_r and
// getpwuid_r and their buffer.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace tiresias {

struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home, shell;
};

// nullopt when there is no such account (or it cannot be read).
std::optional<Account> AccountByName(const std::string& name);
std::optional<Account> AccountById(uid_t uid);

}  // namespace tiresias
