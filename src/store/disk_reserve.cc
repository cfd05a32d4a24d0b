// DiskReserve: room kept for serve's journal on a filling disk (see disk_reserve.h).
#include "store/disk_reserve.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tiresias {
namespace {

std::string Mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", bytes / 1048576.0);
}

}  // namespace

DiskReserve::DiskReserve(std::string path, int64_t bytes, FreeBytes free)
    : path_(std::move(path)), bytes_(bytes), free_fn_(std::move(free)) {
  if (!free_fn_) {
    const std::string dir = std::filesystem::path(path_).parent_path().string();
    free_fn_ = [dir] { return FreeBytesOn(dir.empty() ? "." : dir); };
  }
}

bool DiskReserve::Make() {
  const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  struct stat st {};
  // Blocks really held: a file that is only as long as the reserve (sparse) holds nothing.
  const bool made = (fstat(fd, &st) == 0 && st.st_blocks * 512 >= bytes_) ||
                    posix_fallocate(fd, 0, static_cast<off_t>(bytes_)) == 0;
  close(fd);
  if (!made) unlink(path_.c_str());
  return made;
}

void DiskReserve::Release() {
  if (bytes_ > 0) unlink(path_.c_str());
}

DiskReserve::Change DiskReserve::Check() {
  if (bytes_ <= 0) return {};
  auto free = free_fn_();
  if (!free.ok()) return {};  // nothing known: nothing changes
  free_ = *free;
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  Change c;
  if (!low_ && free_ < bytes_) {
    Release();
    low_ = true;
    if (auto after = free_fn_(); after.ok()) free_ = *after;
    c = {.changed = true,
         .message = fmt::format("the file system of {} is nearly full ({} free): released the {} "
                                "kept in reserve for the journal; new jobs are refused until {} "
                                "are free",
                                dir, Mib(*free), Mib(bytes_), Mib(2 * bytes_))};
  } else if (low_ ? free_ >= 2 * bytes_ : true) {
    // Also when not low: a reserve deleted by hand, or never made, is made again.
    const bool made = Make();
    if (auto after = free_fn_(); after.ok()) free_ = *after;
    if (made && low_) {
      low_ = false;
      c = {.changed = true,
           .message = fmt::format("the file system of {} has {} free again: {} kept in reserve "
                                  "for the journal; new jobs are accepted",
                                  dir, Mib(*free), Mib(bytes_))};
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
                    Mib(free_), dir, Mib(kJournalRoom))
              : fmt::format("{} free on the file system of {}: serve goes on", Mib(free_), dir);
  }
  return c;
}

std::string DiskReserve::LowReason() const {
  const std::string dir = std::filesystem::path(path_).parent_path().string();
  if (full_) {
    return fmt::format(
        "the file system of serve's state directory {} is full ({} free): serve accepts no "
        "changes until {} are free, and new jobs until {} are",
        dir, Mib(free_), Mib(kJournalRoom), Mib(2 * bytes_));
  }
  return fmt::format(
      "the file system of serve's state directory {} is nearly full ({} free): new jobs are "
      "refused until {} are free (serve --disk-reserve)",
      dir, Mib(free_), Mib(2 * bytes_));
}

}  // namespace tiresias
