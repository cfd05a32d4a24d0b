// The executor interface's shared parts: how an exit is worded.
#include "core/executor.h"

#include <cstring>

namespace tiresias {

std::string ExitInfo::Describe() const {
  std::string out;
  if (!known()) {
    out = reason.empty() ? "unknown (no exit record)" : "";
  } else if (signal <= 0) {
    out = "exit " + std::to_string(exit_code);
  } else {
    const char* abbrev = sigabbrev_np(signal);
    std::string name = abbrev ? std::string(" (SIG") + abbrev + ")" : "";
    out = "killed by signal " + std::to_string(signal) + name;
  }
  if (!reason.empty()) out += (out.empty() ? "" : ": ") + reason;
  return out;
}

}  // namespace tiresias
