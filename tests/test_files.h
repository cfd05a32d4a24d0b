// The files that policies read in tests (the Gittins history, model profiles), read once
// per test binary through the drivers' FileDataSource; and a GPU-time history from memory.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/file_data_source.h"

namespace tiresias {

inline const DataSource& TestFiles() {
  static const FileDataSource files;
  return files;
}

// A GPU-time history given in memory (every path reads it), for policies that learn from one;
// no model profiles.
class MemoryHistory : public DataSource {
 public:
  explicit MemoryHistory(std::vector<Service> s)
      : s_(std::make_shared<const std::vector<Service>>(std::move(s))) {}
  StatusOr<std::shared_ptr<const std::vector<Service>>> GpuTimeHistory(
      const std::string&) const override {
    return s_;
  }
  StatusOr<std::shared_ptr<const ModelCatalog>> ModelProfiles(const std::string&) const override {
    return NotFound("no profiles");
  }

 private:
  std::shared_ptr<const std::vector<Service>> s_;
};

}  // namespace tiresias
