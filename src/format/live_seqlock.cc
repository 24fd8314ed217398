#include "format/live_seqlock.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

namespace gpuperf::live {
namespace {

enum class Attempt { kStable, kMoved, kFailed };

// Calls `attempt` up to `tries` times until it says the copy is stable, pausing between
// tries after the first few.
template <class AttemptFn>
BlockRead Retry(int tries, AttemptFn attempt) {
  for (int i = 0; i < tries; ++i) {
    if (i >= 4) {
      // The writer holds a block for microseconds; a longer wait means it was descheduled:
      // let it run rather than spin.
      timespec pause{0, 500 * 1000};
      nanosleep(&pause, nullptr);
    } else if (i > 0) {
      sched_yield();
    }
    switch (attempt()) {
      case Attempt::kStable:
        return BlockRead::kOk;
      case Attempt::kFailed:
        return BlockRead::kShort;
      case Attempt::kMoved:
        break;
    }
  }
  return BlockRead::kBusy;
}

}  // namespace

bool ReadExactly(int fd, void* out, size_t bytes, uint64_t offset) {
  char* to = static_cast<char*>(out);
  while (bytes > 0) {
    const ssize_t n = pread(fd, to, bytes, static_cast<off_t>(offset));
    if (n <= 0) return false;  // the file shrank under us (or an error)
    to += n;
    bytes -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

bool SeqlockReadBytes(const Seqlock& lock, const void* data, void* out, size_t bytes, int tries) {
  return Retry(tries, [&] {
           const uint32_t before = lock.sequence.load(std::memory_order_acquire);
           if (before & 1u) return Attempt::kMoved;
           std::memcpy(out, data, bytes);
           std::atomic_thread_fence(std::memory_order_acquire);
           return lock.sequence.load(std::memory_order_relaxed) == before ? Attempt::kStable
                                                                          : Attempt::kMoved;
         }) == BlockRead::kOk;
}

BlockRead SeqlockReadFileBytes(int fd, uint64_t sequence_offset, uint64_t data_offset, void* out,
                               size_t bytes, int tries) {
  return Retry(tries, [&] {
    // Each pread is a plain copy out of the shared page cache: the fences order them as the
    // loads of the in-memory read are ordered.
    uint32_t before = 0, after = 0;
    if (!ReadExactly(fd, &before, sizeof(before), sequence_offset)) return Attempt::kFailed;
    if (before & 1u) return Attempt::kMoved;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!ReadExactly(fd, out, bytes, data_offset)) return Attempt::kFailed;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (!ReadExactly(fd, &after, sizeof(after), sequence_offset)) return Attempt::kFailed;
    return after == before ? Attempt::kStable : Attempt::kMoved;
  });
}

}  // namespace gpuperf::live
