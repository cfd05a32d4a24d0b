// Multi-level queues shared by dlas and gittins: K queues with thresholds in GPU-time,
// demotion the moment a running job's service crosses its queue's threshold, and
// PROMOTEKNOB starvation promotion back to Q1. Pure configuration; acts on a Job's fields.
//
// A job is in Qi while T(i-1) <= s < Ti, where s is its service since it last entered Q1
// (its attained service, unless it was promoted). A waiting job below Q1 that has waited
// w since it last ran, with s of service since it last entered Q1, returns to Q1 when
// w >= knob x s (w in seconds, s in GPU-seconds, as algorithms.md defines); s restarts at 0.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/options.h"
#include "common/status.h"
#include "core/job.h"

namespace tiresias {

class QueueDiscipline {
 public:
  // thresholds in GPU-ms, strictly increasing; knob 0 disables promotion.
  QueueDiscipline(std::vector<Service> thresholds, double knob)
      : thresholds_(std::move(thresholds)), knob_(knob) {}
  // Reads queues, thresholds (GPU-seconds) and promote_knob.
  static StatusOr<QueueDiscipline> FromOptions(const std::string& owner, const OptionValues& v);
  static std::vector<OptionSpec> Options();

  int num_queues() const { return static_cast<int>(thresholds_.size()) + 1; }
  // Upper threshold of queue q, or nullopt for the last queue.
  std::optional<Service> upper(int q) const {
    if (q >= static_cast<int>(thresholds_.size())) return std::nullopt;
    return thresholds_[q];
  }
  double knob() const { return knob_; }

  void Enter(Job& j) const;
  std::optional<Time> NextTransition(const Job& j, Time now) const;
  bool Apply(Job& j, Time now) const;
  std::string Describe(const Job& j, Time now) const;

 private:
  std::optional<Time> PromotionAt(const Job& j) const;
  std::vector<Service> thresholds_;
  double knob_;
};

}  // namespace tiresias
