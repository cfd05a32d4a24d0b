// A job as the core sees it: lazy accounting of the current run.
#include "core/job.h"

#include <algorithm>
#include <cmath>

namespace tiresias {

const char* ToString(JobState s) {
  switch (s) {
    case JobState::kPending:
      return "pending";
    case JobState::kRunning:
      return "running";
    case JobState::kFinished:
      return "finished";
    case JobState::kCancelled:
      return "cancelled";
    case JobState::kHeld:
      return "held";
    case JobState::kRejected:
      return "rejected";
  }
  return "?";
}

Duration Job::ExecutedAt(Time now) const {
  if (state != JobState::kRunning) return executed;
  return executed + std::max<Duration>(0, now - progress_start);
}

Duration Job::WorkDoneAt(Time now) const {
  if (state != JobState::kRunning) return work_done;
  Duration ran = std::max<Duration>(0, now - progress_start);
  if (rate == 1.0) return work_done + ran;
  return work_done + static_cast<Duration>(std::floor(static_cast<double>(ran) * rate));
}

Service Job::LossAt(Time now) const {
  return state == JobState::kRunning ? RunLossAt(now) : 0;
}

Service Job::RunLossAt(Time now) const {
  return std::max<Duration>(0, now - std::max(ckpt_at, progress_start)) * spec.gpus;
}

std::optional<Time> Job::ProjectedEnd() const {
  if (!spec.duration) return std::nullopt;
  return ProjectedTimeOfWork(*spec.duration);
}

std::optional<Time> Job::ProjectedTimeOfWork(Duration work) const {
  if (state != JobState::kRunning) return std::nullopt;
  const Duration remaining = std::max<Duration>(0, work - work_done);
  if (rate == 1.0) return progress_start + remaining;
  return progress_start + static_cast<Duration>(std::ceil(static_cast<double>(remaining) / rate));
}

std::optional<Duration> Job::RemainingAt(Time now) const {
  if (!spec.duration) return std::nullopt;
  return std::max<Duration>(0, *spec.duration - WorkDoneAt(now));
}

}  // namespace tiresias
