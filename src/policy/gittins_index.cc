// The Gittins index over an empirical distribution of job GPU-time.
#include "policy/gittins_index.h"

#include <algorithm>
#include <cmath>

namespace tiresias {

GittinsIndex::GittinsIndex(std::vector<Service> samples, size_t batch)
    : sorted_(std::move(samples)), batch_(std::max<size_t>(batch, 1)) {
  Rebuild();
}

void GittinsIndex::Rebuild() {
  sorted_.insert(sorted_.end(), pending_.begin(), pending_.end());
  pending_.clear();
  std::sort(sorted_.begin(), sorted_.end());
  prefix_.assign(sorted_.size() + 1, 0);
  for (size_t i = 0; i < sorted_.size(); ++i) {
    prefix_[i + 1] = prefix_[i] + static_cast<double>(sorted_[i]);
  }
}

bool GittinsIndex::Add(Service sample) {
  pending_.push_back(sample);
  if (pending_.size() < batch_) return false;
  Rebuild();
  return true;
}

Service GittinsIndex::Quantile(double q) const {
  if (sorted_.empty()) return 0;
  const double n = static_cast<double>(sorted_.size());
  size_t rank = static_cast<size_t>(std::ceil(std::clamp(q, 0.0, 1.0) * n));  // 1-based
  rank = std::clamp<size_t>(rank, 1, sorted_.size());
  return sorted_[rank - 1];
}

double GittinsIndex::Index(Service a, Service quantum) const {
  const size_t n = sorted_.size();
  const size_t i = std::upper_bound(sorted_.begin(), sorted_.end(), a) - sorted_.begin();
  if (i == n) return 0.0;
  const size_t j =
      std::upper_bound(sorted_.begin() + i, sorted_.end(), a + quantum) - sorted_.begin();
  const double done = static_cast<double>(j - i);
  // sum over samples in (a, a+D] of (s - a), plus D for each sample beyond a+D.
  const double within = (prefix_[j] - prefix_[i]) - static_cast<double>(a) * done;
  const double expected = within + static_cast<double>(n - j) * static_cast<double>(quantum);
  if (expected <= 0) return 0.0;
  return done / expected * kMsPerSecond;
}

}  // namespace tiresias
