// The union of many time intervals, built incrementally (GPU busy time, NVTX windows).
// Intervals arrive roughly in time order (GPU activity records are out of order only
// across streams and buffers): those that extend the end are merged at once; a late one
// is set aside and merged with the others in bulk (a sort and one pass), so that it does
// not shift the whole list, whatever the order of the records.
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
    // Merged in bulk once a quarter of the list is waiting: amortized O(log n) each.
    late_.push_back({begin, end});
    if (late_.size() >= std::max<size_t>(kMinLate, merged_.size() / 4)) MergeLate();
  }

  // Disjoint, sorted by begin; touching intervals are merged.
  const std::vector<Interval>& intervals() {
    MergeLate();
    return merged_;
  }

  uint64_t covered_ns() {
    uint64_t total = 0;
    for (const Interval& i : intervals()) total += i.end - i.begin;
    return total;
  }

 private:
  static constexpr size_t kMinLate = 4096;

  void MergeLate() {
    if (late_.empty()) return;
    auto by_begin = [](const Interval& a, const Interval& b) { return a.begin < b.begin; };
    std::sort(late_.begin(), late_.end(), by_begin);
    std::vector<Interval> out;
    out.reserve(merged_.size() + late_.size());
    auto take = [&out](const Interval& i) {
      if (out.empty() || i.begin > out.back().end) {
        out.push_back(i);
      } else {
        out.back().end = std::max(out.back().end, i.end);
      }
    };
    size_t a = 0, b = 0;
    while (a < merged_.size() || b < late_.size()) {
      if (b == late_.size() || (a < merged_.size() && merged_[a].begin <= late_[b].begin)) {
        take(merged_[a++]);
      } else {
        take(late_[b++]);
      }
    }
    merged_.swap(out);
    late_.clear();
  }

  std::vector<Interval> merged_;  // disjoint, sorted
  std::vector<Interval> late_;    // added before the end of merged_, not merged yet
};

}  // namespace gpuperf
