// Reading /proc/<pid>/stat: a process's state, process group and start time. The start time
// (field 22, clock ticks since boot) never changes for a process, so (pid, start_ticks) names
// one process even after its pid is reused. Linux only.
#pragma once

#include <cstdint>
#include <optional>

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

}  // namespace tiresias
