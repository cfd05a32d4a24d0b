// Reading /proc/<pid>/stat: a process's state, process group and start time. The start time
// (field 22, clock ticks since boot) never changes for a process, so (pid, start_ticks) names
// one process even after its pid is reused. Linux only.
//
// "Gone" needs evidence: a /proc entry that does not exist, or one of another start time. A
// read that fails for another reason (out of descriptors, a permission) proves nothing, and
// callers that end or signal jobs must treat it as "unknown", never as "gone".
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tiresias {

struct ProcStat {
  char state = '?';         // R, S, D, Z (zombie), X (dead), T, ...
  int pgrp = 0;             // process group id (field 5)
  int64_t start_ticks = 0;  // field 22
};

// Empty if the process does not exist (or /proc cannot be read).
std::optional<ProcStat> ReadProcStat(int pid);

// True if `pid` exists, started at `start_ticks` and is not a zombie.
bool ProcessAlive(int pid, int64_t start_ticks);

enum class Liveness {
  kAlive,    // exists, same start time, not a zombie
  kZombie,   // exited, not yet reaped by its parent (same start time)
  kGone,     // no such process, or the pid now names another process
  kUnknown,  // /proc could not be read for another reason: no conclusion
};
Liveness Probe(int pid, int64_t start_ticks);

// Live (non-zombie) processes whose process group is `pgid`, from a scan of /proc.
std::vector<int> LiveGroupMembers(int pgid);

}  // namespace tiresias
