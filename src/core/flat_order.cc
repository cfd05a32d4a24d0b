// FlatOrder: the running jobs' order as sorted blocks (see flat_order.h).
#include "core/flat_order.h"

#include <cassert>

namespace tiresias {

size_t FlatOrder::BlockFor(const SortKey& k) const {
  return static_cast<size_t>(
      std::partition_point(blocks_.begin(), blocks_.end(),
                           [&](const Block& b) { return b.v.back().first < k; }) -
      blocks_.begin());
}

FlatOrder::Block FlatOrder::TakeBlock() {
  if (spare_.empty()) return Block{};
  Block b = std::move(spare_.back());
  spare_.pop_back();
  return b;
}

void FlatOrder::emplace(const SortKey& k, uint32_t slot, int gpus) {
  size_t b = BlockFor(k);
  if (b == blocks_.size()) {
    if (blocks_.empty()) blocks_.push_back(TakeBlock());
    b = blocks_.size() - 1;  // after every key: the end of the last block
  }
  Block& blk = blocks_[b];
  const size_t i = static_cast<size_t>(LowerIn(blk.v, k) - blk.v.begin());
  blk.v.insert(blk.v.begin() + static_cast<ptrdiff_t>(i), Entry{k, slot});
  blk.gpus.insert(blk.gpus.begin() + static_cast<ptrdiff_t>(i), gpus);
  blk.sum += gpus;
  ++size_;
  if (blk.v.size() <= 2 * kBlock) return;
  Block half = TakeBlock();  // the upper half moves to a new block after this one
  half.v.assign(blk.v.begin() + kBlock, blk.v.end());
  half.gpus.assign(blk.gpus.begin() + kBlock, blk.gpus.end());
  half.sum = std::accumulate(half.gpus.begin(), half.gpus.end(), int64_t{0});
  blk.v.resize(kBlock);
  blk.gpus.resize(kBlock);
  blk.sum -= half.sum;
  blocks_.insert(blocks_.begin() + static_cast<ptrdiff_t>(b) + 1, std::move(half));
}

void FlatOrder::erase(const SortKey& k) {
  const size_t b = BlockFor(k);
  if (b == blocks_.size()) return;
  Block& blk = blocks_[b];
  const size_t i = static_cast<size_t>(LowerIn(blk.v, k) - blk.v.begin());
  if (blk.v[i].first != k) return;
  blk.sum -= blk.gpus[i];
  blk.v.erase(blk.v.begin() + static_cast<ptrdiff_t>(i));
  blk.gpus.erase(blk.gpus.begin() + static_cast<ptrdiff_t>(i));
  --size_;
  if (blk.v.empty()) {
    spare_.push_back(std::move(blk));
    blocks_.erase(blocks_.begin() + static_cast<ptrdiff_t>(b));
    return;
  }
  if (blk.v.size() >= kBlock / 4 || blocks_.size() == 1) return;
  // Too small: it joins a neighbour when the two fit one block.
  const size_t into = b > 0 ? b - 1 : b + 1;
  Block& nb = blocks_[into];
  if (nb.v.size() + blk.v.size() <= 2 * kBlock) {
    const auto at = into < b ? nb.v.end() : nb.v.begin();
    const auto at_gpus = into < b ? nb.gpus.end() : nb.gpus.begin();
    nb.gpus.insert(at_gpus, blk.gpus.begin(), blk.gpus.end());
    nb.v.insert(at, blk.v.begin(), blk.v.end());
    nb.sum += blk.sum;
    blk.v.clear();
    blk.gpus.clear();
    blk.sum = 0;
    spare_.push_back(std::move(blk));
    blocks_.erase(blocks_.begin() + static_cast<ptrdiff_t>(b));
  }
}

int64_t FlatOrder::GpusBetween(const_iterator from, const_iterator to) const {
  auto part = [&](size_t b, size_t i, size_t j) {
    const auto& g = blocks_[b].gpus;
    return std::accumulate(g.begin() + static_cast<ptrdiff_t>(i),
                           g.begin() + static_cast<ptrdiff_t>(j), int64_t{0});
  };
  if (from.b_ == to.b_) return from.b_ == blocks_.size() ? 0 : part(from.b_, from.i_, to.i_);
  int64_t sum = part(from.b_, from.i_, blocks_[from.b_].v.size());
  for (size_t b = from.b_ + 1; b < to.b_; ++b) sum += blocks_[b].sum;
  if (to.b_ < blocks_.size()) sum += part(to.b_, 0, to.i_);
  return sum;
}

size_t FlatOrder::IndexOf(const_iterator it) const {
  size_t n = it.i_;
  for (size_t b = 0; b < it.b_; ++b) n += blocks_[b].v.size();
  return n;
}

const FlatOrder::Entry& FlatOrder::At(size_t index) const {
  assert(index < size_);
  size_t b = 0;
  for (; index >= blocks_[b].v.size(); ++b) index -= blocks_[b].v.size();
  return blocks_[b].v[index];
}

void FlatOrder::clear() {
  for (Block& b : blocks_) {
    b.v.clear();
    b.gpus.clear();
    b.sum = 0;
    spare_.push_back(std::move(b));
  }
  blocks_.clear();
  size_ = 0;
}

void FlatOrder::Resort(size_t block, size_t index) {
  // Positions as (block, index); the sequence is every block in turn.
  struct Pos {
    size_t b, i;
  };
  const auto prev = [&](Pos p) {
    return p.i > 0 ? Pos{p.b, p.i - 1} : Pos{p.b - 1, blocks_[p.b - 1].v.size() - 1};
  };
  const auto at = [&](Pos p) -> Entry& { return blocks_[p.b].v[p.i]; };
  const auto gpus_at = [&](Pos p) -> int32_t& { return blocks_[p.b].gpus[p.i]; };
  size_t lowest = block;  // the first block an entry moved into
  size_t moves = 0;
  const size_t budget = 4 * size_ + 64;
  Pos p{block, index};
  if (p.b == 0 && p.i == 0) p.i = 1;  // the first entry has nothing before it
  for (; p.b < blocks_.size(); ++p.b, p.i = 0) {
    for (; p.i < blocks_[p.b].v.size(); ++p.i) {
      Pos q = p;
      Pos before = prev(q);
      if (!(at(q).first < at(before).first)) continue;
      const Entry e = at(q);
      const int32_t g = gpus_at(q);
      while (true) {
        at(q) = at(before);
        gpus_at(q) = gpus_at(before);
        q = before;
        if (++moves > budget) break;
        if (q.b == 0 && q.i == 0) break;
        before = prev(q);
        if (!(e.first < at(before).first)) break;
      }
      at(q) = e;
      gpus_at(q) = g;
      lowest = std::min(lowest, q.b);
      if (moves > budget) {  // keys moved a lot (gittins' indices): sort them all instead
        SortAll();
        return;
      }
    }
  }
  for (size_t b = lowest; b < blocks_.size(); ++b) {
    blocks_[b].sum = std::accumulate(blocks_[b].gpus.begin(), blocks_[b].gpus.end(), int64_t{0});
  }
}

void FlatOrder::SortAll() {
  items_.clear();
  for (Block& blk : blocks_) {
    for (size_t i = 0; i < blk.v.size(); ++i) items_.push_back({blk.v[i], blk.gpus[i]});
    blk.v.clear();
    blk.gpus.clear();
    blk.sum = 0;
    spare_.push_back(std::move(blk));
  }
  blocks_.clear();
  // Keys are unique: any sort gives the one order.
  std::sort(items_.begin(), items_.end(),
            [](const Item& a, const Item& b) { return a.e.first < b.e.first; });
  for (size_t i = 0; i < items_.size(); i += kBlock) {
    Block blk = TakeBlock();
    for (size_t k = i; k < std::min(items_.size(), i + kBlock); ++k) {
      blk.v.push_back(items_[k].e);
      blk.gpus.push_back(items_[k].gpus);
      blk.sum += items_[k].gpus;
    }
    blocks_.push_back(std::move(blk));
  }
}

}  // namespace tiresias
