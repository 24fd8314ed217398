#include "analyze/ranks/nccl_join.h"

#include <algorithm>
#include <map>

namespace gpuperf {

std::vector<size_t> JoinNcclCalls(std::span<const NcclCall> calls,
                                  std::span<const NcclLaunch> launches) {
  // Per thread, its launches by entry time: (api_ns, index).
  std::map<uint32_t, std::vector<std::pair<uint64_t, size_t>>> by_thread;
  for (size_t i = 0; i < launches.size(); ++i) {
    by_thread[launches[i].tid].emplace_back(launches[i].api_ns, i);
  }
  for (auto& [tid, list] : by_thread) std::sort(list.begin(), list.end());
  std::vector<size_t> joined(calls.size(), kNotJoined);
  for (size_t i = 0; i < calls.size(); ++i) {
    auto it = by_thread.find(calls[i].tid);
    if (it == by_thread.end()) continue;
    const auto& list = it->second;
    // The last launch that entered at or before the event's start.
    auto after =
        std::upper_bound(list.begin(), list.end(), std::make_pair(calls[i].start_ns, SIZE_MAX));
    if (after == list.begin()) continue;
    const auto& [api_ns, index] = *std::prev(after);
    if (calls[i].start_ns - api_ns <= kMaxLaunchToEventNs) joined[i] = index;
  }
  return joined;
}

uint64_t NcclCollectiveBytes(std::string_view func, uint64_t count, uint32_t type_size,
                             int32_t nranks) {
  const uint64_t bytes = count * type_size;
  if ((func == "AllGather" || func == "ReduceScatter") && nranks > 0) {
    return bytes * static_cast<uint64_t>(nranks);
  }
  return bytes;
}

double NcclBusFactor(std::string_view func, int32_t nranks) {
  if (nranks <= 0) return 1;
  const double n = nranks;
  if (func == "AllReduce") return 2 * (n - 1) / n;
  if (func == "AllGather" || func == "ReduceScatter" || func == "AlltoAll") return (n - 1) / n;
  return 1;
}

}  // namespace gpuperf
