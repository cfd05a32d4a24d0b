// Data that policies take from files, handed in by the driver. Ordering and placement
// policies never open files: their factories ask this interface for the data an option
// names (the Gittins GPU-time history, the model profiles), and the driver's implementation
// (engine/file_data_source.h) reads and caches it. Tests hand in data from memory.
// Implementations must be safe to call from several threads (`compare` builds its runs in
// parallel).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/model_catalog.h"

namespace tiresias {

class DataSource {
 public:
  virtual ~DataSource() = default;
  // Past jobs' GPU-times (GPU-ms), e.g. the public simulator's yarn-gput*.csv.
  virtual StatusOr<std::shared_ptr<const std::vector<Service>>> GpuTimeHistory(
      const std::string& path) const = 0;
  // Model profiles (tensor sizes), e.g. ../shared/profiles/tensor_sizes.csv.
  virtual StatusOr<std::shared_ptr<const ModelCatalog>> ModelProfiles(
      const std::string& path) const = 0;
};

}  // namespace tiresias
