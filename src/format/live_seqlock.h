// Seqlocked copies into and out of a live page block (live_page.h). The writer never waits;
// a reader retries a bounded number of times and then gives up, so a writer that died (or
// was stopped) inside a block can never block it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>

#include "format/live_page.h"

namespace gpuperf::live {

// The one writer: the block is odd while `value` is copied in.
template <class T>
void SeqlockWrite(Block<T>& block, const T& value) {
  const uint32_t sequence = block.lock.sequence.load(std::memory_order_relaxed);
  block.lock.sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(static_cast<void*>(&block.data), &value, sizeof(T));
  block.lock.sequence.store(sequence + 2, std::memory_order_release);
}

// Copies the block into `out` and returns true when the copy is of one stable version.
// Tries `tries` times, pausing between tries after the first few; false means the writer
// was inside the block every time (busy, stopped, or dead mid-write).
bool SeqlockReadBytes(const Seqlock& lock, const void* data, void* out, size_t bytes, int tries);

template <class T>
bool SeqlockRead(const Block<T>& block, T& out, int tries) {
  return SeqlockReadBytes(block.lock, &block.data, &out, sizeof(T), tries);
}

enum class BlockRead {
  kOk,
  kBusy,   // mid-write through every try
  kShort,  // the file ended before the block (truncated under the reader), or a read error
};

// The same copy from a page file read with pread rather than mapped: a file that another
// user can truncate must not be mapped (touching a mapping past the file's end is SIGBUS).
// The block's counter is at `sequence_offset`, its data at `data_offset`.
BlockRead SeqlockReadFileBytes(int fd, uint64_t sequence_offset, uint64_t data_offset, void* out,
                               size_t bytes, int tries);

// `bytes` bytes of `fd` at `offset` with pread; false when the file ends first.
bool ReadExactly(int fd, void* out, size_t bytes, uint64_t offset);

// Block `T` of a page file, the block at `block_offset` (offsetof(Page, ...)).
template <class T>
BlockRead SeqlockReadFile(int fd, size_t block_offset, T& out, int tries) {
  return SeqlockReadFileBytes(fd, block_offset + offsetof(Block<T>, lock),
                              block_offset + offsetof(Block<T>, data), &out, sizeof(T), tries);
}

// Enough to outlast a writer descheduled inside a block on a busy machine (~20 ms).
inline constexpr int kDefaultReadTries = 40;

}  // namespace gpuperf::live
