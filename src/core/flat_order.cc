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

FlatOrder::const_iterator FlatOrder::Advance(const_iterator it, const SortKey* bound,
                                             int64_t& budget) const {
  for (size_t b = it.b_, i = it.i_; b < blocks_.size(); ++b, i = 0) {
    const Block& blk = blocks_[b];
    if (i == 0 && blk.sum <= budget && (!bound || blk.v.back().first < *bound)) {
      budget -= blk.sum;
      continue;
    }
    for (; i < blk.v.size(); ++i) {
      if ((bound && !(blk.v[i].first < *bound)) || blk.gpus[i] > budget) return {this, b, i};
      budget -= blk.gpus[i];
    }
  }
  return end();
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
  size_t lowest = block;  // the first block an entry moved into
  size_t moves = 0;
  const size_t budget = 4 * size_ + 64;
  size_t i = index;
  if (block == 0 && i == 0) i = 1;  // the first entry has nothing before it
  for (size_t b = block; b < blocks_.size(); ++b, i = 0) {
    for (; i < blocks_[b].v.size(); ++i) {
      std::vector<Entry>* v = &blocks_[b].v;
      std::vector<int32_t>* g = &blocks_[b].gpus;
      const Entry& before = i > 0 ? (*v)[i - 1] : blocks_[b - 1].v.back();
      if (!((*v)[i].first < before.first)) continue;
      const Entry e = (*v)[i];
      const int32_t eg = (*g)[i];
      // Shift larger entries up by one, within a block in a tight loop and across into the
      // previous block's last slot when the entry belongs further back.
      size_t bb = b, k = i;
      while (true) {
        for (; k > 0 && e.first < (*v)[k - 1].first; --k, ++moves) {
          (*v)[k] = (*v)[k - 1];
          (*g)[k] = (*g)[k - 1];
        }
        if (k > 0 || bb == 0 || !(e.first < blocks_[bb - 1].v.back().first)) break;
        std::vector<Entry>& pv = blocks_[bb - 1].v;
        std::vector<int32_t>& pg = blocks_[bb - 1].gpus;
        (*v)[0] = pv.back();
        (*g)[0] = pg.back();
        ++moves;
        --bb;
        v = &pv;
        g = &pg;
        k = pv.size() - 1;
        if (moves > budget) break;
      }
      (*v)[k] = e;
      (*g)[k] = eg;
      lowest = std::min(lowest, bb);
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

void FlatOrder::TakeOut(size_t from, size_t count) {
  moved_.clear();
  size_t b = 0;
  for (; from >= blocks_[b].v.size(); ++b) from -= blocks_[b].v.size();
  for (size_t i = from; moved_.size() < count; ++b, i = 0) {
    for (; i < blocks_[b].v.size() && moved_.size() < count; ++i) {
      moved_.push_back({blocks_[b].v[i], blocks_[b].gpus[i]});
    }
  }
  for (const Item& m : moved_) erase(m.e.first);
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
