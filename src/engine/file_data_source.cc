// FileDataSource: policy data read from files, cached by path.
#include "engine/file_data_source.h"

#include "trace/history_reader.h"
#include "trace/model_profile_reader.h"

namespace tiresias {
namespace {

// Looks `path` up in `cache`, else reads it with `read` and keeps it (errors are not kept).
template <typename T, typename Read>
StatusOr<std::shared_ptr<const T>> Cached(std::mutex& mu,
                                          std::map<std::string, std::shared_ptr<const T>>& cache,
                                          const std::string& path, Read read) {
  std::lock_guard lk(mu);
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  auto data = read(path);
  if (!data.ok()) return data.status();
  auto shared = std::make_shared<const T>(std::move(*data));
  cache.emplace(path, shared);
  return shared;
}

}  // namespace

StatusOr<std::shared_ptr<const std::vector<Service>>> FileDataSource::GpuTimeHistory(
    const std::string& path) const {
  return Cached(mu_, histories_, path, ReadGpuTimeHistory);
}

StatusOr<std::shared_ptr<const ModelCatalog>> FileDataSource::ModelProfiles(
    const std::string& path) const {
  return Cached(mu_, profiles_, path, ReadModelCatalog);
}

}  // namespace tiresias
