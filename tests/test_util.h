// Helpers for end-to-end tests that run the built `tiresias` binary.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tiresias::testing {

// `s` without leading and trailing whitespace.
inline std::string Trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

struct CmdResult {
  int rc;
  std::string out;  // stdout and stderr together
};

// Runs a shell command line; its stdout and stderr together, and its exit status.
inline CmdResult RunCommandLine(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = pclose(p);
  return {WEXITSTATUS(status), out};
}

// Runs `tiresias ARGS` through the shell.
inline CmdResult RunTiresias(const std::string& args) {
  return RunCommandLine(std::string(TIRESIAS_BINARY) + " " + args);
}

// Removes a test's directory after a real serve: jobs keep running when serve stops (by
// design), so their supervisors may still create and rename files in it (an exit record)
// while it is being removed. Retries a few times; never throws.
inline void RemoveServeDir(const std::filesystem::path& dir) {
  for (int tries = 0; tries < 20; ++tries) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!ec && !std::filesystem::exists(dir, ec)) return;
    usleep(50'000);
  }
}

// A fresh, empty directory under the system temp dir.
inline std::filesystem::path FreshDir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("tiresias_test_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// This process's scratch root, removed when the test binary exits.
inline const std::filesystem::path& ScratchRoot() {
  static struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("tiresias_test_" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } root;
  return root.path;
}

// A fresh, empty directory under ScratchRoot().
inline std::filesystem::path ScratchDir(const std::string& name) {
  std::filesystem::path d = ScratchRoot() / name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// The whole file ("" when it cannot be read).
inline std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tiresias::testing
