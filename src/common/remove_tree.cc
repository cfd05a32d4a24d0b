// RemoveTree: a recursive remove through directory descriptors (see remove_tree.h).
#include "common/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace tiresias {
namespace {

Status Fail(const std::string& what, int err) {
  return IoError("remove " + what + ": " + std::strerror(err));
}

// Empties the directory open as `fd` (which this call owns and closes); `where` names it.
Status Empty(int fd, const std::string& where, int depth) {
  DIR* d = fdopendir(fd);
  if (!d) {
    const int err = errno;
    close(fd);
    return Fail(where, err);
  }
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  Status result = Status::Ok();
  for (const std::string& name : names) {
    const std::string path = where + "/" + name;
    if (unlinkat(dirfd(d), name.c_str(), 0) == 0 || errno == ENOENT) continue;
    if (errno != EISDIR && errno != EPERM) {
      result = Fail(path, errno);
      break;
    }
    // A directory (Linux says EISDIR; POSIX allows EPERM): opened without following a link,
    // so a directory swapped for a link meanwhile fails here instead of being followed.
    if (depth > 256) {
      result = Fail(path, ELOOP);
      break;
    }
    const int sub = openat(dirfd(d), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) {
      result = Fail(path, errno);
      break;
    }
    if (Status s = Empty(sub, path, depth + 1); !s.ok()) {
      result = s;
      break;
    }
    if (unlinkat(dirfd(d), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      result = Fail(path, errno);
      break;
    }
  }
  closedir(d);
  return result;
}

}  // namespace

Status RemoveTree(const std::string& path) {
  if (unlink(path.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  if (errno != EISDIR && errno != EPERM) return Fail(path, errno);
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? Status::Ok() : Fail(path, errno);
  if (Status s = Empty(fd, path, 0); !s.ok()) return s;
  if (rmdir(path.c_str()) != 0 && errno != ENOENT) return Fail(path, errno);
  return Status::Ok();
}

}  // namespace tiresias
