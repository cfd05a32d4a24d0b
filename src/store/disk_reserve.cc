// DiskReserve: room kept for serve's journal on a filling disk (see disk_reserve.h).
#include "store/disk_reserve.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <vector>

namespace tiresias {
namespace {

std::string Mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", bytes / 1048576.0);
}

}  // namespace

DiskReserve::DiskReserve(std::string path, int64_t bytes, FreeBytes free, int check_every_ms)
    : path_(std::move(path)),
      dir_(std::filesystem::path(path_).parent_path().string()),
      bytes_(bytes),
      free_fn_(std::move(free)),
      check_every_ms_(check_every_ms) {
  if (!free_fn_) free_fn_ = FreeBytesBeside(path_);
}

bool DiskReserve::Make() {
  struct stat st {};
  if (made_ && stat(path_.c_str(), &st) == 0) return true;  // still there
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  // Blocks really held: a file that is only as long as the reserve (sparse) holds nothing.
  auto held = [&] { return fstat(fd, &st) == 0 && st.st_blocks * 512 >= bytes_; };
  bool made = held() || posix_fallocate(fd, 0, static_cast<off_t>(bytes_)) == 0;
  if (made && !held()) {
    // Allocated but not held (a compressing file system, e.g. ZFS): data that does not
    // compress, written once.
    std::vector<uint64_t> chunk(1 << 17);  // 1 MiB
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int64_t at = 0; made && at < bytes_; at += static_cast<int64_t>(chunk.size() * 8)) {
      for (auto& v : chunk) v = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const size_t n = static_cast<size_t>(
          std::min<int64_t>(bytes_ - at, static_cast<int64_t>(chunk.size() * 8)));
      made = pwrite(fd, chunk.data(), n, static_cast<off_t>(at)) == static_cast<ssize_t>(n);
    }
  }
  close(fd);
  if (!made) unlink(path_.c_str());
  made_ = made;
  return made;
}

void DiskReserve::KeepRoom() const {  // (with no reserve too: the room is the journal's)
  for (const std::string& file : room_in_) {
    const int fd = open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) continue;  // not made yet
    struct stat st {};
    // Fails while the disk is full (what is held stays held) or where the file system does
    // not allocate ahead: nothing to do then but look again.
    if (fstat(fd, &st) == 0) (void)fallocate(fd, FALLOC_FL_KEEP_SIZE, st.st_size, kJournalRoom);
    close(fd);
  }
}

void DiskReserve::Release() {
  if (bytes_ > 0) unlink(path_.c_str());
  made_ = false;
}

DiskReserve::Change DiskReserve::Check() {
  // Without a reserve (`bytes` 0) serve is never low but still pauses when full: it skipped
  // every look, and a full disk stopped serve at its next write (found by a tester: a
  // launch not journalled ran again after the restart).
  const int64_t now = SteadyMs();
  if (now < next_check_ms_) return {};
  next_check_ms_ = now + check_every_ms_;
  KeepRoom();
  auto free = free_fn_();
  if (!free.ok()) return {};  // nothing known: nothing changes
  free_ = *free;
  Change c;
  if (bytes_ <= 0) {
    // no reserve to release or make
  } else if (!low_ && free_ < bytes_) {
    Release();
    KeepRoom();  // what this look could not take, now that there is room
    low_ = true;
    if (auto after = free_fn_(); after.ok()) free_ = *after;
    c = {.changed = true,
         .message = fmt::format("the file system of {} is nearly full ({} free): released the {} "
                                "kept in reserve for the journal; new jobs are refused until {} "
                                "are free",
                                dir_, Mib(*free), Mib(bytes_), Mib(2 * bytes_))};
  } else if (low_ ? free_ >= 2 * bytes_ : true) {
    // Also when not low: a reserve deleted by hand, or never made, is made again.
    const bool made = Make();
    if (auto after = free_fn_(); after.ok()) free_ = *after;
    if (made && low_) {
      low_ = false;
      c = {.changed = true,
           .message = fmt::format("the file system of {} has {} free again: {} kept in reserve "
                                  "for the journal; new jobs are accepted",
                                  dir_, Mib(*free), Mib(bytes_))};
    }
  }
  if (full_ != (free_ < kJournalRoom)) {
    full_ = !full_;
    c.changed = true;
    if (!c.message.empty()) c.message += "; ";
    c.message +=
        full_ ? fmt::format(
                    "only {} free on the file system of {}: serve pauses (no "
                    "decisions, no changes accepted) until {} are free",
                    Mib(free_), dir_, Mib(kJournalRoom))
              : fmt::format("{} free on the file system of {}: serve goes on", Mib(free_), dir_);
  }
  return c;
}

std::string DiskReserve::Summary() const {
  return full_ ? fmt::format(
                     "the disk of serve's state directory is full ({} free): serve makes "
                     "no decision and accepts no new job until {} are free",
                     Mib(free_), Mib(kJournalRoom))
               : fmt::format(
                     "the disk of serve's state directory is nearly full ({} free): new "
                     "jobs are refused until {} are free",
                     Mib(free_), Mib(2 * bytes_));
}

std::string DiskReserve::LowReason() const {
  if (full_) {
    return fmt::format(
        "the file system of serve's state directory {} is full ({} free): serve makes no "
        "decision until {} are free, and accepts new jobs when {} are",
        dir_, Mib(free_), Mib(kJournalRoom), Mib(std::max(2 * bytes_, kJournalRoom)));
  }
  return fmt::format(
      "the file system of serve's state directory {} is nearly full ({} free): new jobs are "
      "refused until {} are free (serve --disk-reserve)",
      dir_, Mib(free_), Mib(2 * bytes_));
}

}  // namespace tiresias
