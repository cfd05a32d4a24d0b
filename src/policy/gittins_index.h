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
  // A bound of the index over the services ahead of `a`: the least index over the services x
  // in [a, b), where b (set in *until; nullopt: for good) is the first sample above `a` at
  // which the index would fall below the floor, or the one after the `max_breaks` looked at,
  // whichever comes first. The floor is G(a) x (1 - slack), raised to `at_least` where G(a)
  // is above it, or G(a) itself where it is not. The quantum is D(x) = quantum - (x - a)
  // when `to_end` (a queue's upper threshold ends it: the job leaves the queue at a + quantum,
  // and samples from there on are not looked at) or `quantum` otherwise. Between two samples
  // the index only grows (NextBreak), so the least is at `a` or just past one of the samples,
  // each computed as Index computes it. Under a rule set by SetRules, any number of samples
  // is looked at in O(log n) (max_breaks does not apply); otherwise one index per sample.
  // `hint`: as Index's (left where the search for `a` fell).
  double LeastIndexAhead(Service a, Service quantum, bool to_end, double slack, double at_least,
                         int max_breaks, uint64_t* hint, std::optional<Service>* until) const;
  // The quantum rules LeastIndexAhead is asked under most (a queue's end, or the last queue's
  // fixed quantum): for each, the index just past every sample is tabled (a sparse table of
  // minima, built at the first ask after each merge of the history).
  struct Rule {
    bool to_end = false;
    Service param = 0;  // to_end: where the queue ends (a + quantum); else the quantum
    bool operator==(const Rule&) const = default;
  };
  void SetRules(std::vector<Rule> rules);
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
  // A rule's table: mins[l][p] = the least index just past samples p .. p + 2^l - 1.
  struct RuleTable {
    Rule rule;
    std::vector<std::vector<double>> mins;  // empty until built
  };
  const RuleTable* TableFor(const Rule& rule) const;
  mutable std::vector<RuleTable> tables_;
  std::vector<Service> sorted_;
  // prefix_[i] = sum of sorted_[0..i), in double: exact below 2^53 GPU-ms, and a long history
  // of large samples cannot overflow it.
  std::vector<double> prefix_;
  std::vector<Service> pending_;
  size_t batch_;
};

}  // namespace tiresias
