// A minimal reader for plain comma-separated files with a header row.
#include "trace/csv.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace tiresias {
namespace {

// Reads the whole of `path` into `out`. A directory, an unreadable file or one larger than
// kMaxCsvBytes (e.g. /dev/zero) is an error naming the path and the reason.
Status ReadWhole(const std::string& path, std::string& out) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return InvalidArgument(fmt::format("{}: is a directory, expected a CSV file", path));
  }
  if (S_ISREG(st.st_mode))
    out.reserve(static_cast<size_t>(std::min<off_t>(st.st_size, kMaxCsvBytes)));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return IoError(fmt::format("{}: read failed: {}", path, std::strerror(err)));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > kMaxCsvBytes) {
      close(fd);
      return InvalidArgument(fmt::format("{}: larger than {} MiB, not a CSV file this reads", path,
                                         kMaxCsvBytes >> 20));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return Status::Ok();
}

}  // namespace

StatusOr<CsvFile> CsvFile::Open(const std::string& path) {
  CsvFile f;
  f.path_ = path;
  if (Status st = ReadWhole(path, f.data_); !st.ok()) return st;
  // A UTF-8 byte order mark (spreadsheets write one) is not part of the first column's name.
  if (f.data_.starts_with("\xEF\xBB\xBF")) f.pos_ = 3;
  std::vector<std::string_view> fields;
  if (!f.Next(fields))
    return InvalidArgument(fmt::format("{}: empty file, expected a header", path));
  for (auto v : fields) {
    // A column named twice: which one a reader takes would be a guess (found by a tester:
    // `job_id,num_gpu,num_gpu,...` was read as its first).
    if (!Trim(v).empty() && f.Column(Trim(v))) {
      return InvalidArgument(
          fmt::format("{}:1: column '{}' appears twice in the header", path, std::string(Trim(v))));
    }
    f.header_.emplace_back(Trim(v));
  }
  return f;
}

std::optional<size_t> CsvFile::Column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

bool CsvFile::Next(std::vector<std::string_view>& fields) {
  while (pos_ < data_.size()) {
    size_t end = data_.find('\n', pos_);
    if (end == std::string::npos) end = data_.size();
    std::string_view line(data_.data() + pos_, end - pos_);
    pos_ = std::min(end + 1, data_.size());  // never past the end, with or without a last '\n'
    ++line_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) continue;
    fields = Split(line, ',');
    return true;
  }
  return false;
}

size_t CsvFile::RecordsLeft() const {
  return static_cast<size_t>(
             std::count(data_.begin() + static_cast<ptrdiff_t>(pos_), data_.end(), '\n')) +
         1;
}

std::string CsvFile::where() const {
  return fmt::format("{}:{}", path_, line_);
}

}  // namespace tiresias
