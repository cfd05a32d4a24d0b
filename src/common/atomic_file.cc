// WriteFileAtomically: write a temporary file, fsync it, rename it over the target.
#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tiresias {

Status WriteFileAtomically(const std::string& path, const std::string& text, bool durable) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(path + ": " + std::strerror(errno));  // (the name asked for)
  auto fail = [&](int err) {
    unlink(tmp.c_str());
    return IoError(path + ": " + std::strerror(err));
  };
  ssize_t n = write(fd, text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size())) {
    int err = n < 0 ? errno : EIO;
    close(fd);
    return fail(err);
  }
  if (durable && fsync(fd) != 0) {
    int err = errno;
    close(fd);
    return fail(err);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) return fail(errno);
  return Status::Ok();
}

}  // namespace tiresias
