// The order in which the timeline takes a batch of records: grouped (by stream, by thread,
// by device), groups in ascending key order, and in time order within a group. Returned
// as indices into the batch, so records are neither copied nor moved.
//
// Records of one group nearly always arrive in time order already (a stream's kernels
// complete in the order they start; a thread's calls end in order, except calls nested
// in others), so the work is one pass to group them and a check per group; only a group
// out of order is sorted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <span>
#include <vector>

namespace gpuperf {

// `group_of(record)` gives a comparable key; `before(a, b)` orders two records of one
// group. Ties keep the batch's order.
template <class Record, class GroupOf, class Before>
void OrderByGroup(std::span<const Record> records, GroupOf group_of, Before before,
                  std::vector<uint32_t>& order) {
  using Key = decltype(group_of(records[0]));
  order.resize(records.size());
  if (records.empty()) return;
  // Each record's group, as an index into `keys` (in order of first sight).
  std::vector<Key> keys;
  std::map<Key, uint32_t> many;  // used once there are too many groups to scan
  std::vector<uint32_t> group(records.size());
  uint32_t last = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const Key key = group_of(records[i]);
    if (keys.empty() || !(keys[last] == key)) {
      if (!many.empty()) {
        auto [it, inserted] = many.try_emplace(key, static_cast<uint32_t>(keys.size()));
        if (inserted) keys.push_back(key);
        last = it->second;
      } else {
        auto found = std::find(keys.begin(), keys.end(), key);
        last = static_cast<uint32_t>(found - keys.begin());
        if (found == keys.end()) keys.push_back(key);
        if (keys.size() > 64) {
          for (uint32_t k = 0; k < keys.size(); ++k) many.emplace(keys[k], k);
        }
      }
    }
    group[i] = last;
  }
  // Groups in key order, records by group (counting sort: stable), then each group in
  // time order.
  std::vector<uint32_t> by_key(keys.size());
  std::iota(by_key.begin(), by_key.end(), 0);
  std::sort(by_key.begin(), by_key.end(),
            [&keys](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  std::vector<uint32_t> rank(keys.size()), start(keys.size() + 1, 0);
  for (uint32_t r = 0; r < by_key.size(); ++r) rank[by_key[r]] = r;
  for (uint32_t g : group) ++start[rank[g] + 1];
  for (size_t r = 1; r < start.size(); ++r) start[r] += start[r - 1];
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (uint32_t i = 0; i < records.size(); ++i) order[next[rank[group[i]]]++] = i;
  auto by_time = [&](uint32_t a, uint32_t b) { return before(records[a], records[b]); };
  for (size_t r = 0; r + 1 < start.size(); ++r) {
    auto first = order.begin() + start[r], end = order.begin() + start[r + 1];
    if (!std::is_sorted(first, end, by_time)) std::stable_sort(first, end, by_time);
  }
}

// Calls `visit(record)` for the records of `order`, fetching the ones a few steps ahead
// into the cache: grouped records are spread over the batch, and a batch is megabytes.
template <class Record, class Visit>
void VisitInOrder(std::span<const Record> records, const std::vector<uint32_t>& order,
                  Visit visit) {
  constexpr size_t kAhead = 8;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k + kAhead < order.size()) __builtin_prefetch(&records[order[k + kAhead]]);
    visit(records[order[k]]);
  }
}

}  // namespace gpuperf
