// Shared by the libFuzzer targets in fuzz/: the input as a file that the path-taking readers
// can open (an in-memory file, /dev/fd/N), and FUZZ_CHECK, which turns a broken property into
// a crash that libFuzzer reports and saves. Not part of the library.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace tiresias::fuzz {

// One in-memory file (memfd) reused for every input: Put() replaces its content and returns
// a path that opens it. Readers see a regular file of the input's size.
class InputFile {
 public:
  InputFile() : fd_(memfd_create("tiresias-fuzz", 0)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
  }
  std::string Put(std::string_view data) {
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, data.data(), data.size(), 0) != static_cast<ssize_t>(data.size())) {
      std::perror("fuzz input file");
      std::abort();
    }
    return "/dev/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace tiresias::fuzz

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)
