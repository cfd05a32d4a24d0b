// One journal input replayed into a core: the daemon's recovery (LiveScheduler::Replay), the
// `whatif` command and the tests read a journal the same way. The core is deterministic, so
// the same inputs in the same order rebuild the same state.
#pragma once

#include <functional>

#include "core/scheduler.h"
#include "store/job_record.h"
#include "store/store.h"

namespace tiresias {

// The core's view of a job row.
JobSpec SpecOfRecord(const JobRecord& r);

// Applies journal row `row` (an input: tick, submit, finish, cancel, launch, drain, interrupt,
// eligible, requeue, capacity) to `core`; `find` gives a job's row. A malformed row is an
// IoError naming its sequence number. A refusal by the core is what it said then (e.g. a
// submission it rejected): returned in `refused` (if given), not an error.
Status ReplayInput(Scheduler& core, const EventRow& row,
                   const std::function<const JobRecord*(JobId)>& find, Status* refused = nullptr);

}  // namespace tiresias
