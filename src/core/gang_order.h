// An ordered map from SortKey to a job slot that also knows each job's gang size: the waiting
// jobs in policy order. Besides what std::map offers (ordered iteration, lower_bound, erase by
// key) it answers the question a scheduling pass asks of a long queue in O(log n): "the first
// job at or after here whose gang fits `budget` GPUs" (NextFitting: a pass skips the jobs that
// do not fit without visiting them, so a burst of large gangs behind a small budget costs
// nothing).
//
// A treap in one vector (no allocation per node; freed nodes are reused): each node keeps its
// subtree's smallest gang, updated up the path only as far as it changes. Priorities come from
// a fixed-seed generator, so the shape, and with it the cost, is the same in every run; the
// order is the keys' alone. The first entry is cached: begin() is O(1).
// Not thread-safe. Iterators stay valid until their own element is erased.
#pragma once

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/job.h"

namespace tiresias {

class GangOrder {
  static constexpr uint32_t kNil = std::numeric_limits<uint32_t>::max();
  struct Node {
    std::pair<SortKey, uint32_t> kv;  // key -> slot
    int32_t gpus = 0;
    uint32_t prio = 0;
    uint32_t left = kNil, right = kNil, parent = kNil;
    int32_t min_gpus = 0;  // over the subtree
  };

 public:
  class const_iterator {
   public:
    const_iterator() = default;
    const std::pair<SortKey, uint32_t>& operator*() const { return o_->nodes_[n_].kv; }
    const std::pair<SortKey, uint32_t>* operator->() const { return &o_->nodes_[n_].kv; }
    int gpus() const { return o_->nodes_[n_].gpus; }
    const_iterator& operator++() {
      n_ = o_->Next(n_);
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      n_ = o_->Next(n_);
      return old;
    }
    bool operator==(const const_iterator& o) const { return n_ == o.n_; }

   private:
    friend class GangOrder;
    const_iterator(const GangOrder* o, uint32_t n) : o_(o), n_(n) {}
    const GangOrder* o_ = nullptr;
    uint32_t n_ = kNil;
  };

  void emplace(const SortKey& k, uint32_t slot, int gpus);
  // Erases the entry with key `k`, if any.
  void erase(const SortKey& k);
  const_iterator lower_bound(const SortKey& k) const;
  const_iterator begin() const { return {this, first_}; }
  const_iterator end() const { return {this, kNil}; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear();
  void swap(GangOrder& o) noexcept;

  // The first entry at or after `from` whose gang is at most `budget` GPUs, or end().
  const_iterator NextFitting(const_iterator from, int budget) const {
    if (from.n_ == kNil || nodes_[from.n_].gpus <= budget) return from;
    return {this, FindFitting(from.n_, budget)};
  }
  // The GPUs of all entries together.
  int64_t TotalGpus() const { return total_gpus_; }
  // The smallest gang of all entries (0 when empty).
  int MinGpus() const { return root_ == kNil ? 0 : nodes_[root_].min_gpus; }

 private:
  uint32_t Leftmost(uint32_t n) const {
    while (nodes_[n].left != kNil) n = nodes_[n].left;
    return n;
  }
  uint32_t Next(uint32_t n) const;
  // NextFitting past a node that does not fit: a few steps in order (a short gap is cheaper to
  // walk), then the tree's minima.
  uint32_t FindFitting(uint32_t n, int budget) const;
  // The leftmost node of the subtree at `n` whose gang fits, or kNil.
  uint32_t FirstFitting(uint32_t n, int budget) const;
  int32_t MinOf(uint32_t n) const {
    return n == kNil ? std::numeric_limits<int32_t>::max() : nodes_[n].min_gpus;
  }
  void Pull(uint32_t n);
  // Rotates `n` above its parent.
  void RotateUp(uint32_t n);
  uint32_t Find(const SortKey& k) const;

  std::vector<Node> nodes_;
  std::vector<uint32_t> free_;
  uint32_t root_ = kNil;
  uint32_t first_ = kNil;  // the leftmost node
  size_t size_ = 0;
  int64_t total_gpus_ = 0;
  uint32_t rng_ = 0x9E3779B9u;  // xorshift32 state: fixed, so every run builds the same shape
};

}  // namespace tiresias
