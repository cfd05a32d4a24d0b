// A minimal reader for the plain comma-separated files this project consumes (no quoting):
// a header row naming the columns, then one record per line (a leading UTF-8 byte order mark
// is skipped). Reports positions as `file:line` so errors can name the place; a path that
// cannot be read (missing, a directory, too large) is an error with the reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tiresias {

// The largest file CsvFile reads (the full Philly trace is about 5 MiB).
inline constexpr size_t kMaxCsvBytes = size_t{1} << 30;

class CsvFile {
 public:
  static StatusOr<CsvFile> Open(const std::string& path);
  const std::vector<std::string>& header() const { return header_; }
  // Index of a column, or nullopt.
  std::optional<size_t> Column(std::string_view name) const;
  // Next non-empty record; false at end. `fields` views into an internal buffer.
  bool Next(std::vector<std::string_view>& fields);
  int line() const { return line_; }
  size_t RecordsLeft() const;  // an upper bound, for reserving
  std::string where() const;   // "path:line"
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string data_;
  size_t pos_ = 0;
  int line_ = 0;
  std::vector<std::string> header_;
};

}  // namespace tiresias
