// Multi-level queues shared by dlas and gittins: demotion and starvation promotion.
#include "policy/queue_discipline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/topology.h"

namespace tiresias {

std::vector<OptionSpec> QueueDiscipline::Options() {
  using T = OptionSpec::Type;
  return {
      {"queues", T::kInt, "", "number of queues K (default 2, or thresholds + 1)", {}, 1, 100},
      {"thresholds",
       T::kDoubleList,
       "",
       "K-1 increasing queue thresholds in GPU-seconds "
       "(default 3600)",
       {},
       0.001,
       kMaxGpuSeconds},
      {"promote_knob",
       T::kDouble,
       "0",
       "PROMOTEKNOB: promote to Q1 when waiting >= knob x "
       "service since entering Q1; 0 disables",
       {},
       0,
       1e6},
  };
}

StatusOr<QueueDiscipline> QueueDiscipline::FromOptions(const std::string& owner,
                                                       const OptionValues& v) {
  std::vector<double> th = v.has("thresholds") ? v.DoubleList("thresholds") : std::vector<double>{};
  if (!v.has("thresholds")) {
    int64_t k = v.has("queues") ? v.Int("queues") : 2;
    if (k < 1)
      return InvalidArgument(fmt::format("{}: queues must be at least 1, got {}", owner, k));
    if (k == 1) {
      th = {};
    } else if (k == 2) {
      th = {3600};
    } else {
      return InvalidArgument(
          fmt::format("{}: queues={} needs thresholds=T1,...,T{} (GPU-seconds)", owner, k, k - 1));
    }
  } else if (v.has("queues") && v.Int("queues") != static_cast<int64_t>(th.size()) + 1) {
    return InvalidArgument(fmt::format("{}: queues={} needs {} thresholds, got {}", owner,
                                       v.Int("queues"), v.Int("queues") - 1, th.size()));
  }
  std::vector<Service> ms;
  for (size_t i = 0; i < th.size(); ++i) {
    Service t = static_cast<Service>(std::llround(th[i] * kMsPerSecond));  // GPU-ms
    if (t < 1 || (i > 0 && t <= ms.back())) {
      return InvalidArgument(
          fmt::format("{}: thresholds must be at least 0.001 GPU-s and strictly increasing, got {}",
                      owner, v.Str("thresholds")));
    }
    ms.push_back(t);
  }
  double knob = v.Double("promote_knob");
  if (knob < 0) return InvalidArgument(fmt::format("{}: promote_knob must be >= 0", owner));
  return QueueDiscipline(std::move(ms), knob);
}

void QueueDiscipline::Enter(Job& j) const {
  j.queue = 0;
  j.q_base = 0;
}

std::optional<Time> QueueDiscipline::PromotionAt(const Job& j) const {
  if (knob_ <= 0 || j.queue == 0) return std::nullopt;
  double wait = std::ceil(knob_ * static_cast<double>(j.QueueServiceAt(j.last_stop)));
  // A wait beyond the end of time is no promotion (and no overflow converting it).
  if (!(wait < static_cast<double>(kNever - j.last_stop))) return std::nullopt;
  return j.last_stop + static_cast<Time>(wait);
}

std::optional<Time> QueueDiscipline::NextTransition(const Job& j, Time now) const {
  if (j.running()) {
    auto up = upper(j.queue);
    if (!up) return std::nullopt;
    Service need = *up - j.QueueServiceAt(now);
    return std::max(now, j.progress_start) + CeilDiv(std::max<Service>(need, 0), j.gpus());
  }
  if (j.state == JobState::kPending) return PromotionAt(j);
  return std::nullopt;
}

bool QueueDiscipline::Apply(Job& j, Time now) const {
  bool changed = false;
  if (j.running()) {
    // One crossing per threshold; a long gap between events may cross several.
    while (auto up = upper(j.queue)) {
      if (j.QueueServiceAt(now) < *up) break;
      ++j.queue;
      changed = true;
    }
  } else if (auto at = PromotionAt(j); at && *at <= now) {
    j.queue = 0;
    j.q_base = j.AttainedAt(now);
    ++j.promotions;
    changed = true;
  }
  return changed;
}

std::string QueueDiscipline::Describe(const Job& j, Time now) const {
  std::string s = fmt::format("queue {} of {}, {:.0f} GPU-s of service", j.queue + 1, num_queues(),
                              ToSeconds(j.AttainedAt(now)));
  if (auto up = upper(j.queue)) {
    s += fmt::format(" ({:.0f} of {:.0f} GPU-s in this queue's climb)",
                     ToSeconds(j.QueueServiceAt(now)), ToSeconds(*up));
  }
  return s;
}

}  // namespace tiresias
