// The running jobs in policy order: (SortKey, slot) pairs with each job's gang size alongside
// (gpus(it)), so that a pass sums and compares GPUs without touching the job table.
//
// Sorted blocks of at most 2 x kBlock entries (each with its GPU sum): an insert or erase
// moves part of one block (a few KiB), not half of every running job (with 10,000 GPUs the
// running jobs number thousands, and one flat array made each start and stop a memmove of
// hundreds of KiB); GpusBetween adds whole blocks' sums; the pass still walks contiguous
// arrays. Iterators stay valid until the order changes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <numeric>
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

 private:
  struct Block {
    std::vector<Entry> v;
    std::vector<int32_t> gpus;  // parallel to v
    int64_t sum = 0;            // of gpus
  };

 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Entry;
    using difference_type = std::ptrdiff_t;
    using pointer = const Entry*;
    using reference = const Entry&;
    const_iterator() = default;
    const Entry& operator*() const { return o_->blocks_[b_].v[i_]; }
    const Entry* operator->() const { return &o_->blocks_[b_].v[i_]; }
    const_iterator& operator++() {
      if (++i_ == o_->blocks_[b_].v.size()) {
        ++b_;
        i_ = 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const const_iterator& o) const { return b_ == o.b_ && i_ == o.i_; }

   private:
    friend class FlatOrder;
    const_iterator(const FlatOrder* o, size_t b, size_t i) : o_(o), b_(b), i_(i) {}
    const FlatOrder* o_ = nullptr;
    size_t b_ = 0, i_ = 0;  // block, index in it; end: (blocks, 0)
  };

  void emplace(const SortKey& k, uint32_t slot, int gpus);
  // Erases the entry with key `k`, if any.
  void erase(const SortKey& k);
  // The gang size of the entry at `it`.
  int gpus(const_iterator it) const { return blocks_[it.b_].gpus[it.i_]; }
  // The GPUs of the entries in [from, to).
  int64_t GpusBetween(const_iterator from, const_iterator to) const;
  const_iterator lower_bound(const SortKey& k) const {
    const size_t b = BlockFor(k);
    if (b == blocks_.size()) return end();
    const auto& v = blocks_[b].v;
    return {this, b, static_cast<size_t>(LowerIn(v, k) - v.begin())};
  }
  const_iterator begin() const { return {this, 0, 0}; }
  const_iterator end() const { return {this, blocks_.size(), 0}; }
  // From `it`, past the entries whose keys are below `*bound` (every key when null) as long
  // as their GPUs fit `budget`, which they are taken from: whole blocks by their sums, then
  // entry by entry. Returns the first entry not passed (or end()).
  const_iterator Advance(const_iterator it, const SortKey* bound, int64_t& budget) const;
  // The position of `it` (O(blocks)), and the entry at a position.
  size_t IndexOf(const_iterator it) const;
  const Entry& At(size_t index) const;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear();

  // Gives every entry at positions [from, to) a new key (slot unchanged), then restores the
  // order (linear in the entries from `from` on when the keys moved little). Other entries
  // keep their keys; a re-keyed entry may move before them.
  // `ahead(slot)` is told of the entry kAhead places further on before each key is computed
  // (to prefetch what key_of will read: the jobs are scattered in memory).
  template <typename KeyOf, typename Ahead = void (*)(uint32_t)>
  void Rekey(
      KeyOf key_of, size_t from = 0, size_t to = SIZE_MAX, Ahead ahead = [](uint32_t) {}) {
    to = std::min(to, size_);
    if (from >= to) return;
    size_t count = to - from;
    if (count * kFewOf < size_) {
      // A few of many: each taken out and put back with its new key (one may move far past
      // entries whose keys stay, which the insertion sort below would step through).
      TakeOut(from, count);
      for (const Item& m : moved_) emplace(key_of(m.e.second), m.e.second, m.gpus);
      return;
    }
    // In place, block by block (the next block's first entries are announced early too).
    size_t b = 0;
    for (; from >= blocks_[b].v.size(); ++b) from -= blocks_[b].v.size();
    const size_t first_block = b;
    constexpr size_t kAhead = 6;
    for (size_t i = from; count > 0 && b < blocks_.size(); ++b, i = 0) {
      std::vector<Entry>& v = blocks_[b].v;
      for (; count > 0 && i < v.size(); ++i, --count) {
        if (i + kAhead < v.size()) {
          ahead(v[i + kAhead].second);
        } else if (b + 1 < blocks_.size() && i + kAhead - v.size() < blocks_[b + 1].v.size()) {
          ahead(blocks_[b + 1].v[i + kAhead - v.size()].second);
        }
        v[i].first = key_of(v[i].second);
      }
    }
    Resort(first_block, from);
  }

 private:
  static constexpr size_t kBlock = 64;  // a block splits in two past 2 x kBlock entries

  static std::vector<Entry>::const_iterator LowerIn(const std::vector<Entry>& v, const SortKey& k) {
    return std::lower_bound(v.begin(), v.end(), k,
                            [](const Entry& e, const SortKey& key) { return e.first < key; });
  }
  // The first block whose last key is not below `k` (blocks_.size(): none).
  size_t BlockFor(const SortKey& k) const;
  Block TakeBlock();  // an empty block, with capacity when one was freed before
  // Restores the order after the keys from (block, index) on changed: an insertion sort over
  // the blocks as one sequence (block sizes stay; sums are recomputed where entries crossed),
  // or, when that would move many entries, SortAll.
  void Resort(size_t block, size_t index);
  // Sorts every entry and cuts them into blocks of kBlock again.
  void SortAll();
  // Rekey takes a range out and puts it back when it is under 1/kFewOf of the entries.
  static constexpr size_t kFewOf = 8;
  // Moves the `count` entries from position `from` on into moved_, erasing them.
  void TakeOut(size_t from, size_t count);

  std::vector<Block> blocks_;  // none empty
  std::vector<Block> spare_;   // freed blocks, their capacity kept
  size_t size_ = 0;
  struct Item {  // an entry with its gang size, for SortAll and TakeOut
    Entry e;
    int32_t gpus;
  };
  std::vector<Item> items_;
  std::vector<Item> moved_;
};

}  // namespace tiresias
