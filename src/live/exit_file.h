// The per-attempt exit file: how the supervisor shim tells the daemon how a job ended, even
// when the daemon was down at the time. One line, "exit N" or "signal N", written atomically
// (tmp + rename) so a reader never sees a partial file.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"

namespace tiresias {

struct ExitRecord {
  int exit_code = -1;  // >= 0 when the command exited normally
  int signal = 0;      // > 0 when a signal killed it
};

// `<job_dir>/attempt-<attempt>.exit`
std::string ExitFilePath(const std::string& job_dir, int attempt);

Status WriteExitFile(const std::string& path, const ExitRecord& rec);

// Empty if the file is missing or malformed.
std::optional<ExitRecord> ReadExitRecord(const std::string& path);

}  // namespace tiresias
