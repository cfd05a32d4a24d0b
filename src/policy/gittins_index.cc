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

size_t GittinsIndex::UpperBound(Service x, size_t guess) const {
  const size_t n = sorted_.size();
  const auto first = sorted_.begin();
  guess = std::min(guess, n);
  if (guess > 0 && x < sorted_[guess - 1]) {  // behind the guess: search what is before it
    return std::upper_bound(first, first + static_cast<ptrdiff_t>(guess), x) - first;
  }
  // At or after the guess (a running job's service only grows): gallop forward, 1, 2, 4...
  // samples, then search the last step. guess and guess + 1 cost one comparison each.
  size_t lo = guess, step = 1;  // every sample before lo is <= x
  while (lo < n && sorted_[lo] <= x) {
    const size_t hi = std::min(n, lo + step);
    if (hi == n || x < sorted_[hi - 1]) {
      return std::upper_bound(first + static_cast<ptrdiff_t>(lo),
                              first + static_cast<ptrdiff_t>(hi), x) -
             first;
    }
    lo = hi;
    step *= 2;
  }
  return lo;
}

double GittinsIndex::IndexAt(Service a, Service quantum, size_t i, size_t j) const {
  const size_t n = sorted_.size();
  if (i == n) return 0.0;
  const double done = static_cast<double>(j - i);
  // sum over samples in (a, a+D] of (s - a), plus D for each sample beyond a+D.
  const double within = (prefix_[j] - prefix_[i]) - static_cast<double>(a) * done;
  const double expected = within + static_cast<double>(n - j) * static_cast<double>(quantum);
  if (expected <= 0) return 0.0;
  return done / expected * kMsPerSecond;
}

std::optional<Service> GittinsIndex::NextBreak(Service a, uint64_t hint) const {
  const size_t i = UpperBound(a, static_cast<uint32_t>(hint));
  if (i == sorted_.size()) return std::nullopt;
  return sorted_[i];
}

double GittinsIndex::Index(Service a, Service quantum) const {
  const size_t i = std::upper_bound(sorted_.begin(), sorted_.end(), a) - sorted_.begin();
  const size_t j =
      std::upper_bound(sorted_.begin() + i, sorted_.end(), a + quantum) - sorted_.begin();
  return IndexAt(a, quantum, i, j);
}

double GittinsIndex::Index(Service a, Service quantum, uint64_t* hint) const {
  const size_t i = UpperBound(a, static_cast<uint32_t>(*hint));
  // As the search over [i, end) above: never before i (a quantum <= 0 ends nothing).
  const size_t j = std::max(i, UpperBound(a + quantum, static_cast<uint32_t>(*hint >> 32)));
  *hint = (static_cast<uint64_t>(j) << 32) | static_cast<uint32_t>(i);
  return IndexAt(a, quantum, i, j);
}

}  // namespace tiresias
