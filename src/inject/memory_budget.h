// What the recorder may hold inside the target process at once: the CUPTI activity buffers
// it handed out and the translated batches waiting for the writer. A soft budget that grows
// (doubling) while the load needs it, up to a hard cap; past the cap, reservations fail and
// the caller drops and counts. Lock-free: CUPTI asks for buffers on launching threads.
//
// No globals, no CUPTI, no logging: the policy alone, so it is unit-tested
// (memory_budget_test.cc). recorder_memory.h wires it to the library's counters and log.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpuperf::inject {

class MemoryBudget {
 public:
  struct Reservation {
    bool granted = false;
    uint64_t grown_to = 0;  // > 0 when this reservation raised the budget (its new size)
    bool new_peak = false;  // the most held so far
  };

  // `hard` below `soft` lowers the soft budget to it.
  void Configure(uint64_t soft_bytes, uint64_t hard_bytes);

  Reservation Reserve(uint64_t bytes);
  void Release(uint64_t bytes);

  // More than half the soft budget is held: time to ask for buffers back early.
  bool UnderPressure() const { return held() > soft_ / 2; }

  uint64_t held() const { return held_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  uint64_t budget() const { return budget_.load(std::memory_order_relaxed); }
  uint64_t soft() const { return soft_; }
  uint64_t hard() const { return hard_; }
  uint64_t growths() const { return growths_.load(std::memory_order_relaxed); }

 private:
  uint64_t soft_ = 0;
  uint64_t hard_ = 0;
  std::atomic<uint64_t> held_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> budget_{0};  // soft_, doubled while the load needs more, <= hard_
  std::atomic<uint64_t> growths_{0};
};

}  // namespace gpuperf::inject
