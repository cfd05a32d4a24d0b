// FreeBytesOn: statvfs's blocks available to unprivileged users, in bytes.
#include "common/free_space.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace tiresias {

StatusOr<int64_t> FreeBytesOn(const std::string& path) {
  struct statvfs v {};
  if (statvfs(path.c_str(), &v) != 0) {
    return IoError(fmt::format("statvfs {}: {}", path, std::strerror(errno)));
  }
  return static_cast<int64_t>(v.f_bavail) * static_cast<int64_t>(v.f_frsize);
}

}  // namespace tiresias
