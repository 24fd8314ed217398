// Launch links (correlation id -> stack) appended by app threads without locks or
// syscalls. Each thread fills its own fixed-size buffer; a full buffer is pushed onto a
// lock-free list for the writer thread, which also drains the partly filled buffers of
// live threads at every flush (it reads up to a published count, never past it).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"

namespace gpuperf::inject {

inline constexpr uint32_t kLinksPerBuffer = 4096;

struct LinkBuffer {
  LaunchLinkRecord links[kLinksPerBuffer];
  std::atomic<uint32_t> committed{0};  // written by the owning app thread
  uint32_t drained = 0;                // read and written by the writer thread only
  LinkBuffer* next_full = nullptr;     // link in the full list
};

struct ThreadLinks {
  std::atomic<LinkBuffer*> current{nullptr};
  ThreadLinks* next = nullptr;  // registry of all threads, never unlinked
  uint32_t tid = 0;
  char name[16] = {};
};

// The calling thread's state, registered on first use.
ThreadLinks& CurrentThreadLinks();

// Appends one link for the calling thread. Returns false (and counts the drop) only if
// a new buffer could not be allocated.
bool AppendLink(ThreadLinks& thread, const LaunchLinkRecord& link);

// Writer thread: moves every link not yet drained into `out`, and threads that launched
// work since the last call into `new_threads` (each thread once, name interned).
void DrainLinks(std::vector<LaunchLinkRecord>& out, std::vector<ThreadRecord>* new_threads,
                uint32_t pid, NameTable& names);

}  // namespace gpuperf::inject
