// The files that policies read in tests (the Gittins history, model profiles), read once
// per test binary through the drivers' FileDataSource.
#pragma once

#include "engine/file_data_source.h"

namespace tiresias {

inline const DataSource& TestFiles() {
  static const FileDataSource files;
  return files;
}

}  // namespace tiresias
