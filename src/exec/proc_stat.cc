// Parses /proc/<pid>/stat (see proc_stat.h).
#include "exec/proc_stat.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>
#include <string>

namespace tiresias {

namespace {

// The stat of `pid`; on failure `err` is the errno of the open (0: unreadable or malformed).
std::optional<ProcStat> ReadStat(int pid, int& err) {
  err = 0;
  if (pid <= 0) {
    err = ESRCH;
    return std::nullopt;
  }
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err = errno;
    return std::nullopt;
  }
  std::string text;
  std::array<char, 1024> buf;
  for (;;) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n > 0) {
      text.append(buf.data(), static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fd);
  // The command name (field 2) is in parentheses and may itself hold spaces or ')'.
  size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(close_paren + 1));
  ProcStat st;
  std::string field;
  // Fields after the name start at field 3 (state).
  for (int i = 3; i <= 22 && in >> field; ++i) {
    const char* end = field.data() + field.size();
    if (i == 3) st.state = field.empty() ? '?' : field[0];
    if (i == 5 && std::from_chars(field.data(), end, st.pgrp).ec != std::errc()) break;
    if (i == 22) {
      if (std::from_chars(field.data(), end, st.start_ticks).ec != std::errc()) break;
      return st;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ProcStat> ReadProcStat(int pid) {
  int err;
  return ReadStat(pid, err);
}

Liveness Probe(int pid, int64_t start_ticks) {
  int err;
  auto st = ReadStat(pid, err);
  if (!st) return err == ENOENT || err == ESRCH ? Liveness::kGone : Liveness::kUnknown;
  if (st->start_ticks != start_ticks) return Liveness::kGone;
  return st->state == 'Z' || st->state == 'X' ? Liveness::kZombie : Liveness::kAlive;
}

std::vector<int> LiveGroupMembers(int pgid) {
  std::vector<int> out;
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    int pid = 0;
    const char* end = e->d_name + std::strlen(e->d_name);
    if (std::from_chars(e->d_name, end, pid).ptr != end || pid <= 0) continue;
    auto st = ReadProcStat(pid);
    if (st && st->pgrp == pgid && st->state != 'Z' && st->state != 'X') out.push_back(pid);
  }
  closedir(d);
  return out;
}

bool ProcessAlive(int pid, int64_t start_ticks) {
  auto st = ReadProcStat(pid);
  return st && st->start_ticks == start_ticks && st->state != 'Z' && st->state != 'X';
}

}  // namespace tiresias
