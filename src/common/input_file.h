// Opening a file a user named as input (a trace, a converter's side file, a tenants file):
// libstdc++'s std::ifstream opens a directory and then throws from its first read (an
// uncaught std::ios_base::failure ended `trace convert` with an abort), so a directory is
// refused first, with the path and what was expected.
#pragma once

#include <fstream>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tiresias {

// `path` opened for reading (binary); "PATH: is a directory, expected WHAT" or "PATH: cannot
// open: REASON" otherwise.
StatusOr<std::ifstream> OpenInput(const std::string& path, std::string_view what);

}  // namespace tiresias
