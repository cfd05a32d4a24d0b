// A sorted vector of (SortKey, slot) pairs: the running jobs in policy order, with each job's
// gang size alongside (gpus(it)), so that a pass sums and compares GPUs without touching the
// job table. Running jobs number at most the GPUs, so inserts are cheap memmoves, and the
// scheduling pass walks it as a contiguous array instead of chasing tree pointers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "core/job.h"

namespace tiresias {

class FlatOrder {
 public:
  // Not a std::pair: its assignment is user-provided, so inserts and erases moved entries one
  // by one; this aggregate is trivially copyable and they become memmoves.
  struct Entry {
    SortKey first;
    uint32_t second;
  };
  using const_iterator = std::vector<Entry>::const_iterator;

  void emplace(const SortKey& k, uint32_t slot, int gpus) {
    auto it = lower_bound(k);
    gpus_.insert(gpus_.begin() + (it - v_.begin()), gpus);
    v_.insert(it, Entry{k, slot});
  }
  void erase(const SortKey& k) {
    auto it = lower_bound(k);
    if (it == v_.end() || it->first != k) return;
    gpus_.erase(gpus_.begin() + (it - v_.begin()));
    v_.erase(it);
  }
  // The gang size of the entry at `it`.
  int gpus(const_iterator it) const { return gpus_[static_cast<size_t>(it - v_.begin())]; }
  // The GPUs of the entries in [from, to): a sum over a contiguous array of ints.
  int64_t GpusBetween(const_iterator from, const_iterator to) const {
    return std::accumulate(gpus_.begin() + (from - v_.begin()), gpus_.begin() + (to - v_.begin()),
                           int64_t{0});
  }
  const_iterator lower_bound(const SortKey& k) const {
    return std::lower_bound(v_.begin(), v_.end(), k,
                            [](const Entry& e, const SortKey& key) { return e.first < key; });
  }
  const_iterator begin() const { return v_.begin(); }
  const_iterator end() const { return v_.end(); }
  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  void clear() {
    v_.clear();
    gpus_.clear();
  }
  // Gives every entry a new key (slot unchanged), then restores the order (linear when keys
  // moved little). Entries before `from` keep their keys; a re-keyed entry may move before
  // them.
  // `ahead(slot)` is told of the entry kAhead places further on before each key is computed
  // (to prefetch what key_of will read: the jobs are scattered in memory).
  template <typename KeyOf, typename Ahead = void (*)(uint32_t)>
  void Rekey(
      KeyOf key_of, size_t from = 0, Ahead ahead = [](uint32_t) {}) {
    constexpr size_t kAhead = 6;
    for (size_t i = from; i < v_.size(); ++i) {
      if (i + kAhead < v_.size()) ahead(v_[i + kAhead].second);
      v_[i].first = key_of(v_[i].second);
    }
    // Keys drift little between passes: insertion sort is linear on a nearly sorted array.
    for (size_t i = std::max<size_t>(from, 1); i < v_.size(); ++i) {
      if (!(v_[i].first < v_[i - 1].first)) continue;
      Entry e = std::move(v_[i]);
      const int32_t g = gpus_[i];
      size_t k = i;
      for (; k > 0 && e.first < v_[k - 1].first; --k) {
        v_[k] = std::move(v_[k - 1]);
        gpus_[k] = gpus_[k - 1];
      }
      v_[k] = std::move(e);
      gpus_[k] = g;
    }
  }

 private:
  std::vector<Entry>::iterator lower_bound(const SortKey& k) {
    return std::lower_bound(v_.begin(), v_.end(), k,
                            [](const Entry& e, const SortKey& key) { return e.first < key; });
  }
  std::vector<Entry> v_;
  std::vector<int32_t> gpus_;  // parallel to v_
};

}  // namespace tiresias
