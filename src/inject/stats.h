// The injection library's counters (include/gpuperf/stats.h): relaxed atomics any
// thread may bump; the writer thread snapshots them into StatRecords.
#pragma once

#include <atomic>
#include <cstdint>

#include "gpuperf/stats.h"

namespace gpuperf::inject {

extern std::atomic<uint64_t> g_stats[kStatSlots];

inline void CountStat(StatId id, uint64_t n = 1) {
  g_stats[static_cast<uint32_t>(id)].fetch_add(n, std::memory_order_relaxed);
}
inline void SetStat(StatId id, uint64_t value) {
  g_stats[static_cast<uint32_t>(id)].store(value, std::memory_order_relaxed);
}
inline uint64_t GetStat(StatId id) {
  return g_stats[static_cast<uint32_t>(id)].load(std::memory_order_relaxed);
}

}  // namespace gpuperf::inject
