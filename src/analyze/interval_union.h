// The union of many time intervals, built incrementally. Fast when intervals arrive
// roughly in time order (as GPU activity records do: out of order only across streams
// and buffers), which keeps the work per interval O(1) near the end of the list.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace gpuperf {

struct Interval {
  uint64_t begin = 0;
  uint64_t end = 0;
};

class IntervalUnion {
 public:
  void Add(uint64_t begin, uint64_t end) {
    if (end < begin) end = begin;
    if (merged_.empty() || begin > merged_.back().end) {
      merged_.push_back({begin, end});
      return;
    }
    Interval& last = merged_.back();
    if (begin >= last.begin) {
      last.end = std::max(last.end, end);
      return;
    }
    AddOutOfOrder(begin, end);
  }

  // Disjoint, sorted by begin; touching intervals are merged.
  const std::vector<Interval>& intervals() const { return merged_; }

  uint64_t covered_ns() const {
    uint64_t total = 0;
    for (const Interval& i : merged_) total += i.end - i.begin;
    return total;
  }

 private:
  void AddOutOfOrder(uint64_t begin, uint64_t end) {
    // The first interval that ends at or after `begin` is the first one it can touch.
    auto it = std::lower_bound(merged_.begin(), merged_.end(), begin,
                               [](const Interval& i, uint64_t value) { return i.end < value; });
    if (it == merged_.end() || it->begin > end) {
      merged_.insert(it, {begin, end});
      return;
    }
    it->begin = std::min(it->begin, begin);
    uint64_t new_end = std::max(it->end, end);
    auto next = it + 1;
    while (next != merged_.end() && next->begin <= new_end) {
      new_end = std::max(new_end, next->end);
      ++next;
    }
    it->end = new_end;
    merged_.erase(it + 1, next);
  }

  std::vector<Interval> merged_;
};

}  // namespace gpuperf
