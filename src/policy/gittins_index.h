// The Gittins index over an empirical distribution of job GPU-time S:
//   G(a, D) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]
// computed on the samples: among samples greater than a, the fraction ending within D,
// divided by the mean of min(s - a, D). No sample above a gives index 0 (lowest).
// Samples are kept sorted with prefix sums, so an index costs two binary searches, or, with a
// hint (where the last index of the same job fell), two comparisons: a running job is re-keyed
// at every pass and its service moves past few samples between two passes.
// Online updates are buffered and merged every `batch` samples. The same samples give
// queue thresholds as quantiles (QueueDiscipline's threshold_quantiles). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/time.h"

namespace tiresias {

class GittinsIndex {
 public:
  explicit GittinsIndex(std::vector<Service> samples, size_t batch = 100);
  // Index per GPU-second of quantum (scale is irrelevant to ordering).
  double Index(Service attained, Service quantum) const;
  // The same value, bit for bit, starting the two searches at `*hint` (any value is fine; the
  // searches' results are stored back for the next call).
  double Index(Service attained, Service quantum, uint64_t* hint) const;
  // The smallest service above `attained` at which the index may drop: the next sample.
  // Until the service reaches it, with the quantum fixed or with service + quantum fixed (a
  // queue's upper threshold), the index only grows: the samples within the quantum stay (a
  // sample the quantum's end passes joins them: one more ends within, expected GPU-ms
  // unchanged) and each one's expected remainder shrinks. At the sample, one that counted
  // as ending within (with nearly nothing left) stops counting. nullopt: no sample is left
  // above the service (index 0 from then on).
  // `hint`: as Index's (its search for the service starts there; not updated).
  std::optional<Service> NextBreak(Service attained, uint64_t hint = 0) const;
  // True when the sample was merged (every `batch` samples), changing the index.
  bool Add(Service sample);
  size_t size() const { return sorted_.size(); }
  // The q-quantile (0 <= q <= 1) of the merged samples: the smallest sample with at least a
  // fraction q of the samples at or below it (nearest rank); 0 without samples.
  Service Quantile(double q) const;

 private:
  void Rebuild();
  // upper_bound(x) over sorted_, trying `guess` and the position after it first.
  size_t UpperBound(Service x, size_t guess) const;
  double IndexAt(Service a, Service quantum, size_t i, size_t j) const;
  std::vector<Service> sorted_;
  // prefix_[i] = sum of sorted_[0..i), in double: exact below 2^53 GPU-ms, and a long history
  // of large samples cannot overflow it.
  std::vector<double> prefix_;
  std::vector<Service> pending_;
  size_t batch_;
};

}  // namespace tiresias
