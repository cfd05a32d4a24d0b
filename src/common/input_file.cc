// OpenInput: see input_file.h.
#include "common/input_file.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace tiresias {

StatusOr<std::ifstream> OpenInput(const std::string& path, std::string_view what) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode)) {
    return InvalidArgument(fmt::format("{}: is a directory, expected {}", path, what));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  return in;
}

}  // namespace tiresias
