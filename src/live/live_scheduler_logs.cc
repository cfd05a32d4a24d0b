// LiveScheduler's job logs for `logs` (see live_scheduler.h): a job's output read from an
// offset or its last lines, opened with its submitter's rights when they chose the path.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <utility>

#include "exec/open_as.h"
#include "live/live_scheduler.h"

namespace tiresias {
namespace {

// What names a log file for a reader's cursor: its inode and, where the file system keeps
// it, its birth time (a rotation unlinks the oldest log and creates the new one at once,
// which may get the same inode). Within 63 bits, as the API's integers are; never 0.
uint64_t LogFileIdentity(int fd) {
  struct statx sx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &sx) != 0) {
    struct stat st {};  // (statx refused, as some sandboxes do: the inode alone)
    if (fstat(fd, &st) != 0) return 1;
    sx.stx_ino = st.st_ino;
    sx.stx_mask = STATX_INO;
  }
  uint64_t id = sx.stx_ino * 0x9E3779B97F4A7C15ULL;
  if (sx.stx_mask & STATX_BTIME) {
    id ^= static_cast<uint64_t>(sx.stx_btime.tv_sec) * 1'000'000'007ULL + sx.stx_btime.tv_nsec;
  }
  id &= static_cast<uint64_t>(INT64_MAX);
  return id == 0 ? 1 : id;
}

}  // namespace

StatusOr<std::string> LiveScheduler::Logs(JobId id, LogCursor at, size_t max, LogCursor& next,
                                          bool stderr_stream, std::optional<size_t> tail_lines) {
  std::string path, ended, ref;               // ended: how, for a job that has
  std::optional<std::pair<uid_t, gid_t>> as;  // whose rights open it
  bool rotated = false;  // the job directory's log, which serve rotates (--max-log-size)
  {
    std::lock_guard lk(mu_);
    auto it = records_.find(id);
    if (it == records_.end()) return NotFound(fmt::format("job {}: no such job", id.value()));
    const JobRecord& r = it->second;
    ref = RefOf(r);  // as its user names it
    path = OutputPath(r, stderr_stream);
    // (A job that never ran has no output: nothing to say, as before it ends.)
    if (IsTerminal(r.state) && r.first_start >= 0) {
      const std::string state(ToString(r.state));
      ended = r.message.starts_with(state) ? r.message : state + ": " + r.message;
    }
    // A path the submitter chose (--output, --error) is opened with the submitter's rights:
    // serve as root must not read, say, /etc/shadow for them. The job directory's own log is
    // serve's, written for the job.
    const bool chosen = !(stderr_stream && !r.error.empty() ? r.error : r.output).empty();
    if (!chosen) {
      if (std::string why = Removed(r); !why.empty()) return NotFound(why);
    }
    rotated = !chosen;
    if (chosen && geteuid() == 0 && r.uid >= 0) {
      as.emplace(static_cast<uid_t>(r.uid), static_cast<gid_t>(r.gid >= 0 ? r.gid : r.uid));
    }
  }
  next = at;
  // -1 when serve cannot read it (as before: nothing).
  const auto open_log = [&](const std::string& p) -> StatusOr<int> {
    if (as) return OpenToReadAs(p, as->first, as->second);
    // (O_NONBLOCK: a FIFO must not hold an API thread; it is refused below.)
    if (const int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); fd >= 0) return fd;
    if (errno == ENOENT) return NotFound(p);
    return -1;
  };
  StatusOr<int> opened = open_log(path);
  // None now (between a rotation's rename and the new log, or its creation failed): the
  // rotated one holds the output.
  if (!opened.ok() && opened.status().code() == StatusCode::kNotFound && rotated) {
    if (auto older = open_log(path + ".1"); older.ok()) opened = older;
  }
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound) {
      if (ended.empty()) return std::string();  // not yet
      // It never will be (found by an exploratory test: `logs` printed nothing, exit 0).
      return NotFound(fmt::format("job {}: its output {} does not exist ({})", ref, path, ended));
    }
    return PermissionDenied(fmt::format("job {}: its output {} is not readable by its user: {}",
                                        ref, path, opened.status().message()));
  }
  int fd = *opened;
  if (fd < 0) return std::string();  // not readable by serve (as before: nothing)
  struct stat st {};
  if (fstat(fd, &st) != 0 || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    close(fd);
    return FailedPrecondition(fmt::format(
        "job {}: its output {} is a pipe or a socket, which logs cannot read", ref, path));
  }
  if (!S_ISREG(st.st_mode)) {  // a device (--output /dev/null): nothing to show
    close(fd);
    return std::string();
  }
  int64_t offset = at.offset, size = st.st_size;
  uint64_t file = LogFileIdentity(fd);
  // The reader's file is no longer the log. Rotated since its last read (the log moved to
  // `<log>.1`): the rest of it comes first, then the new log from its start, as `tail -F`
  // does. Otherwise (rotated twice since, deleted by hand, or a path the user chose made
  // anew) the log from its start: what the reader missed is not guessed at (an older
  // `<log>.1` may be output it has read).
  bool gap = false;  // output between the reader's file and the log may not be shown
  if (at.file != 0 && at.file != file) {
    offset = 0;
    if (auto older = rotated ? open_log(path + ".1") : StatusOr<int>(-1);
        older.ok() && *older >= 0) {
      struct stat ost {};
      const bool its = LogFileIdentity(*older) == at.file;
      if (fstat(*older, &ost) == 0 && S_ISREG(ost.st_mode) && its && at.offset < ost.st_size) {
        std::swap(fd, *older);
        size = ost.st_size;
        file = at.file;
        offset = at.offset;
      }
      // Another `<log>.1`: rotated twice since (said, not skipped without a word; found by a
      // tester), or an older one already read before the log was deleted by hand.
      gap = !its;
      close(*older);
    }
  }
  // Past the end of the same file: truncated; read again from its start.
  if (offset > size) offset = 0;
  auto read_at = [&](int64_t from, size_t n) {
    std::string out(n, '\0');
    size_t got = 0;
    while (got < n) {
      const ssize_t k =
          pread(fd, out.data() + got, n - got, static_cast<off_t>(from) + static_cast<off_t>(got));
      if (k <= 0) break;
      got += static_cast<size_t>(k);
    }
    out.resize(got);
    return out;
  };
  if (tail_lines && *tail_lines == 0) offset = size;  // none (it read the whole log)
  if (tail_lines &&
      *tail_lines > 0) {  // the last lines: read back from the end until enough newlines
    int64_t from = size;
    size_t lines = 0;
    bool found = false;  // the newline before the first of the last `tail_lines` lines
    while (from > 0 && !found) {
      const int64_t step = std::min<int64_t>(from, 65536);
      from -= step;
      const std::string chunk = read_at(from, static_cast<size_t>(step));
      for (int64_t k = static_cast<int64_t>(chunk.size()) - 1; k >= 0; --k) {
        if (chunk[static_cast<size_t>(k)] == '\n' && from + k != size - 1 &&
            ++lines == *tail_lines) {
          from += k + 1;
          found = true;
          break;
        }
      }
    }
    // From that line on, `max` bytes at a time (it kept only the last `max` bytes, from mid-line,
    // and `logs --tail N` showed no more; found by a tester): the reader goes on from `next`.
    offset = from;
  }
  std::string buf = offset < 0 ? std::string() : read_at(offset, max);
  close(fd);
  next = {.offset = offset + static_cast<int64_t>(buf.size()), .file = file, .end = size};
  if (gap) {
    buf.insert(0,
               "==== tiresias: output may be missing here: the log was rotated (serve "
               "--max-log-size) or removed more than once since the last read ====\n");
  }
  return buf;
}

}  // namespace tiresias
