#include "inject/recorder_memory.h"

#include "inject/log.h"
#include "inject/memory_budget.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

MemoryBudget g_budget;

uint64_t MiB(uint64_t bytes) {
  return bytes >> 20;
}

// Two threads may set a new peak at once: the counter keeps the larger.
void RaiseStat(StatId id, uint64_t value) {
  std::atomic<uint64_t>& stat = g_stats[static_cast<uint32_t>(id)];
  uint64_t current = stat.load(std::memory_order_relaxed);
  while (value > current && !stat.compare_exchange_weak(current, value)) {
  }
}

}  // namespace

void ConfigureRecorderMemory(const Config& config) {
  g_budget.Configure(config.soft_memory_bytes, config.max_memory_bytes);
}

bool ReserveRecorderMemory(uint64_t bytes) {
  const MemoryBudget::Reservation r = g_budget.Reserve(bytes);
  if (!r.granted) {
    CountStat(StatId::memory_cap_refusals);
    LogOnce(
        "recording memory reached its cap of %llu MiB: CUPTI drops records (counted in the "
        "trace); raise it with gpuperf record --max-memory MIB",
        static_cast<unsigned long long>(MiB(g_budget.hard())));
    return false;
  }
  if (r.new_peak) RaiseStat(StatId::memory_peak_bytes, g_budget.peak());
  if (r.grown_to != 0) {
    CountStat(StatId::memory_budget_grown);
    LogOnce(
        "recording at a high rate: memory budget raised past %llu MiB to keep every record "
        "(cap %llu MiB, --max-memory)",
        static_cast<unsigned long long>(MiB(g_budget.soft())),
        static_cast<unsigned long long>(MiB(g_budget.hard())));
  }
  return true;
}

void ReleaseRecorderMemory(uint64_t bytes) {
  g_budget.Release(bytes);
}

bool RecorderMemoryUnderPressure() {
  return g_budget.UnderPressure();
}

uint64_t RecorderMemoryHeld() {
  return g_budget.held();
}

}  // namespace gpuperf::inject
