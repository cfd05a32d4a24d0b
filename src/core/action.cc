// Names of what the core asks of its driver (see action.h).
#include "core/action.h"

#include <fmt/format.h>

namespace tiresias {

const char* ToString(Action::Kind k) {
  return k == Action::Kind::kStart ? "start" : "preempt";
}

std::string Action::reason() const {
  if (!detail.empty()) return detail;
  if (kind == Kind::kPreempt) return "a higher-priority job needs its GPUs";
  return restore ? fmt::format("resumes; restore takes {} ms", restore) : "starts";
}

std::string Brief(const std::vector<Action>& actions) {
  std::string s;
  for (const Action& a : actions) {
    if (!s.empty()) s += ", ";
    s += std::string(ToString(a.kind)) + " " + std::to_string(a.job.value());
  }
  return s;
}

}  // namespace tiresias
