// Multi-level queues shared by dlas and gittins: demotion and starvation promotion.
#include "policy/queue_discipline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/strings.h"
#include "core/topology.h"

namespace tiresias {

std::vector<OptionSpec> QueueDiscipline::Options(std::span<const double> defaults, double knob) {
  using T = OptionSpec::Type;
  std::vector<std::string> d;
  for (double t : defaults) d.push_back(fmt::format("{}", t));
  return {
      {"queues",
       T::kInt,
       "",
       fmt::format("number of queues K (default {}, or thresholds + 1)", defaults.size() + 1),
       {},
       1,
       100},
      {"thresholds",
       T::kDoubleList,
       "",
       fmt::format("K-1 increasing queue thresholds in GPU-seconds (default {}{})", Join(d, ","),
                   defaults.size() == 1
                       ? std::string()
                       : fmt::format("; queues=2 alone: {}", kPaperTwoQueueThreshold)),
       {},
       0.001,
       kMaxGpuSeconds},
      {"promote_knob",
       T::kDouble,
       fmt::format("{}", knob),
       "PROMOTEKNOB: promote to Q1 when waiting >= knob x "
       "service since entering Q1; 0 disables",
       {},
       0,
       1e6},
      {"threshold_quantiles",
       T::kDoubleList,
       "",
       "instead of thresholds: K-1 increasing quantiles in (0, 1) of the GPU-time history "
       "(history=; with online=true it learns from completed jobs and the thresholds move)",
       {},
       0,
       1},
  };
}

std::vector<OptionSpec> QueueDiscipline::HistoryOptions() {
  using T = OptionSpec::Type;
  return {
      {"history",
       T::kPath,
       std::string(TIRESIAS_SHARED_DIR) + "/traces/tiresias/yarn-gput1000.csv",
       "CSV of past job GPU-times (column duration, GPU-seconds)",
       {}},
      {"online",
       T::kChoice,
       "false",
       "add each completed job's GPU-time to the history",
       {"true", "false"}},
      {"history_batch",
       T::kInt,
       "100",
       "online: merge new samples into the history every N completions",
       {},
       1,
       1e9,
       {"online=true"}},
  };
}

void QueueDiscipline::FollowHistory(const GittinsIndex& history) {
  std::vector<Service> t;
  for (double q : quantiles_) {
    Service v = std::max<Service>(history.Quantile(q), 1);
    if (!t.empty()) v = std::max(v, t.back() + 1);
    t.push_back(v);
  }
  thresholds_ = std::move(t);
}

Status QueueDiscipline::CheckHistory(const std::string& owner, const GittinsIndex& history,
                                     const std::string& path) const {
  for (size_t i = 0; i < quantiles_.size(); ++i) {
    const Service v = history.Quantile(quantiles_[i]);
    if (v < 1) {
      return InvalidArgument(fmt::format(
          "{}: threshold_quantiles: the {}-quantile of the history {} is {} GPU-s, below the "
          "0.001 GPU-s a threshold must be at least; give higher quantiles or a history with "
          "more non-zero GPU-times",
          owner, quantiles_[i], path, ToSeconds(v)));
    }
    if (i > 0 && v <= history.Quantile(quantiles_[i - 1])) {
      return InvalidArgument(fmt::format(
          "{}: threshold_quantiles: the {}- and {}-quantiles of the history {} are both {} "
          "GPU-s, so queue {} would be empty (thresholds must be strictly increasing); give "
          "quantiles further apart, fewer queues, or a history with more distinct GPU-times",
          owner, quantiles_[i - 1], quantiles_[i], path, ToSeconds(v), i + 1));
    }
  }
  return Status::Ok();
}

bool QueueDiscipline::Rebucket(Job& j, Time now) const {
  const Service s = j.QueueServiceAt(now);
  const int q = static_cast<int>(std::upper_bound(thresholds_.begin(), thresholds_.end(), s) -
                                 thresholds_.begin());
  if (q == j.queue) return false;
  j.queue = q;
  return true;
}

Status QueueDiscipline::HistoryError(const std::string& owner, const Status& s) {
  return Status(s.code(), fmt::format("{}: option history: {}", owner, s.message()));
}

StatusOr<QueueDiscipline> QueueDiscipline::FromOptions(const std::string& owner,
                                                       const OptionValues& v,
                                                       std::span<const double> defaults) {
  if (v.has("threshold_quantiles")) {
    if (v.has("thresholds")) {
      return InvalidArgument(
          fmt::format("{}: give thresholds or threshold_quantiles, not both", owner));
    }
    std::vector<double> q = v.DoubleList("threshold_quantiles");
    for (size_t i = 0; i < q.size(); ++i) {
      if (!(q[i] > 0 && q[i] < 1) || (i > 0 && q[i] <= q[i - 1])) {
        return InvalidArgument(
            fmt::format("{}: threshold_quantiles must be strictly increasing and in (0, 1), got {}",
                        owner, v.Str("threshold_quantiles")));
      }
    }
    if (q.empty()) return InvalidArgument(fmt::format("{}: threshold_quantiles is empty", owner));
    if (v.has("queues") && v.Int("queues") != static_cast<int64_t>(q.size()) + 1) {
      return InvalidArgument(fmt::format("{}: queues={} needs {} threshold_quantiles, got {}",
                                         owner, v.Int("queues"), v.Int("queues") - 1, q.size()));
    }
    double knob = v.Double("promote_knob");
    if (knob < 0) return InvalidArgument(fmt::format("{}: promote_knob must be >= 0", owner));
    std::vector<Service> placeholder;
    for (size_t i = 0; i < q.size(); ++i) placeholder.push_back(static_cast<Service>(i) + 1);
    QueueDiscipline d(std::move(placeholder), knob);
    d.quantiles_ = std::move(q);
    return d;
  }
  std::vector<double> th = v.has("thresholds") ? v.DoubleList("thresholds") : std::vector<double>{};
  if (!v.has("thresholds")) {
    const int64_t k = v.has("queues") ? v.Int("queues") : static_cast<int64_t>(defaults.size()) + 1;
    if (k < 1)
      return InvalidArgument(fmt::format("{}: queues must be at least 1, got {}", owner, k));
    if (k == 1) {
      th = {};
    } else if (k == static_cast<int64_t>(defaults.size()) + 1) {
      th.assign(defaults.begin(), defaults.end());
    } else if (k == 2) {
      th = {kPaperTwoQueueThreshold};
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
    return j.WhenAttains(*up + j.q_base, now);
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
