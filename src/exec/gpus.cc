// Parsing nvidia-smi's CSV GPU list, and emulated GPUs. Running nvidia-smi is in
// gpus_discover.cc.
#include "exec/gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include "common/strings.h"

namespace tiresias {
namespace {

// The columns we need, in --format=csv,noheader order.
enum Column { kIndex, kUuid, kName, kMemory, kColumns };
constexpr std::array<std::string_view, kColumns> kColumnNames = {"index", "uuid", "name",
                                                                 "memory.total"};

std::string Quote(std::string_view line) {
  constexpr size_t kMax = 120;
  if (line.size() > kMax) return fmt::format("'{}...'", line.substr(0, kMax));
  return fmt::format("'{}'", line);
}

// "memory.total [MiB]" -> "memory.total"; "index" -> "index".
std::string_view ColumnName(std::string_view header_field) {
  std::string_view f = Trim(header_field);
  if (size_t p = f.find(" ["); p != std::string_view::npos) f = f.substr(0, p);
  return f;
}

// "143771 MiB" or "143771" -> 143771; "[N/A]" -> -1.
std::optional<int64_t> ParseMemoryMib(std::string_view f) {
  f = Trim(f);
  if (f == "[N/A]" || f == "N/A" || f == "[Not Supported]") return -1;
  if (f.ends_with("MiB")) f = Trim(f.substr(0, f.size() - 3));
  auto v = ParseInt(f);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

}  // namespace

StatusOr<std::vector<GpuInfo>> ParseNvidiaSmiCsv(std::string_view text) {
  std::vector<GpuInfo> gpus;
  std::array<int, kColumns> col = {kIndex, kUuid, kName, kMemory};  // noheader order
  size_t width = kColumns;
  bool first = true;
  std::set<int> indices;
  std::vector<std::string_view> lines = Split(text, '\n');
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = Trim(lines[n]);
    if (line.empty()) continue;
    auto bad = [&](const std::string& what) {
      return InvalidArgument(
          fmt::format("nvidia-smi output line {}: {}: {}", n + 1, what, Quote(line)));
    };
    std::vector<std::string_view> fields = Split(line, ',');
    bool header = first && std::any_of(fields.begin(), fields.end(),
                                       [](std::string_view f) { return ColumnName(f) == "index"; });
    if (header) {
      first = false;
      width = fields.size();
      col.fill(-1);
      for (size_t i = 0; i < fields.size(); ++i) {
        for (int c = 0; c < kColumns; ++c) {
          if (ColumnName(fields[i]) == kColumnNames[c]) col[c] = static_cast<int>(i);
        }
      }
      for (int c = 0; c < kColumns; ++c) {
        if (col[c] < 0) return bad(fmt::format("header lacks the '{}' column", kColumnNames[c]));
      }
      continue;
    }
    first = false;
    if (fields.size() != width) {
      return bad(fmt::format(
          "expected {} comma-separated fields (index, uuid, name, memory.total), got {}", width,
          fields.size()));
    }
    GpuInfo g;
    auto index = ParseInt(fields[col[kIndex]]);
    if (!index || *index < 0 || *index > 1 << 20) {
      return bad(fmt::format("index '{}' is not a GPU index", Trim(fields[col[kIndex]])));
    }
    g.index = static_cast<int>(*index);
    if (!indices.insert(g.index).second) return bad(fmt::format("GPU {} listed twice", g.index));
    g.uuid = std::string(Trim(fields[col[kUuid]]));
    if (g.uuid.empty() || g.uuid.find(' ') != std::string::npos) {
      return bad(fmt::format("uuid '{}' is not a GPU UUID", g.uuid));
    }
    g.name = std::string(Trim(fields[col[kName]]));
    if (g.name.empty()) return bad("empty GPU name");
    auto mem = ParseMemoryMib(fields[col[kMemory]]);
    if (!mem) {
      return bad(
          fmt::format("memory.total '{}' is not '<n> MiB' or [N/A]", Trim(fields[col[kMemory]])));
    }
    g.memory_mib = *mem;
    gpus.push_back(std::move(g));
  }
  return gpus;
}

std::vector<GpuInfo> EmulatedGpus(int n) {
  std::vector<GpuInfo> gpus;
  for (int i = 0; i < n; ++i) {
    gpus.push_back({.index = i,
                    .uuid = fmt::format("EMU-{}", i),
                    .name = fmt::format("emulated-gpu-{}", i),
                    .memory_mib = -1,
                    .emulated = true});
  }
  return gpus;
}

}  // namespace tiresias
