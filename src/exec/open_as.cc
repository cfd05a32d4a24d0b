// OpenToReadAs: see open_as.h. A short-lived thread takes the account's file-system identity
// with raw syscalls, which change the calling thread's credentials alone (glibc's wrappers
// would change every thread's), opens the file and ends, its credentials with it.
#include "exec/open_as.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "common/accounts.h"

namespace tiresias {

StatusOr<int> OpenToReadAs(const std::string& path, uid_t uid, gid_t gid) {
  std::vector<gid_t> groups{gid};
  if (const auto account = AccountById(uid)) {
    int n = 64;
    groups.resize(static_cast<size_t>(n));
    if (getgrouplist(account->name.c_str(), gid, groups.data(), &n) < 0) {
      groups.resize(static_cast<size_t>(n));
      getgrouplist(account->name.c_str(), gid, groups.data(), &n);
    }
    groups.resize(static_cast<size_t>(n));
  }
  int fd = -1, err = 0;
  std::thread([&] {
    // setfsuid/setfsgid report the previous id, not errors: asking again with -1 reads back
    // what took effect.
    if (syscall(SYS_setgroups, groups.size(), groups.data()) != 0 ||
        (syscall(SYS_setfsgid, gid), static_cast<gid_t>(syscall(SYS_setfsgid, -1)) != gid) ||
        (syscall(SYS_setfsuid, uid), static_cast<uid_t>(syscall(SYS_setfsuid, -1)) != uid)) {
      err = errno ? errno : EPERM;
      return;
    }
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // (a FIFO must not block)
    if (fd < 0) err = errno;
  }).join();
  if (fd >= 0) return fd;
  if (err == ENOENT) return NotFound(fmt::format("{}: no such file", path));
  return PermissionDenied(
      fmt::format("{}: not readable by uid {} gid {} ({})", path, uid, gid, std::strerror(err)));
}

}  // namespace tiresias
