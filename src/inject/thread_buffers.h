// What app threads record inside CUPTI callbacks (launch links: correlation id -> stack;
// API calls), appended without locks or syscalls. Each thread fills its own chunks, one
// chain per record type; a full chunk is pushed onto a lock-free list for the writer thread,
// which also drains the partly filled chunks of live threads at every flush (it reads up to
// a published count, never past it). A drained full chunk goes back to its thread as the
// spare (one per record type), so a launching thread does not allocate and fault in a new
// 128-192 KiB chunk every 4096 records, and the writer does not unmap one (which interrupts
// every core the process runs on).
//
// Threads come and go: a thread's first chunks are small (kFirstChunkRecords), and once a
// thread has exited (a pthread key destructor marks it; the thread never waits) the writer
// drains what it left, adds its counters to a retired total and frees its chunks and entry,
// so a program that starts and ends thousands of launching threads stays bounded.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"
#include "inject/stats.h"

namespace gpuperf::inject {

inline constexpr uint32_t kRecordsPerChunk = 4096;
inline constexpr uint32_t kFirstChunkRecords = 256;

struct ThreadBuffers;

// A header followed by `capacity` records in the same allocation (NewChunk/FreeChunk). The
// records are not zeroed: only the pages a thread writes are ever touched.
template <typename Record>
struct RecordChunk {
  std::atomic<uint32_t> committed{0};  // written by the owning app thread
  uint32_t capacity = 0;
  uint32_t drained = 0;              // the writer's; reset by the owner when it reuses the chunk
  RecordChunk* next_full = nullptr;  // link in the full list
  ThreadBuffers* owner = nullptr;    // whose spare it becomes once drained

  Record* records() { return reinterpret_cast<Record*>(this + 1); }
};

// Counters bumped on every launch. Each thread keeps its own (a shared atomic would cost a
// locked instruction per launch and bounce its cache line between launching threads); the
// writer adds them up (ThreadStatTotals).
enum ThreadStat : size_t {
  kCallbacks,
  kCallbackNs,
  kStacksUnwound,
  kApiCalls,
  kTableStacks,
  kLaunchesUnsampled,
  kMemoStacks,
  kThreadStatCount
};
// The trace's stat of each ThreadStat.
inline constexpr StatId kThreadStats[kThreadStatCount] = {
    StatId::callbacks,      StatId::callback_ns,
    StatId::stacks_unwound, StatId::api_calls_from_callbacks,
    StatId::table_stacks,   StatId::launch_stacks_unsampled,
    StatId::stack_memo_hits};

struct ThreadBuffers {
  std::atomic<RecordChunk<LaunchLinkRecord>*> links{nullptr};
  std::atomic<uint64_t> stats[kThreadStatCount] = {};  // written by the owning thread only
  std::atomic<RecordChunk<ApiRecord>*> api_calls{nullptr};
  // Drained chunks handed back by the writer (single producer, single consumer).
  std::atomic<RecordChunk<LaunchLinkRecord>*> spare_links{nullptr};
  std::atomic<RecordChunk<ApiRecord>*> spare_api_calls{nullptr};
  // When CUPTI last asked this thread for an activity buffer: the thread's kCallbacks then,
  // and how many linked calls' records that buffer holds at most (0: never asked here).
  std::atomic<uint64_t> calls_at_buffer{0};
  std::atomic<uint64_t> buffer_room_calls{0};
  std::atomic<bool> exited{false};  // the thread ended: the writer frees this entry
  ThreadBuffers* next = nullptr;    // registry of live threads; only the writer unlinks
  bool reported = false;            // the writer wrote its ThreadRecord
  uint32_t tid = 0;
  char name[16] = {};
};

// The calling thread's buffers, registered on first use.
ThreadBuffers& CurrentThreadBuffers();

// Called (from the exiting thread, which must not wait) after every kExitsPerHook thread
// exits, so the writer can free what they left without waiting for its period.
inline constexpr uint32_t kExitsPerHook = 64;
void SetThreadExitHook(void (*hook)());

// Adds to the calling thread's counter: no locked instruction.
inline void CountThreadStat(ThreadBuffers& thread, ThreadStat stat, uint64_t n = 1) {
  std::atomic<uint64_t>& counter = thread.stats[stat];
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

// The calling thread's buffers if it has recorded anything, else nullptr (CUPTI's own
// threads never get an entry).
ThreadBuffers* CurrentThreadBuffersIfAny();

// Writer thread: whether a live thread made more linked calls since CUPTI last asked it for
// an activity buffer than that buffer can hold records for.
bool AnyThreadOutranItsBuffer();

// Writer thread: the sums of every thread's counters (exited ones included), in
// kThreadStats order.
void ThreadStatTotals(uint64_t (&totals)[kThreadStatCount]);

// Append one record for the calling thread. Return false (and count the drop) only if a
// new chunk could not be allocated.
bool AppendLink(ThreadBuffers& thread, const LaunchLinkRecord& link);
bool AppendApiCall(ThreadBuffers& thread, const ApiRecord& call);

// Writer thread: moves every record not yet drained into `links` and `api_calls`, and the
// threads that recorded something since the last call into `new_threads` (each thread
// once, name interned); then frees the threads that had exited before the call began.
void DrainThreadBuffers(std::vector<LaunchLinkRecord>& links, std::vector<ApiRecord>& api_calls,
                        std::vector<ThreadRecord>* new_threads, uint32_t pid, NameTable& names);

// Bytes of record chunks allocated now, over all threads (for tests and the trace's stats).
uint64_t ThreadBufferBytes();

// A new trace begins (an attach window) while no callback records: every live thread is
// reported to it again, and the threads' counters start from zero.
void RestartThreadReports();

}  // namespace gpuperf::inject
