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
  for (RuleTable& t : tables_) t.mins.clear();  // built again when next asked
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

void GittinsIndex::SetRules(std::vector<Rule> rules) {
  tables_.clear();
  for (const Rule& r : rules) tables_.push_back({r, {}});
}

const GittinsIndex::RuleTable* GittinsIndex::TableFor(const Rule& rule) const {
  for (RuleTable& t : tables_) {
    if (!(t.rule == rule)) continue;
    if (t.mins.empty()) {  // built at the first ask since the last merge
      const size_t n = sorted_.size();
      t.mins.emplace_back(n);
      for (size_t p = 0; p < n; ++p) {
        const Service s = sorted_[p];
        t.mins[0][p] = Index(s, rule.to_end ? rule.param - s : rule.param);
      }
      for (size_t w = 1; 2 * w <= n; w *= 2) {
        const std::vector<double>& prev = t.mins.back();
        std::vector<double> next(n - 2 * w + 1);
        for (size_t p = 0; p < next.size(); ++p) next[p] = std::min(prev[p], prev[p + w]);
        t.mins.push_back(std::move(next));
      }
    }
    return &t;
  }
  return nullptr;
}

double GittinsIndex::LeastIndexAhead(Service a, Service quantum, bool to_end, double slack,
                                     double at_least, int max_breaks, uint64_t* hint,
                                     std::optional<Service>* until) const {
  double least = Index(a, quantum, hint);
  const double floor = least > at_least ? std::max(least * (1 - slack), at_least) : least;
  const Service end = a + quantum;          // to_end: where the job leaves its queue
  size_t p = static_cast<uint32_t>(*hint);  // the first sample above `a`
  const size_t n = sorted_.size();
  const size_t limit =
      to_end ? static_cast<size_t>(std::lower_bound(sorted_.begin(), sorted_.end(), end) -
                                   sorted_.begin())
             : n;
  if (const RuleTable* t = TableFor({to_end, to_end ? end : quantum})) {
    // The longest run of samples from p whose indices all stay at or above the floor.
    for (size_t l = t->mins.size(); l-- > 0;) {
      const size_t w = size_t{1} << l;
      if (p + w <= limit && t->mins[l][p] >= floor) {
        least = std::min(least, t->mins[l][p]);
        p += w;
      }
    }
  } else {
    uint64_t h = *hint;
    for (int k = 0; k < max_breaks && p < limit; ++k) {
      const Service s = sorted_[p];
      const double g = Index(s, to_end ? end - s : quantum, &h);
      if (g < floor) break;
      least = std::min(least, g);
      p = static_cast<uint32_t>(h);  // the first sample above s
    }
  }
  *until = p < n ? std::optional<Service>(sorted_[p]) : std::nullopt;
  return least;
}

}  // namespace tiresias
