// FreeBytesOn: statvfs's blocks available to unprivileged users, in bytes; FreeBytesBeside and
// SteadyMs for its callers.
#include "common/free_space.h"

#include <fmt/format.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace tiresias {

StatusOr<int64_t> FreeBytesOn(const std::string& path) {
  struct statvfs v {};
  if (statvfs(path.c_str(), &v) != 0) {
    return IoError(fmt::format("statvfs {}: {}", path, std::strerror(errno)));
  }
  return static_cast<int64_t>(v.f_bavail) * static_cast<int64_t>(v.f_frsize);
}

FreeBytesFn FreeBytesBeside(const std::string& file) {
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  return [dir = parent.empty() ? std::string(".") : parent.string()] { return FreeBytesOn(dir); };
}

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace tiresias
