// The per-attempt exit and pid files: how the supervisor shim tells the daemon how a job ended,
// even when the daemon was down at the time. One line, "exit N" or "signal N", written atomically
// (tmp + rename) so a reader never sees a partial file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "common/status.h"

namespace tiresias {

struct ExitRecord {
  int exit_code = -1;  // >= 0 when the command exited normally
  int signal = 0;      // > 0 when a signal killed it
};

// `<job_dir>/attempt-<attempt>.exit`
std::string ExitFilePath(const std::string& job_dir, int attempt);

Status WriteExitFile(const std::string& path, const ExitRecord& rec);

// `<job_dir>/attempt-<attempt>.pid`: "pid start_ticks", written by the shim as it starts, so
// a daemon that died between launching an attempt and recording it can still find it.
std::string PidFilePath(const std::string& job_dir, int attempt);
Status WritePidFile(const std::string& path, int pid, int64_t start_ticks);
std::optional<std::pair<int, int64_t>> ReadPidFile(const std::string& path);

// Empty if the file is missing or malformed.
std::optional<ExitRecord> ReadExitRecord(const std::string& path);

}  // namespace tiresias
