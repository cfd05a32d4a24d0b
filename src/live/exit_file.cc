// Writes and reads the per-attempt exit file (see exit_file.h).
#include "live/exit_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace tiresias {

std::string ExitFilePath(const std::string& job_dir, int attempt) {
  return job_dir + "/attempt-" + std::to_string(attempt) + ".exit";
}

Status WriteExitFile(const std::string& path, const ExitRecord& rec) {
  std::string line = rec.signal > 0 ? "signal " + std::to_string(rec.signal) + "\n"
                                    : "exit " + std::to_string(rec.exit_code) + "\n";
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError("exit file " + tmp + ": " + std::strerror(errno));
  auto fail = [&](int err) {
    unlink(tmp.c_str());
    return IoError("exit file " + path + ": " + std::strerror(err));
  };
  ssize_t n = write(fd, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    int err = n < 0 ? errno : EIO;
    close(fd);
    return fail(err);
  }
  if (fsync(fd) != 0) {
    int err = errno;
    close(fd);
    return fail(err);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) return fail(errno);
  return Status::Ok();
}

std::optional<ExitRecord> ReadExitRecord(const std::string& path) {
  std::ifstream in(path);
  std::string kind;
  long value = 0;
  if (!(in >> kind >> value) || value < 0 || value > 255) return std::nullopt;
  if (kind == "exit") return ExitRecord{.exit_code = static_cast<int>(value), .signal = 0};
  if (kind == "signal" && value > 0)
    return ExitRecord{.exit_code = -1, .signal = static_cast<int>(value)};
  return std::nullopt;
}

}  // namespace tiresias
