#include "inject/memory_budget.h"

#include <algorithm>

namespace gpuperf::inject {

void MemoryBudget::Configure(uint64_t soft_bytes, uint64_t hard_bytes) {
  hard_ = hard_bytes;
  soft_ = std::min(soft_bytes, hard_bytes);
  budget_.store(soft_, std::memory_order_relaxed);
}

MemoryBudget::Reservation MemoryBudget::Reserve(uint64_t bytes) {
  Reservation result;
  uint64_t held = held_.load(std::memory_order_relaxed);
  do {
    if (bytes > hard_ || held > hard_ - bytes) return result;
  } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  result.granted = true;
  const uint64_t now_held = held + bytes;

  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now_held > peak) {
    if (peak_.compare_exchange_weak(peak, now_held, std::memory_order_relaxed)) {
      result.new_peak = true;
      break;
    }
  }
  // Doubling keeps the growth events few (at most log2(hard / soft)), so each one can be
  // counted and the first one announced.
  uint64_t budget = budget_.load(std::memory_order_relaxed);
  while (now_held > budget) {
    uint64_t grown = budget;
    while (grown < now_held && grown < hard_)
      grown = std::min(hard_, std::max<uint64_t>(grown, 1) * 2);
    if (budget_.compare_exchange_weak(budget, grown, std::memory_order_relaxed)) {
      growths_.fetch_add(1, std::memory_order_relaxed);
      result.grown_to = grown;
      break;
    }
  }
  return result;
}

void MemoryBudget::Release(uint64_t bytes) {
  held_.fetch_sub(bytes, std::memory_order_relaxed);
}

}  // namespace gpuperf::inject
