// What the core asks its driver to do after a scheduling pass, each with a reason.
#pragma once

#include <string>
#include <vector>

#include "common/ids.h"
#include "common/time.h"
#include "core/allocation.h"

namespace tiresias {

struct Action {
  enum class Kind { kStart, kPreempt };
  Kind kind;
  JobId job;
  Allocation alloc;         // kStart: the GPUs to run on; kPreempt: the GPUs it gives back
  Time progress_start = 0;  // kStart: when real progress begins (after restore overhead)
  Duration restore = 0;     // kStart: the restore overhead it pays first
  // What the core says beyond the kind's plain reason (a lender reclaiming from a borrower);
  // empty for most actions, so that the millions of a replay allocate no text.
  std::string detail;
  // "starts", "resumes; restore takes N ms", "a higher-priority job needs its GPUs" or the
  // detail.
  std::string reason() const;
};

const char* ToString(Action::Kind k);
// "start 3, preempt 1": the kinds and jobs, in order (tests and logs).
std::string Brief(const std::vector<Action>& actions);

}  // namespace tiresias
