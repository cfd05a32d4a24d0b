// The Gittins index over an empirical distribution of job GPU-time S:
//   G(a, D) = P(S - a <= D | S > a) / E[min(S - a, D) | S > a]
// computed on the samples: among samples greater than a, the fraction ending within D,
// divided by the mean of min(s - a, D). No sample above a gives index 0 (lowest).
// Samples are kept sorted with prefix sums, so an index costs two binary searches.
// Online updates are buffered and merged every `batch` samples. The same samples give
// queue thresholds as quantiles (QueueDiscipline's threshold_quantiles). Not thread-safe.
#pragma once

#include <cstddef>
#include <vector>

#include "common/time.h"

namespace tiresias {

class GittinsIndex {
 public:
  explicit GittinsIndex(std::vector<Service> samples, size_t batch = 100);
  // Index per GPU-second of quantum (scale is irrelevant to ordering).
  double Index(Service attained, Service quantum) const;
  // True when the sample was merged (every `batch` samples), changing the index.
  bool Add(Service sample);
  size_t size() const { return sorted_.size(); }
  // The q-quantile (0 <= q <= 1) of the merged samples: the smallest sample with at least a
  // fraction q of the samples at or below it (nearest rank); 0 without samples.
  Service Quantile(double q) const;

 private:
  void Rebuild();
  std::vector<Service> sorted_;
  // prefix_[i] = sum of sorted_[0..i), in double: exact below 2^53 GPU-ms, and a long history
  // of large samples cannot overflow it.
  std::vector<double> prefix_;
  std::vector<Service> pending_;
  size_t batch_;
};

}  // namespace tiresias
