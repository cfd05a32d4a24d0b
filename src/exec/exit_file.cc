// Writes and reads the per-attempt exit file (see exit_file.h).
#include "exec/exit_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/atomic_file.h"

namespace tiresias {

std::string ExitFilePath(const std::string& job_dir, int attempt) {
  return job_dir + "/attempt-" + std::to_string(attempt) + ".exit";
}

std::string PidFilePath(const std::string& job_dir, int attempt) {
  return job_dir + "/attempt-" + std::to_string(attempt) + ".pid";
}

Status WriteExitFile(const std::string& path, const ExitRecord& rec) {
  std::string text = rec.signal > 0 ? "signal " + std::to_string(rec.signal) + "\n"
                                    : "exit " + std::to_string(rec.exit_code) + "\n";
  if (!rec.reason.empty()) {
    std::string line = rec.reason.substr(0, kMaxExitReason);
    std::replace_if(
        line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
    text += "reason " + line + "\n";
  }
  return WriteFileAtomically(path, text);
}

Status WritePidFile(const std::string& path, int pid, int64_t start_ticks) {
  return WriteFileAtomically(path, std::to_string(pid) + " " + std::to_string(start_ticks) + "\n");
}

std::optional<std::pair<int, int64_t>> ReadPidFile(const std::string& path) {
  std::ifstream in(path);
  long long pid = 0, ticks = 0;
  if (!(in >> pid >> ticks) || pid <= 0 || ticks <= 0) return std::nullopt;
  return std::make_pair(static_cast<int>(pid), static_cast<int64_t>(ticks));
}

std::optional<ExitRecord> ReadExitRecord(const std::string& path) {
  std::ifstream in(path);
  std::string kind;
  long value = 0;
  if (!(in >> kind >> value) || value < 0 || value > 255) return std::nullopt;
  ExitRecord rec;
  if (kind == "exit") {
    rec.exit_code = static_cast<int>(value);
  } else if (kind == "signal" && value > 0) {
    rec.signal = static_cast<int>(value);
  } else {
    return std::nullopt;
  }
  std::string line;
  std::getline(in, line);  // the rest of the first
  if (std::getline(in, line) && line.starts_with("reason ")) {
    rec.reason = line.substr(7, kMaxExitReason);
  }
  return rec;
}

std::string DoneFilePath(const std::string& job_dir) {
  return job_dir + "/checkpoint/.tiresias-done";
}

bool DoneFileExists(const std::string& job_dir) {
  struct stat st {};
  return lstat(DoneFilePath(job_dir).c_str(), &st) == 0;
}

std::string CheckpointMarkerPath(const std::string& job_dir) {
  return job_dir + "/checkpoint/.tiresias-checkpoint";
}

std::optional<int64_t> CheckpointMarkerTime(const std::string& job_dir) {
  struct stat st {};
  if (lstat(CheckpointMarkerPath(job_dir).c_str(), &st) != 0) return std::nullopt;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1'000'000;
}

Status RemoveDoneFile(const std::string& job_dir) {
  const std::string path = DoneFilePath(job_dir);
  if (unlink(path.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  return IoError(path + ": " + std::strerror(errno));
}

}  // namespace tiresias
