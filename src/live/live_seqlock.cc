#include "live/live_seqlock.h"

#include <sched.h>
#include <time.h>

namespace gpuperf::live {

bool SeqlockReadBytes(const Seqlock& lock, const void* data, void* out, size_t bytes, int tries) {
  for (int attempt = 0; attempt < tries; ++attempt) {
    if (attempt >= 4) {
      // The writer holds a block for microseconds; a longer wait means it was descheduled:
      // let it run rather than spin.
      timespec pause{0, 500 * 1000};
      nanosleep(&pause, nullptr);
    } else if (attempt > 0) {
      sched_yield();
    }
    const uint32_t before = lock.sequence.load(std::memory_order_acquire);
    if (before & 1u) continue;
    std::memcpy(out, data, bytes);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (lock.sequence.load(std::memory_order_relaxed) == before) return true;
  }
  return false;
}

}  // namespace gpuperf::live
