// GangOrder: a treap with subtree gang minima (see the header).
#include "core/gang_order.h"

#include <algorithm>
#include <cassert>

namespace tiresias {

void GangOrder::Pull(uint32_t n) {
  Node& x = nodes_[n];
  x.min_gpus = std::min({x.gpus, MinOf(x.left), MinOf(x.right)});
}

void GangOrder::RotateUp(uint32_t n) {
  const uint32_t p = nodes_[n].parent;
  const uint32_t g = nodes_[p].parent;
  if (nodes_[p].left == n) {
    const uint32_t b = nodes_[n].right;
    nodes_[p].left = b;
    if (b != kNil) nodes_[b].parent = p;
    nodes_[n].right = p;
  } else {
    const uint32_t b = nodes_[n].left;
    nodes_[p].right = b;
    if (b != kNil) nodes_[b].parent = p;
    nodes_[n].left = p;
  }
  nodes_[p].parent = n;
  nodes_[n].parent = g;
  if (g == kNil) {
    root_ = n;
  } else if (nodes_[g].left == p) {
    nodes_[g].left = n;
  } else {
    nodes_[g].right = n;
  }
  Pull(p);
  Pull(n);
}

void GangOrder::emplace(const SortKey& k, uint32_t slot, int gpus) {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 17;
  rng_ ^= rng_ << 5;
  uint32_t n;
  if (free_.empty()) {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  } else {
    n = free_.back();
    free_.pop_back();
  }
  nodes_[n] = Node{.kv = {k, slot}, .gpus = gpus, .prio = rng_, .min_gpus = gpus};
  ++size_;
  total_gpus_ += gpus;
  if (first_ == kNil || k < nodes_[first_].kv.first) first_ = n;
  if (root_ == kNil) {
    root_ = n;
    return;
  }
  uint32_t p = root_;
  while (true) {
    uint32_t& child = k < nodes_[p].kv.first ? nodes_[p].left : nodes_[p].right;
    if (child == kNil) {
      child = n;
      break;
    }
    p = child;
  }
  nodes_[n].parent = p;
  // Ancestors' minima, up to the first that already has one as small (rotations below keep
  // every subtree above them the same set).
  for (uint32_t a = p; a != kNil && nodes_[a].min_gpus > gpus; a = nodes_[a].parent) {
    nodes_[a].min_gpus = gpus;
  }
  while (nodes_[n].parent != kNil && nodes_[nodes_[n].parent].prio < nodes_[n].prio) RotateUp(n);
}

uint32_t GangOrder::Find(const SortKey& k) const {
  uint32_t n = root_;
  while (n != kNil && nodes_[n].kv.first != k) {
    n = k < nodes_[n].kv.first ? nodes_[n].left : nodes_[n].right;
  }
  return n;
}

void GangOrder::erase(const SortKey& k) {
  const uint32_t n = Find(k);
  if (n == kNil) return;
  if (n == first_) first_ = Next(n);
  // Rotate it down (the child of higher priority up) until it is a leaf, then unlink it.
  while (nodes_[n].left != kNil || nodes_[n].right != kNil) {
    const uint32_t l = nodes_[n].left, r = nodes_[n].right;
    RotateUp(r == kNil || (l != kNil && nodes_[l].prio > nodes_[r].prio) ? l : r);
  }
  const uint32_t p = nodes_[n].parent;
  if (p == kNil) {
    root_ = kNil;
  } else {
    (nodes_[p].left == n ? nodes_[p].left : nodes_[p].right) = kNil;
    for (uint32_t a = p; a != kNil; a = nodes_[a].parent) {  // until a minimum stays
      const int32_t before = nodes_[a].min_gpus;
      Pull(a);
      if (nodes_[a].min_gpus == before) break;
    }
  }
  free_.push_back(n);
  --size_;
  total_gpus_ -= nodes_[n].gpus;
}

void GangOrder::clear() {
  nodes_.clear();
  free_.clear();
  root_ = kNil;
  first_ = kNil;
  size_ = 0;
  total_gpus_ = 0;
}

void GangOrder::swap(GangOrder& o) noexcept {
  nodes_.swap(o.nodes_);
  free_.swap(o.free_);
  std::swap(root_, o.root_);
  std::swap(first_, o.first_);
  std::swap(size_, o.size_);
  std::swap(total_gpus_, o.total_gpus_);
  std::swap(rng_, o.rng_);
}

GangOrder::const_iterator GangOrder::lower_bound(const SortKey& k) const {
  uint32_t n = root_, best = kNil;
  while (n != kNil) {
    if (nodes_[n].kv.first < k) {
      n = nodes_[n].right;
    } else {
      best = n;
      n = nodes_[n].left;
    }
  }
  return {this, best};
}

uint32_t GangOrder::Next(uint32_t n) const {
  if (nodes_[n].right != kNil) return Leftmost(nodes_[n].right);
  uint32_t p = nodes_[n].parent;
  while (p != kNil && nodes_[p].right == n) {
    n = p;
    p = nodes_[p].parent;
  }
  return p;
}

uint32_t GangOrder::FirstFitting(uint32_t n, int budget) const {
  if (MinOf(n) > budget) return kNil;
  while (true) {
    const Node& x = nodes_[n];
    if (MinOf(x.left) <= budget) {
      n = x.left;
    } else if (x.gpus <= budget) {
      return n;
    } else {
      n = x.right;  // the subtree's minimum is here
    }
  }
}

uint32_t GangOrder::FindFitting(uint32_t n, int budget) const {
  for (int step = 0; step < 8; ++step) {
    n = Next(n);
    if (n == kNil || nodes_[n].gpus <= budget) return n;
  }
  // Within the right subtree first, then up: each ancestor reached from its left child comes
  // next in order, followed by its own right subtree.
  if (uint32_t f = FirstFitting(nodes_[n].right, budget); f != kNil) return f;
  for (uint32_t p = nodes_[n].parent; p != kNil; n = p, p = nodes_[p].parent) {
    if (nodes_[p].left != n) continue;
    if (nodes_[p].gpus <= budget) return p;
    if (uint32_t f = FirstFitting(nodes_[p].right, budget); f != kNil) return f;
  }
  return kNil;
}

}  // namespace tiresias
