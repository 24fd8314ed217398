// The union of many time intervals, built incrementally (GPU busy time, NVTX windows).
// Intervals arrive roughly in time order (GPU activity records are out of order only
// across streams and buffers): those that extend the end, or land among the last few
// intervals, are merged at once; a later one is set aside and merged with the others in
// bulk (a sort and one pass), so that it does not shift the whole list, whatever the
// order of the records.
#pragma once

#include <algorithm>
#include <cstddef>
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
    // Most late ones (another stream's work) belong among the last few intervals: merged
    // there at once, in place.
    size_t i = merged_.size() - 1;  // merged_[i].begin > begin
    for (size_t steps = 0; i > 0 && merged_[i - 1].begin > begin; --i) {
      if (++steps == kLookBack) break;
    }
    if (i == 0 ? merged_.size() <= kLookBack : merged_[i - 1].begin <= begin) {
      MergeAt(i, begin, end);
      return;
    }
    // The others are merged in bulk once a quarter of the list is waiting: amortized
    // O(log n) each.
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
  static constexpr size_t kLookBack = 16;

  // Merges [begin, end] into merged_ where it goes: after merged_[i - 1] (when i > 0),
  // which begins no later, and before merged_[i], which begins later.
  void MergeAt(size_t i, uint64_t begin, uint64_t end) {
    size_t first = i;
    if (i > 0 && begin <= merged_[i - 1].end) {  // overlaps or touches the one before
      first = i - 1;
      begin = merged_[first].begin;
      end = std::max(end, merged_[first].end);
    }
    size_t last = i;  // one past the intervals it swallows
    while (last < merged_.size() && merged_[last].begin <= end) {
      end = std::max(end, merged_[last].end);
      ++last;
    }
    if (last == first) {
      merged_.insert(merged_.begin() + static_cast<std::ptrdiff_t>(first), {begin, end});
      return;
    }
    merged_[first] = {begin, end};
    merged_.erase(merged_.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                  merged_.begin() + static_cast<std::ptrdiff_t>(last));
  }

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
