// Reads a history of job GPU-times for the Gittins index.
#include "trace/history_reader.h"

#include <fmt/format.h>

#include <cmath>

#include "common/strings.h"
#include "trace/csv.h"

namespace tiresias {

StatusOr<std::vector<Service>> ReadGpuTimeHistory(const std::string& path) {
  auto f = CsvFile::Open(path);
  if (!f.ok()) return f.status();
  auto col = f->Column("duration");
  if (!col) return InvalidArgument(fmt::format("{}:1: missing column 'duration'", path));
  std::vector<Service> out;
  std::vector<std::string_view> row;
  while (f->Next(row)) {
    if (*col >= row.size()) return InvalidArgument(fmt::format("{}: missing duration", f->where()));
    auto v = ParseDouble(row[*col]);
    if (!v || *v < 0 || *v > kMaxGpuSeconds) {
      return InvalidArgument(
          fmt::format("{}: duration '{}' is not a number of GPU-seconds in [0, {}]", f->where(),
                      row[*col], kMaxGpuSeconds));
    }
    out.push_back(static_cast<Service>(std::llround(*v * kMsPerSecond)));
  }
  if (out.empty()) return InvalidArgument(fmt::format("{}: no samples", path));
  return out;
}

}  // namespace tiresias
