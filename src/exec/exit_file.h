// The per-attempt exit and pid files: how the supervisor shim tells the daemon how a job ended,
// even when the daemon was down at the time. One line, "exit N" or "signal N", and a second
// "reason TEXT" when the command could not be started (why), written atomically (tmp + rename)
// so a reader never sees a partial file. And the job's done file, by which a job
// tells the daemon its work is complete (TIRESIAS_DONE_FILE).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "common/status.h"

namespace tiresias {

struct ExitRecord {
  int exit_code = -1;  // >= 0 when the command exited normally
  int signal = 0;      // > 0 when a signal killed it
  // Why the command never ran ("cannot open /x/out.log for the job's stdout: Permission
  // denied"), one line; "" when it ran.
  std::string reason;
};

// `<job_dir>/attempt-<attempt>.exit`
std::string ExitFilePath(const std::string& job_dir, int attempt);

// (A reason is cut at kMaxExitReason bytes, its line breaks made spaces.)
inline constexpr size_t kMaxExitReason = 500;
Status WriteExitFile(const std::string& path, const ExitRecord& rec);

// `<job_dir>/attempt-<attempt>.pid`: "pid start_ticks", written by the shim as it starts, so
// a daemon that died between launching an attempt and recording it can still find it.
std::string PidFilePath(const std::string& job_dir, int attempt);
Status WritePidFile(const std::string& path, int pid, int64_t start_ticks);
std::optional<std::pair<int, int64_t>> ReadPidFile(const std::string& path);

// Empty if the file is missing or malformed.
std::optional<ExitRecord> ReadExitRecord(const std::string& path);

// `<job_dir>/checkpoint/.tiresias-done`: TIRESIAS_DONE_FILE. The job creates it (any content)
// once its work is complete; an attempt that exits 0 with it present is the job's end, also
// when it exits during a preemption's grace period. In the checkpoint directory because that
// is the one place under the job directory the job may write (when serve runs as root).
std::string DoneFilePath(const std::string& job_dir);
// Whether the job left its done file (anything at that name, not followed if a link).
bool DoneFileExists(const std::string& job_dir);
// Before each launch: a done file left by an earlier attempt that did not end the job (it
// failed, or was killed) does not speak for the next one. Ok when there was none.
Status RemoveDoneFile(const std::string& job_dir);

// `<job_dir>/checkpoint/.tiresias-checkpoint`: TIRESIAS_CHECKPOINT_FILE. The job touches it
// (any content) each time a checkpoint is complete; its modification time says when. serve
// polls it and tells the core (Scheduler::Checkpointed, journaled as a checkpoint event).
std::string CheckpointMarkerPath(const std::string& job_dir);
// The marker's modification time in Unix ms; empty when there is none (not followed if a link).
std::optional<int64_t> CheckpointMarkerTime(const std::string& job_dir);

}  // namespace tiresias
