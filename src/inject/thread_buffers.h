// What app threads record inside CUPTI callbacks (launch links: correlation id -> stack;
// API calls), appended without locks or syscalls. Each thread fills its own fixed-size
// chunks, one chain per record type; a full chunk is pushed onto a lock-free list for the
// writer thread, which also drains the partly filled chunks of live threads at every flush
// (it reads up to a published count, never past it).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"

namespace gpuperf::inject {

inline constexpr uint32_t kRecordsPerChunk = 4096;

template <typename Record>
struct RecordChunk {
  Record records[kRecordsPerChunk];
  std::atomic<uint32_t> committed{0};  // written by the owning app thread
  uint32_t drained = 0;                // read and written by the writer thread only
  RecordChunk* next_full = nullptr;    // link in the full list
};

struct ThreadBuffers {
  std::atomic<RecordChunk<LaunchLinkRecord>*> links{nullptr};
  std::atomic<RecordChunk<ApiRecord>*> api_calls{nullptr};
  ThreadBuffers* next = nullptr;  // registry of all threads, never unlinked
  uint32_t tid = 0;
  char name[16] = {};
};

// The calling thread's buffers, registered on first use.
ThreadBuffers& CurrentThreadBuffers();

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
