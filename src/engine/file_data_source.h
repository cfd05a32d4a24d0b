// The drivers' DataSource: reads the files policies ask for through trace/ and keeps each
// one, by path, for the next policy that asks (a `compare` of five runs reads the history
// once). Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/data_source.h"

namespace tiresias {

class FileDataSource : public DataSource {
 public:
  StatusOr<std::shared_ptr<const std::vector<Service>>> GpuTimeHistory(
      const std::string& path) const override;
  StatusOr<std::shared_ptr<const ModelCatalog>> ModelProfiles(
      const std::string& path) const override;

 private:
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const std::vector<Service>>> histories_;
  mutable std::map<std::string, std::shared_ptr<const ModelCatalog>> profiles_;
};

}  // namespace tiresias
