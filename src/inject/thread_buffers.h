// What app threads record inside CUPTI callbacks (launch links: correlation id -> stack;
// API calls), appended without locks or syscalls. Each thread fills its own fixed-size
// chunks, one chain per record type; a full chunk is pushed onto a lock-free list for the
// writer thread, which also drains the partly filled chunks of live threads at every flush
// (it reads up to a published count, never past it). A drained full chunk goes back to its
// thread as the spare (one per record type), so a launching thread does not allocate, zero
// and fault in a new 160-200 KiB chunk every 4096 records, and the writer does not unmap
// one (which interrupts every core the process runs on).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"
#include "inject/stats.h"

namespace gpuperf::inject {

inline constexpr uint32_t kRecordsPerChunk = 4096;

struct ThreadBuffers;

template <typename Record>
struct RecordChunk {
  Record records[kRecordsPerChunk];
  std::atomic<uint32_t> committed{0};  // written by the owning app thread
  uint32_t drained = 0;                // the writer's; reset by the owner when it reuses the chunk
  RecordChunk* next_full = nullptr;    // link in the full list
  ThreadBuffers* owner = nullptr;      // whose spare it becomes once drained
};

// Counters bumped on every launch. Each thread keeps its own (a shared atomic would cost a
// locked instruction per launch and bounce its cache line between launching threads); the
// writer adds them up (ThreadStatTotals).
enum ThreadStat : size_t { kCallbacks, kCallbackNs, kStacksUnwound, kApiCalls, kThreadStatCount };
// The trace's stat of each ThreadStat.
inline constexpr StatId kThreadStats[kThreadStatCount] = {StatId::callbacks, StatId::callback_ns,
                                                          StatId::stacks_unwound,
                                                          StatId::api_calls_from_callbacks};

struct ThreadBuffers {
  std::atomic<RecordChunk<LaunchLinkRecord>*> links{nullptr};
  std::atomic<uint64_t> stats[kThreadStatCount] = {};  // written by the owning thread only
  std::atomic<RecordChunk<ApiRecord>*> api_calls{nullptr};
  // Drained chunks handed back by the writer (single producer, single consumer).
  std::atomic<RecordChunk<LaunchLinkRecord>*> spare_links{nullptr};
  std::atomic<RecordChunk<ApiRecord>*> spare_api_calls{nullptr};
  std::atomic<bool> exited{false};  // the thread ended: no spare chunks for it
  ThreadBuffers* next = nullptr;    // registry of all threads, never unlinked
  uint32_t tid = 0;
  char name[16] = {};
};

// The calling thread's buffers, registered on first use.
ThreadBuffers& CurrentThreadBuffers();

// Adds to the calling thread's counter: no locked instruction.
inline void CountThreadStat(ThreadBuffers& thread, ThreadStat stat, uint64_t n = 1) {
  std::atomic<uint64_t>& counter = thread.stats[stat];
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// Writer thread: the sums of every thread's counters, in kThreadStats order.
void ThreadStatTotals(uint64_t (&totals)[kThreadStatCount]);

// Append one record for the calling thread. Return false (and count the drop) only if a
// new chunk could not be allocated.
bool AppendLink(ThreadBuffers& thread, const LaunchLinkRecord& link);
bool AppendApiCall(ThreadBuffers& thread, const ApiRecord& call);

// Writer thread: moves every record not yet drained into `links` and `api_calls`, and the
// threads that recorded something since the last call into `new_threads` (each thread
// once, name interned).
void DrainThreadBuffers(std::vector<LaunchLinkRecord>& links, std::vector<ApiRecord>& api_calls,
                        std::vector<ThreadRecord>* new_threads, uint32_t pid, NameTable& names);

}  // namespace gpuperf::inject
