// The executor interface's shared parts: how an exit is worded.
#include "core/executor.h"

#include <cstring>

namespace tiresias {

std::string ExitInfo::Describe() const {
  if (!known()) return "unknown (no exit record)";
  if (signal <= 0) return "exit " + std::to_string(exit_code);
  const char* abbrev = sigabbrev_np(signal);
  std::string name = abbrev ? std::string(" (SIG") + abbrev + ")" : "";
  return "killed by signal " + std::to_string(signal) + name;
}

}  // namespace tiresias
