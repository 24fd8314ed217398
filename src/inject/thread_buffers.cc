#include "inject/thread_buffers.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>
#include <type_traits>

#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

std::atomic<ThreadBuffers*> g_threads{nullptr};
// Threads the writer has already reported (writer thread only).
ThreadBuffers* g_reported_until = nullptr;

template <typename Record>
std::atomic<RecordChunk<Record>*> g_full{nullptr};

template <typename Record>
void PushFull(RecordChunk<Record>* chunk) {
  RecordChunk<Record>* head = g_full<Record>.load(std::memory_order_relaxed);
  do {
    chunk->next_full = head;
  } while (!g_full<Record>.compare_exchange_weak(head, chunk, std::memory_order_release,
                                                 std::memory_order_relaxed));
}

template <typename Record>
std::atomic<RecordChunk<Record>*>& SpareOf(ThreadBuffers& thread) {
  if constexpr (std::is_same_v<Record, LaunchLinkRecord>) {
    return thread.spare_links;
  } else {
    return thread.spare_api_calls;
  }
}

template <typename Record>
RecordChunk<Record>* FreshChunk(ThreadBuffers& thread) {
  RecordChunk<Record>* chunk = SpareOf<Record>(thread).exchange(nullptr, std::memory_order_acquire);
  if (chunk != nullptr) {
    chunk->committed.store(0, std::memory_order_relaxed);
    chunk->drained = 0;
    chunk->next_full = nullptr;
    return chunk;
  }
  chunk = new (std::nothrow) RecordChunk<Record>();
  if (chunk != nullptr) chunk->owner = &thread;
  return chunk;
}

template <typename Record>
bool Append(ThreadBuffers& thread, std::atomic<RecordChunk<Record>*>& current, const Record& record,
            StatId drop_stat) {
  RecordChunk<Record>* chunk = current.load(std::memory_order_relaxed);
  if (chunk == nullptr || chunk->committed.load(std::memory_order_relaxed) == kRecordsPerChunk) {
    RecordChunk<Record>* fresh = FreshChunk<Record>(thread);
    if (fresh == nullptr) {
      CountStat(drop_stat);
      return false;
    }
    current.store(fresh, std::memory_order_release);
    if (chunk != nullptr) PushFull(chunk);  // the writer frees it once drained
    chunk = fresh;
  }
  const uint32_t index = chunk->committed.load(std::memory_order_relaxed);
  chunk->records[index] = record;
  chunk->committed.store(index + 1, std::memory_order_release);
  return true;
}

template <typename Record>
void DrainChunk(RecordChunk<Record>* chunk, std::vector<Record>& out) {
  const uint32_t committed = chunk->committed.load(std::memory_order_acquire);
  for (uint32_t i = chunk->drained; i < committed; ++i) out.push_back(chunk->records[i]);
  chunk->drained = committed;
}

// Full chunks first, oldest first: they were retired before the threads' current ones began.
template <typename Record>
void DrainFull(std::vector<Record>& out) {
  RecordChunk<Record>* full = g_full<Record>.exchange(nullptr, std::memory_order_acquire);
  std::vector<RecordChunk<Record>*> retired;
  for (; full != nullptr; full = full->next_full) retired.push_back(full);
  for (auto it = retired.rbegin(); it != retired.rend(); ++it) {
    RecordChunk<Record>* chunk = *it;
    DrainChunk(chunk, out);
    RecordChunk<Record>* empty = nullptr;
    ThreadBuffers* owner = chunk->owner;
    if (owner == nullptr || owner->exited.load(std::memory_order_relaxed) ||
        !SpareOf<Record>(*owner).compare_exchange_strong(empty, chunk, std::memory_order_release)) {
      delete chunk;  // the thread has a spare already
    }
  }
}

}  // namespace

ThreadBuffers& CurrentThreadBuffers() {
  // Never freed: the writer may still drain a thread's buffers after the thread exits.
  static thread_local ThreadBuffers* self = nullptr;
  if (self != nullptr) return *self;
  self = new (std::nothrow) ThreadBuffers();
  if (self == nullptr) {
    static ThreadBuffers fallback;  // out of memory: share one (records may be dropped)
    return fallback;
  }
  // Marks the thread's end, so the writer stops handing it spare chunks.
  struct ExitMark {
    ThreadBuffers* buffers;
    ~ExitMark() { buffers->exited.store(true, std::memory_order_relaxed); }
  };
  static thread_local ExitMark exit_mark{self};
  self->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  prctl(PR_GET_NAME, self->name, 0, 0, 0);
  ThreadBuffers* head = g_threads.load(std::memory_order_relaxed);
  do {
    self->next = head;
  } while (!g_threads.compare_exchange_weak(head, self, std::memory_order_release,
                                            std::memory_order_relaxed));
  return *self;
}

bool AppendLink(ThreadBuffers& thread, const LaunchLinkRecord& link) {
  return Append(thread, thread.links, link, StatId::launch_links_dropped);
}

bool AppendApiCall(ThreadBuffers& thread, const ApiRecord& call) {
  return Append(thread, thread.api_calls, call, StatId::api_calls_dropped);
}

void ThreadStatTotals(uint64_t (&totals)[kThreadStatCount]) {
  for (uint64_t& total : totals) total = 0;
  for (ThreadBuffers* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    for (size_t i = 0; i < kThreadStatCount; ++i) {
      totals[i] += t->stats[i].load(std::memory_order_relaxed);
    }
  }
}

void DrainThreadBuffers(std::vector<LaunchLinkRecord>& links, std::vector<ApiRecord>& api_calls,
                        std::vector<ThreadRecord>* new_threads, uint32_t pid, NameTable& names) {
  DrainFull(links);
  DrainFull(api_calls);
  ThreadBuffers* head = g_threads.load(std::memory_order_acquire);
  for (ThreadBuffers* t = head; t != nullptr; t = t->next) {
    if (auto* chunk = t->links.load(std::memory_order_acquire)) DrainChunk(chunk, links);
    if (auto* chunk = t->api_calls.load(std::memory_order_acquire)) DrainChunk(chunk, api_calls);
  }
  if (new_threads != nullptr) {
    for (ThreadBuffers* t = head; t != nullptr && t != g_reported_until; t = t->next) {
      new_threads->push_back(ThreadRecord{pid, t->tid, names.Intern(t->name)});
    }
    g_reported_until = head;
  }
}

}  // namespace gpuperf::inject
