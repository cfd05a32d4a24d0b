// A minimal reader for plain comma-separated files with a header row.
#include "trace/csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/strings.h"

namespace tiresias {

StatusOr<CsvFile> CsvFile::Open(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(fmt::format("{}: cannot open", path));
  CsvFile f;
  f.path_ = path;
  std::error_code ec;
  auto size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec)
                                                         : std::uintmax_t{0};
  if (!ec && size > 0) {  // a regular file: one read of known size
    f.data_.resize(static_cast<size_t>(size));
    in.read(f.data_.data(), static_cast<std::streamsize>(f.data_.size()));
  } else {  // a pipe has no size: read it as a stream
    f.data_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (in.bad()) return IoError(fmt::format("{}: read failed", path));
  std::vector<std::string_view> fields;
  if (!f.Next(fields))
    return InvalidArgument(fmt::format("{}: empty file, expected a header", path));
  for (auto v : fields) f.header_.emplace_back(Trim(v));
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
    pos_ = end + 1;
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
