// FlatOrder (sorted blocks) against a std::map of the same entries: random inserts, erases,
// re-keys of a suffix or a range, lower_bound, GpusBetween, Advance, IndexOf and At, across
// block splits and merges (thousands of entries, blocks of 64 to 128).
#include "core/flat_order.h"

#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <random>

namespace tiresias {
namespace {

SortKey Key(int64_t k0, int64_t id) {
  return {.k0 = k0, .id = JobId(id)};
}

// Every entry in order, with its gang size, and the sums and positions it answers.
void ExpectSame(const FlatOrder& f, const std::map<SortKey, std::pair<uint32_t, int>>& m) {
  ASSERT_EQ(f.size(), m.size());
  ASSERT_EQ(f.empty(), m.empty());
  auto it = f.begin();
  size_t i = 0;
  int64_t sum = 0;
  for (const auto& [k, v] : m) {
    ASSERT_NE(it, f.end());
    ASSERT_EQ(it->first, k) << "at " << i;
    ASSERT_EQ(it->second, v.first);
    ASSERT_EQ(f.gpus(it), v.second);
    ASSERT_EQ(f.IndexOf(it), i);
    ASSERT_EQ(f.At(i).first, k);
    sum += v.second;
    ++it;
    ++i;
  }
  ASSERT_EQ(it, f.end());
  ASSERT_EQ(f.GpusBetween(f.begin(), f.end()), sum);
}

TEST(FlatOrder, MatchesAnOrderedMapThroughSplitsMergesAndRekeys) {
  std::mt19937_64 rng(5);
  FlatOrder f;
  std::map<SortKey, std::pair<uint32_t, int>> m;  // key -> (slot, gpus)
  int64_t next_id = 0;
  auto random_key = [&] { return static_cast<int64_t>(rng() % 100000); };
  for (int round = 0; round < 60; ++round) {
    // Grow to a few thousand (many splits), then shrink (merges), by phases.
    const bool grow = (round / 10) % 2 == 0;
    for (int k = 0; k < 400; ++k) {
      if (grow || m.empty() || rng() % 3 == 0) {
        const SortKey key = Key(random_key(), next_id++);
        const int g = 1 << (rng() % 4);
        f.emplace(key, static_cast<uint32_t>(key.id.value()), g);
        m[key] = {static_cast<uint32_t>(key.id.value()), g};
      } else {
        auto victim = std::next(m.begin(), static_cast<ptrdiff_t>(rng() % m.size()));
        f.erase(victim->first);
        m.erase(victim);
      }
    }
    f.erase(Key(-1, -1));  // absent: nothing happens
    ExpectSame(f, m);
    // lower_bound and sums between two probes.
    for (int k = 0; k < 50; ++k) {
      SortKey a = Key(random_key(), static_cast<int64_t>(rng() % next_id));
      SortKey b = Key(random_key(), static_cast<int64_t>(rng() % next_id));
      if (b < a) std::swap(a, b);
      const auto fa = f.lower_bound(a), fb = f.lower_bound(b);
      const auto ma = m.lower_bound(a), mb = m.lower_bound(b);
      ASSERT_EQ(fa == f.end(), ma == m.end());
      if (ma != m.end()) {
        ASSERT_EQ(fa->first, ma->first);
      }
      int64_t want = 0;
      for (auto it = ma; it != mb; ++it) want += it->second.second;
      ASSERT_EQ(f.GpusBetween(fa, fb), want);
      ASSERT_EQ(f.IndexOf(fa), static_cast<size_t>(std::distance(m.begin(), ma)));
      // Advance from `a` below `b` (or without a bound) within a budget, entry by entry.
      const bool bounded = rng() % 2 == 0;
      const int64_t budget = static_cast<int64_t>(rng() % 2000);
      int64_t left = budget, want_left = budget;
      auto mi = ma;
      for (; mi != m.end() && (!bounded || mi->first < b) && mi->second.second <= want_left; ++mi) {
        want_left -= mi->second.second;
      }
      const auto at = f.Advance(fa, bounded ? &b : nullptr, left);
      ASSERT_EQ(at == f.end(), mi == m.end());
      if (mi != m.end()) {
        ASSERT_EQ(at->first, mi->first);
      }
      ASSERT_EQ(left, want_left);
    }
    // Re-key a suffix, a range [from, to), or a short range (under 1/8 of the entries: taken
    // out and put back): each key moves down or up by a little or a lot (some before `from`).
    const size_t from = m.empty() ? 0 : rng() % (m.size() + 1);
    const int shape = static_cast<int>(rng() % 3);
    const size_t to = shape == 0   ? m.size()
                      : shape == 1 ? from + rng() % (m.size() - from + 1)
                                   : from + rng() % (std::min(m.size() - from, m.size() / 16) + 1);
    std::map<uint32_t, SortKey> rekeyed;  // slot -> new key
    auto old = m;
    std::map<uint32_t, SortKey> key_of_slot;
    for (const auto& [k, v] : old) key_of_slot[v.first] = k;
    f.Rekey(
        [&](uint32_t slot) {
          const SortKey& was = key_of_slot.at(slot);
          const int64_t shift = rng() % 4 == 0 ? -static_cast<int64_t>(rng() % 100000)
                                               : static_cast<int64_t>(rng() % 200) - 100;
          const SortKey k = Key(was.k0 + shift, was.id.value());
          rekeyed[slot] = k;
          return k;
        },
        from, to);
    ASSERT_EQ(rekeyed.size(), to - from);
    m.clear();
    for (const auto& [k, v] : old) {
      auto r = rekeyed.find(v.first);
      m[r == rekeyed.end() ? k : r->second] = v;
    }
    ExpectSame(f, m);
  }
  f.clear();
  m.clear();
  ExpectSame(f, m);
  f.emplace(Key(1, 1), 1, 2);  // usable again after clear
  m[Key(1, 1)] = {1, 2};
  ExpectSame(f, m);
}

}  // namespace
}  // namespace tiresias
