// Reads model profiles (tensor sizes) and per-model compute times into a ModelCatalog.
#include "trace/model_profile_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/strings.h"
#include "trace/csv.h"

namespace tiresias {

Status ReadComputeTimes(const std::string& trace_path, ModelCatalog& c) {
  auto f = CsvFile::Open(trace_path);
  if (!f.ok()) return f.status();
  auto gpus = f->Column("num_gpu"), iters = f->Column("iterations"),
       model = f->Column("model_name"), dur = f->Column("duration");
  if (!gpus || !iters || !model || !dur) {
    return InvalidArgument(
        fmt::format("{}:1: expected columns num_gpu,iterations,model_name,duration", trace_path));
  }
  std::map<std::string, double> best;
  std::vector<std::string_view> row;
  while (f->Next(row)) {
    if (row.size() != f->header().size()) {
      return InvalidArgument(fmt::format("{}: {} fields, the header has {}", f->where(), row.size(),
                                         f->header().size()));
    }
    auto g = ParseInt(Trim(row[*gpus]));
    auto it = ParseDouble(Trim(row[*iters]));
    auto d = ParseDouble(Trim(row[*dur]));
    if (!g || !it || !d) return InvalidArgument(fmt::format("{}: not a number", f->where()));
    if (*g != 1 || !(*it > 0) || !(*d > 0)) continue;
    double ms = *d * 1000.0 / *it;
    if (!(ms <= kMaxComputeMs)) {  // also catches an overflow to infinity
      return InvalidArgument(
          fmt::format("{}: duration {} s / {} iterations is more than {} ms per iteration",
                      f->where(), Trim(row[*dur]), Trim(row[*iters]), kMaxComputeMs));
    }
    auto [pos, fresh] = best.emplace(std::string(Trim(row[*model])), ms);
    if (!fresh) pos->second = std::min(pos->second, ms);
  }
  for (const auto& [name, ms] : best) {
    if (!c.Find(name)) continue;  // a model without a profile has no use for a compute time
    if (Status st = c.SetComputeMs(name, ms); !st.ok()) {
      return InvalidArgument(fmt::format("{}: {}", trace_path, st.message()));
    }
  }
  return Status::Ok();
}

StatusOr<ModelCatalog> ReadModelCatalog(const std::string& path) {
  auto f = CsvFile::Open(path);
  if (!f.ok()) return f.status();
  auto name_col = f->Column("model"), sizes_col = f->Column("tensor_sizes_mb");
  if (!name_col || !sizes_col) {
    return InvalidArgument(fmt::format("{}:1: expected columns model,tensor_sizes_mb", path));
  }
  ModelCatalog c;
  std::vector<std::string_view> row;
  while (f->Next(row)) {
    if (row.size() != f->header().size()) {
      return InvalidArgument(fmt::format("{}: {} fields, the header has {}", f->where(), row.size(),
                                         f->header().size()));
    }
    std::vector<double> sizes;
    for (auto part : Split(Trim(row[*sizes_col]), ' ')) {
      if (part.empty()) continue;
      auto v = ParseDouble(part);
      if (!v)
        return InvalidArgument(fmt::format("{}: size '{}' is not a number", f->where(), part));
      sizes.push_back(*v);
    }
    if (Status st = c.Add(std::string(Trim(row[*name_col])), std::move(sizes)); !st.ok()) {
      return InvalidArgument(fmt::format("{}: {}", f->where(), st.message()));
    }
  }
  return c;
}

}  // namespace tiresias
