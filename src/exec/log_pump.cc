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

void LineJoiner::Write(std::string_view data, int64_t now_ms) {
  if (held_.empty()) held_since_ = now_ms;
  const size_t end = data.find_last_of("\n\r");
  if (end == std::string_view::npos) {
    held_.append(data);
  } else {
    held_.append(data.substr(0, end + 1));
    log_->Write(held_);
    held_.assign(data.substr(end + 1));
    held_since_ = now_ms;
  }
  if (held_.size() >= kMaxHeld) Flush();
}

void LineJoiner::Flush() {
  if (!held_.empty()) log_->Write(held_);
  held_.clear();
}

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
      limit_(limit > 0 ? limit : INT64_MAX / 4),
      keep_free_(keep_free),
      fds_(std::move(fds)),
      free_(std::move(free)),
      overshoot_(std::min<int64_t>(limit_, 64 << 10)),
      recheck_ms_(recheck_ms) {
  if (!free_) free_ = FreeBytesBeside(path_);
  struct stat st {};
  if (!fds_.empty() && fstat(fds_.front(), &st) == 0) size_ = st.st_size;
}

void LogPump::Note(const std::string& what) {
  // On a line of its own, also after output that stopped mid-line.
  (void)WriteAllTo(fds_.front(),
                   fmt::format("{}==== tiresias: {} ====\n", mid_line_ ? "\n" : "", what));
  mid_line_ = false;
}

namespace {

constexpr int64_t kMiB = 1 << 20;

}  // namespace

bool LogPump::Room(size_t n) {
  if (keep_free_ <= 0) return true;
  const int64_t now = SteadyMs();
  written_since_check_ += static_cast<int64_t>(n);
  // Often enough that a fast writer cannot go far past the mark between two looks.
  const int64_t every = std::min<int64_t>(16 * kMiB, keep_free_ / 8);
  if (now < next_check_ms_ && written_since_check_ < every) return room_;
  next_check_ms_ = now + recheck_ms_;
  written_since_check_ = 0;
  auto free = free_();
  room_ = !free.ok() || *free - static_cast<int64_t>(n) >= keep_free_;
  if (!room_ && dropping_ < 0) {
    dropping_ = 0;
    Note(
        fmt::format("the disk of this log is nearly full ({:.1f} MiB free): the job's output "
                    "is dropped until {:.1f} MiB are free (serve --disk-reserve)",
                    static_cast<double>(*free) / kMiB, static_cast<double>(keep_free_) / kMiB));
  } else if (room_ && dropping_ >= 0) {
    SayDropped();
  }
  return room_;
}

void LogPump::SayDropped() {
  Note(fmt::format("{} bytes of the job's output were dropped while the disk was full", dropping_));
  dropping_ = -1;
}

void LogPump::Closing() {
  StartAgainIfRemoved();
  if (dropping_ > 0) SayDropped();
  dropping_ = -1;
}

void LogPump::Write(std::string_view data) {
  StartAgainIfRemoved();
  while (!data.empty() && !fds_.empty()) {
    if (((size_ >= limit_ && !mid_line_) || size_ >= limit_ + overshoot_) && !Rotate()) {
      dropped_total_ += static_cast<int64_t>(data.size());  // no log to write to
      return;
    }
    size_t n = data.size();
    if (size_ + static_cast<int64_t>(n) > limit_) {
      const size_t room = static_cast<size_t>(std::max<int64_t>(limit_ - size_, 0));
      const size_t last = data.substr(0, room).rfind('\n');
      if (last != std::string_view::npos) {
        n = last + 1;  // whole lines up to the limit
      } else if (!mid_line_ && size_ > 0) {
        size_ = limit_;  // the log ends with a line: rotate before this one
        continue;
      } else {
        // Finish the line the log is in (or a new log's first line), not too far.
        const size_t most = static_cast<size_t>(limit_ + overshoot_ - size_);
        const size_t end = data.find('\n');
        n = end != std::string_view::npos && end < most ? end + 1 : std::min(n, most);
      }
    }
    const std::string_view part = data.substr(0, n);
    data.remove_prefix(n);
    const size_t written = Room(n) ? WriteAllTo(fds_.front(), part) : 0;
    size_ += static_cast<int64_t>(written);
    if (written > 0) mid_line_ = part[written - 1] != '\n';
    if (written < n) {
      dropped_total_ += static_cast<int64_t>(n - written);
      if (dropping_ >= 0) dropping_ += static_cast<int64_t>(n - written);
    }
  }
}

bool LogPump::Rotate() {
  const int64_t now = SteadyMs();
  if (now < retry_rotate_ms_) return false;
  const std::string older = path_ + ".1";
  // A log deleted by hand (to free space) is simply started again. (A rotation whose new log
  // could not be opened has moved the log already: this is its retry.)
  if (!rotation_pending_) {
    if (rename(path_.c_str(), older.c_str()) == 0) {
      rotation_pending_ = true;
    } else if (errno != ENOENT) {
      return CannotStartLog(now);
    }
  }
  const bool rotated = rotation_pending_;
  if (!StartLog(rotated ? fmt::format("the log reached its limit of {} bytes (serve "
                                      "--max-log-size); the output before this line is in {}",
                                      limit_, older)
                        : std::string("the log was removed; a new one starts here"),
                now)) {
    return false;
  }
  rotation_pending_ = false;
  if (rotated) ++rotations_;
  return true;
}

bool LogPump::CannotStartLog(int64_t now) {
  // Said once until a log starts (the fds still point at the old log, which may be one
  // deleted by hand: the output goes on there, unseen); tried again every second.
  if (!cannot_start_said_) {
    Note(fmt::format("cannot start a new log at {}: {}; tried again every second", path_,
                     std::strerror(errno)));
    cannot_start_said_ = true;
  }
  retry_rotate_ms_ = now + 1000;
  return false;
}

bool LogPump::StartLog(const std::string& why, int64_t now) {
  const int f = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (f < 0) return CannotStartLog(now);
  for (int fd : fds_) (void)dup2(f, fd);
  close(f);
  cannot_start_said_ = false;
  mid_line_ = false;  // a new file (Note then ends its line)
  Note(why);
  size_ = 0;  // the line is not the job's: it does not count
  return true;
}

void LogPump::StartAgainIfRemoved() {
  if (fds_.empty()) return;
  const int64_t now = SteadyMs();
  if (now < next_link_check_ms_ || now < retry_rotate_ms_) return;
  next_link_check_ms_ = now + recheck_ms_;
  // Deleted by hand while the job writes (to free its space, or by mistake): the output went
  // on into the unlinked file, unseen, until the next rotation (found by a tester).
  struct stat st {};
  if (fstat(fds_.front(), &st) == 0 && st.st_nlink == 0) {
    (void)StartLog("the log was removed; a new one starts here", now);
  }
}

}  // namespace tiresias
