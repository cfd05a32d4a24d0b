// Multi-level queues shared by dlas and gittins: K queues with thresholds in GPU-time,
// demotion the moment a running job's service crosses its queue's threshold, and
// PROMOTEKNOB starvation promotion back to Q1. Pure configuration; acts on a Job's fields.
//
// A job is in Qi while T(i-1) <= s < Ti, where s is its service since it last entered Q1
// (its attained service, unless it was promoted). A waiting job below Q1 that has waited
// w since it last ran, with s of service since it last entered Q1, returns to Q1 when
// w >= knob x s (w in seconds, s in GPU-seconds, as algorithms.md defines); s restarts at 0.
//
// Thresholds that adapt (threshold_quantiles=Q1,...): Ti is the Qi-quantile of a GPU-time
// history (the policy's `history` file, and with online=true every completed job, merged every
// `history_batch`), so the queues follow the service jobs are observed to attain. When they
// move, every job's queue is re-derived from its service in its climb (Rebucket), in both
// directions, and the core re-arms the timers.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/options.h"
#include "common/status.h"
#include "core/job.h"
#include "policy/gittins_index.h"

namespace tiresias {

// The shipped defaults, chosen by a sweep over the Philly trace (README, "How the defaults
// were chosen"): dlas with 6 queues, thresholds geometric from 1000 GPU-s to 2,000,000 GPU-s
// (ratio 6.69) and PROMOTEKNOB 8 (the paper's operators' value); gittins with 2 queues at
// 7200 GPU-s and no promotion. dlas with queues=2 and no thresholds keeps the paper's 3600.
inline constexpr std::array<double, 5> kDlasDefaultThresholds = {1000, 6687, 44721, 299070,
                                                                 2000000};
inline constexpr double kDlasDefaultKnob = 8;
inline constexpr std::array<double, 1> kGittinsDefaultThresholds = {7200};
inline constexpr double kGittinsDefaultKnob = 0;
inline constexpr double kPaperTwoQueueThreshold = 3600;

class QueueDiscipline {
 public:
  // thresholds in GPU-ms, strictly increasing; knob 0 disables promotion.
  QueueDiscipline(std::vector<Service> thresholds, double knob)
      : thresholds_(std::move(thresholds)), knob_(knob) {}
  // Reads queues, thresholds (GPU-seconds) or threshold_quantiles, and promote_knob. Without
  // thresholds: `defaults` (the policy's), or with queues=K: none for K=1, the defaults when K
  // is their count + 1, else 3600 for K=2 (the paper's). With quantiles the thresholds are
  // placeholders until FollowHistory.
  // A history that did not load, as the option that named it ("policy dlas: option history:
  // x.csv: cannot open": the file's error named no option; found by a tester).
  static Status HistoryError(const std::string& owner, const Status& s);
  static StatusOr<QueueDiscipline> FromOptions(const std::string& owner, const OptionValues& v,
                                               std::span<const double> defaults);
  static std::vector<OptionSpec> Options(std::span<const double> defaults, double knob);
  // The history options that dlas (for threshold_quantiles) and gittins share: history,
  // online, history_batch.
  static std::vector<OptionSpec> HistoryOptions();

  // Quantiles the thresholds follow; empty = fixed thresholds.
  const std::vector<double>& quantiles() const { return quantiles_; }
  bool adaptive() const { return !quantiles_.empty(); }
  // Thresholds at quantiles() of `history`, made strictly increasing (each at least 1 GPU-ms
  // above the one before it): a history that grows online may make two quantiles equal.
  void FollowHistory(const GittinsIndex& history);
  // Whether quantiles() of the history a run starts from (read from `path`) give thresholds
  // a user could give: at least 0.001 GPU-s and strictly increasing. An error names the
  // history, the quantiles and their values: an all-zero history gave thresholds of 1 and 2
  // GPU-ms, an all-equal one thresholds 1 ms apart (found by a tester).
  Status CheckHistory(const std::string& owner, const GittinsIndex& history,
                      const std::string& path) const;
  const std::vector<Service>& thresholds() const { return thresholds_; }
  // Re-derives the job's queue from its service in its climb under the current thresholds;
  // true if it moved.
  bool Rebucket(Job& j, Time now) const;

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
  std::vector<double> quantiles_;
};

}  // namespace tiresias
