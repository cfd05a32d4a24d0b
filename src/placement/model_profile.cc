// Model profiles: tensor sizes and skew.
#include "placement/model_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/strings.h"
#include "trace/csv.h"

namespace tiresias {

Status ModelCatalog::Add(const std::string& name, std::vector<double> tensors_mb) {
  if (name.empty()) return InvalidArgument("model profile: empty model name");
  if (tensors_mb.empty()) return InvalidArgument(fmt::format("model {}: no tensor sizes", name));
  ModelProfile p{name, std::move(tensors_mb), 0, 0, 0};
  double largest = 0;
  for (double t : p.tensors_mb) {
    if (!(t > 0))
      return InvalidArgument(fmt::format("model {}: tensor size {} is not > 0", name, t));
    p.total_mb += t;
    largest = std::max(largest, t);
  }
  p.skew = largest / p.total_mb;
  models_[name] = std::move(p);
  return Status::Ok();
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& [name, p] : models_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

const ModelProfile* ModelCatalog::Find(const std::string& name) const {
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : &it->second;
}

Status ModelCatalog::SetComputeMs(const std::string& name, double ms) {
  auto it = models_.find(name);
  if (it == models_.end()) return NotFound(fmt::format("model {}: no profile", name));
  if (!(ms > 0)) return InvalidArgument(fmt::format("model {}: compute time {} ms", name, ms));
  it->second.compute_ms = ms;
  return Status::Ok();
}

Status ModelCatalog::LoadComputeTimes(const std::string& trace_path) {
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
    auto [pos, fresh] = best.emplace(std::string(Trim(row[*model])), ms);
    if (!fresh) pos->second = std::min(pos->second, ms);
  }
  for (const auto& [name, ms] : best) {
    if (models_.contains(name)) models_[name].compute_ms = ms;
  }
  return Status::Ok();
}

StatusOr<ModelCatalog> ModelCatalog::Load(const std::string& path) {
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
