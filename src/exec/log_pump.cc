// LogPump: a job's log with a size limit, rotated to `<log>.1`, that gives way to serve's
// journal on a full disk (see log_pump.h).
#include "exec/log_pump.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/free_space.h"

namespace tiresias {

size_t WriteAllTo(int fd, std::string_view s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

LogPump::LogPump(std::string path, int64_t limit, int64_t keep_free, std::vector<int> fds,
                 FreeBytes free, int recheck_ms)
    : path_(std::move(path)),
      limit_(limit > 0 ? limit : INT64_MAX),
      keep_free_(keep_free),
      fds_(std::move(fds)),
      free_(std::move(free)),
      recheck_ms_(recheck_ms) {
  if (!free_) {
    const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
    free_ = [dir = parent.empty() ? std::filesystem::path(".") : parent] {
      return FreeBytesOn(dir.string());
    };
  }
  struct stat st {};
  if (!fds_.empty() && fstat(fds_.front(), &st) == 0) size_ = st.st_size;
}

void LogPump::Note(const std::string& what) {
  (void)WriteAllTo(fds_.front(), fmt::format("==== tiresias: {} ====\n", what));
}

bool LogPump::Room(size_t n) {
  if (keep_free_ <= 0) return true;
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  if (dropping_ >= 0 && now < next_check_ms_) return false;
  next_check_ms_ = now + recheck_ms_;
  auto free = free_();
  const bool room = !free.ok() || *free - static_cast<int64_t>(n) >= keep_free_;
  if (!room && dropping_ < 0) {
    dropping_ = 0;
    Note(
        fmt::format("the disk of this log is nearly full ({} bytes free): the job's output is "
                    "dropped until {} bytes are free",
                    *free, keep_free_));
  } else if (room && dropping_ >= 0) {
    Note(fmt::format("{} bytes of the job's output were dropped while the disk was full",
                     dropping_));
    dropping_ = -1;
  }
  return room;
}

void LogPump::Write(std::string_view data) {
  while (!data.empty() && !fds_.empty()) {
    if (size_ >= limit_ && !Rotate()) {  // dropped: there is no log to write to
      dropped_total_ += static_cast<int64_t>(data.size());
      return;
    }
    size_t n = data.size();
    if (static_cast<int64_t>(n) > limit_ - size_) {
      // Up to the limit, ending at a line's end if there is one before it (and something
      // is already in this log: a line longer than the limit is cut).
      n = static_cast<size_t>(limit_ - size_);
      const size_t nl = data.substr(0, n).rfind('\n');
      if (nl != std::string_view::npos) {
        n = nl + 1;
      } else if (size_ > 0) {
        size_ = limit_;  // rotate first
        continue;
      }
    }
    const std::string_view part = data.substr(0, n);
    data.remove_prefix(n);
    const size_t written = Room(n) ? WriteAllTo(fds_.front(), part) : 0;
    size_ += static_cast<int64_t>(written);
    if (written < n) {
      dropped_total_ += static_cast<int64_t>(n - written);
      if (dropping_ >= 0) dropping_ += static_cast<int64_t>(n - written);
    }
  }
}

bool LogPump::Rotate() {
  if (broken_) return false;
  const std::string older = path_ + ".1";
  const int f = rename(path_.c_str(), older.c_str()) == 0
                    ? open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
                    : -1;
  if (f < 0) {
    // The fds still point at the old log: one line there, then the output is dropped.
    broken_ = true;
    Note(fmt::format("cannot start a new log at {}: {}; the rest of the job's output is dropped",
                     path_, std::strerror(errno)));
    return false;
  }
  for (int fd : fds_) (void)dup2(f, fd);
  close(f);
  ++rotations_;
  Note(
      fmt::format("the log reached its limit of {} bytes (serve --max-log-size); the output "
                  "before this line is in {}",
                  limit_, older));
  size_ = 0;  // the line is not the job's: it does not count
  return true;
}

}  // namespace tiresias
