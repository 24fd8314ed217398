#include "base/interval_union.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace gpuperf {
namespace {

// The union by definition: sort everything, merge overlapping and touching intervals.
std::vector<Interval> Union(std::vector<Interval> all) {
  std::sort(all.begin(), all.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (Interval i : all) {
    if (out.empty() || i.begin > out.back().end) {
      out.push_back(i);
    } else {
      out.back().end = std::max(out.back().end, i.end);
    }
  }
  return out;
}

void ExpectSame(const std::vector<Interval>& got, const std::vector<Interval>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].begin, want[i].begin) << i;
    EXPECT_EQ(got[i].end, want[i].end) << i;
  }
}

TEST(IntervalUnionTest, TouchingAndNestedIntervalsMerge) {
  IntervalUnion u;
  u.Add(10, 20);
  u.Add(20, 30);  // touching
  u.Add(12, 15);  // inside, late
  u.Add(40, 40);  // empty, apart
  u.Add(5, 8);    // before everything
  ExpectSame(u.intervals(), {{5, 8}, {10, 30}, {40, 40}});
  EXPECT_EQ(u.covered_ns(), 23u);
}

// GPU records arrive in time order per stream, streams interleaved, some buffers late:
// whatever the order, the union is the same as the definition's.
TEST(IntervalUnionTest, AnyArrivalOrderGivesTheUnion) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<Interval> all;
    uint64_t t = 0;
    const int n = 20000 + trial * 1000;
    for (int i = 0; i < n; ++i) {
      t += rng() % 50;
      all.push_back({t, t + rng() % 60});
    }
    // Mostly in order: swap some neighbours and move a few far back.
    for (int i = 0; i + 1 < n; i += 3) {
      if (rng() % 2) std::swap(all[i], all[i + 1]);
    }
    for (int i = 0; i < n / 10; ++i) std::swap(all[rng() % n], all[rng() % n]);
    IntervalUnion u;
    for (const Interval& i : all) u.Add(i.begin, i.end);
    ExpectSame(u.intervals(), Union(all));
    // More intervals after a read keep it exact.
    all.push_back({0, 3});
    u.Add(0, 3);
    ExpectSame(u.intervals(), Union(all));
  }
}

// Records a few places out of order (streams interleaved by their buffers): the late
// ones fall into gaps among the last intervals, touch them, or swallow several, and are
// merged there at once (none is set aside when windows are small, so a wrong merge there
// would not be mended by the bulk merge).
TEST(IntervalUnionTest, RecordsAFewPlacesLateGiveTheUnion) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    // On a coarse grid, so that intervals often touch exactly.
    std::vector<Interval> all;
    uint64_t t = 0;
    for (int i = 0; i < 20000; ++i) {
      t += 10 * (rng() % 3);
      const uint64_t length = 10 * (rng() % (trial % 2 ? 8 : 3));
      all.push_back({t, t + length});
    }
    // Shuffled within windows of 2 to 12 records.
    const size_t window = 2 + trial % 11;
    for (size_t w = 0; w < all.size(); w += window) {
      std::shuffle(all.begin() + w, all.begin() + std::min(all.size(), w + window), rng);
    }
    IntervalUnion u;
    for (const Interval& i : all) u.Add(i.begin, i.end);
    ExpectSame(u.intervals(), Union(all));
  }
}

}  // namespace
}  // namespace gpuperf
