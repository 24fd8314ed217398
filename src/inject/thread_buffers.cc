#include "inject/thread_buffers.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>
#include <type_traits>

#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

// Pushed by app threads (CAS on the head); unlinked and freed only by the writer thread, the
// only one that walks the list.
std::atomic<ThreadBuffers*> g_threads{nullptr};
// Counters of freed threads (writer thread only), so the totals never go down.
uint64_t g_retired_stats[kThreadStatCount] = {};
std::atomic<uint64_t> g_chunk_bytes{0};
std::atomic<uint64_t> g_exits{0};
std::atomic<void (*)()> g_exit_hook{nullptr};

// The calling thread's entry. A trivially destructible thread_local, so it is still readable
// while the key destructor below runs at thread exit.
thread_local ThreadBuffers* t_self = nullptr;

template <typename Record>
std::atomic<RecordChunk<Record>*> g_full{nullptr};

template <typename Record>
RecordChunk<Record>* NewChunk(ThreadBuffers& owner, uint32_t capacity) {
  const size_t bytes = sizeof(RecordChunk<Record>) + size_t{capacity} * sizeof(Record);
  void* memory = ::operator new(bytes, std::nothrow);
  if (memory == nullptr) return nullptr;
  auto* chunk = new (memory) RecordChunk<Record>();
  chunk->capacity = capacity;
  chunk->owner = &owner;
  g_chunk_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return chunk;
}

template <typename Record>
void FreeChunk(RecordChunk<Record>* chunk) {
  if (chunk == nullptr) return;
  g_chunk_bytes.fetch_sub(sizeof(RecordChunk<Record>) + size_t{chunk->capacity} * sizeof(Record),
                          std::memory_order_relaxed);
  chunk->~RecordChunk<Record>();
  ::operator delete(chunk);
}

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
std::atomic<RecordChunk<Record>*>& CurrentOf(ThreadBuffers& thread) {
  if constexpr (std::is_same_v<Record, LaunchLinkRecord>) {
    return thread.links;
  } else {
    return thread.api_calls;
  }
}

// A thread's first chunk is small: most threads that launch at all launch a few times and
// end (thread pools, data loaders); one that keeps launching moves on to full chunks.
template <typename Record>
RecordChunk<Record>* FreshChunk(ThreadBuffers& thread, bool first) {
  RecordChunk<Record>* chunk = SpareOf<Record>(thread).exchange(nullptr, std::memory_order_acquire);
  if (chunk != nullptr) {
    chunk->committed.store(0, std::memory_order_relaxed);
    chunk->drained = 0;
    chunk->next_full = nullptr;
    return chunk;
  }
  return NewChunk<Record>(thread, first ? kFirstChunkRecords : kRecordsPerChunk);
}

template <typename Record>
bool Append(ThreadBuffers& thread, std::atomic<RecordChunk<Record>*>& current, const Record& record,
            StatId drop_stat) {
  RecordChunk<Record>* chunk = current.load(std::memory_order_relaxed);
  if (chunk == nullptr || chunk->committed.load(std::memory_order_relaxed) == chunk->capacity) {
    RecordChunk<Record>* fresh = FreshChunk<Record>(thread, chunk == nullptr);
    if (fresh == nullptr) {
      CountStat(drop_stat);
      return false;
    }
    current.store(fresh, std::memory_order_release);
    if (chunk != nullptr) PushFull(chunk);  // the writer frees it or hands it back once drained
    chunk = fresh;
  }
  const uint32_t index = chunk->committed.load(std::memory_order_relaxed);
  new (&chunk->records()[index]) Record(record);
  chunk->committed.store(index + 1, std::memory_order_release);
  return true;
}

template <typename Record>
void DrainChunk(RecordChunk<Record>* chunk, std::vector<Record>& out) {
  const uint32_t committed = chunk->committed.load(std::memory_order_acquire);
  out.insert(out.end(), chunk->records() + chunk->drained, chunk->records() + committed);
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
    // Only full-size chunks are worth keeping; a thread that has exited gets none.
    if (chunk->capacity != kRecordsPerChunk || owner->exited.load(std::memory_order_relaxed) ||
        !SpareOf<Record>(*owner).compare_exchange_strong(empty, chunk, std::memory_order_release)) {
      FreeChunk(chunk);
    }
  }
}

template <typename Record>
void FreeThreadChunks(ThreadBuffers& thread) {
  FreeChunk(CurrentOf<Record>(thread).exchange(nullptr, std::memory_order_acquire));
  FreeChunk(SpareOf<Record>(thread).exchange(nullptr, std::memory_order_acquire));
}

// The key's destructor runs on the exiting thread after its C++ thread_local destructors,
// so CUDA calls made from those are still recorded into this entry. It only marks the
// entry: the writer frees it. A CUDA call made later still (another key's destructor)
// finds t_self cleared and registers a fresh entry, which sets the key again, and glibc
// calls this destructor once more for it.
void OnThreadExit(void* entry) {
  auto* self = static_cast<ThreadBuffers*>(entry);
  if (t_self == self) t_self = nullptr;
  self->exited.store(true, std::memory_order_release);
  if (g_exits.fetch_add(1, std::memory_order_relaxed) % kExitsPerHook == kExitsPerHook - 1) {
    if (void (*hook)() = g_exit_hook.load(std::memory_order_relaxed)) hook();
  }
}

pthread_key_t ExitKey() {
  static pthread_key_t key;
  static const bool created = pthread_key_create(&key, OnThreadExit) == 0;
  return created ? key : static_cast<pthread_key_t>(-1);
}

// Writer thread: unlinks `thread` from the registry (it may still be the head, which app
// threads push in front of) and frees it and its chunks.
void Unlink(ThreadBuffers* thread, ThreadBuffers* previous) {
  if (previous != nullptr) {
    previous->next = thread->next;
  } else {
    ThreadBuffers* expected = thread;
    if (!g_threads.compare_exchange_strong(expected, thread->next, std::memory_order_acq_rel)) {
      // Threads registered in front of it since: find the entry before it.
      ThreadBuffers* p = g_threads.load(std::memory_order_acquire);
      while (p->next != thread) p = p->next;
      p->next = thread->next;
    }
  }
  for (size_t i = 0; i < kThreadStatCount; ++i) {
    g_retired_stats[i] += thread->stats[i].load(std::memory_order_relaxed);
  }
  FreeThreadChunks<LaunchLinkRecord>(*thread);
  FreeThreadChunks<ApiRecord>(*thread);
  delete thread;
  CountStat(StatId::thread_buffers_freed);
}

void Register(ThreadBuffers* self) {
  self->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  prctl(PR_GET_NAME, self->name, 0, 0, 0);
  ThreadBuffers* head = g_threads.load(std::memory_order_relaxed);
  do {
    self->next = head;
  } while (!g_threads.compare_exchange_weak(head, self, std::memory_order_release,
                                            std::memory_order_relaxed));
}

}  // namespace

ThreadBuffers& CurrentThreadBuffers() {
  if (t_self != nullptr) return *t_self;
  auto* self = new (std::nothrow) ThreadBuffers();
  const pthread_key_t key = ExitKey();
  if (self == nullptr || key == static_cast<pthread_key_t>(-1) ||
      pthread_setspecific(key, self) != 0) {
    delete self;
    // Out of memory: threads share one entry, registered once and never freed.
    static ThreadBuffers fallback;
    static const bool registered = (Register(&fallback), true);
    (void)registered;
    return fallback;
  }
  Register(self);
  t_self = self;
  return *self;
}

ThreadBuffers* CurrentThreadBuffersIfAny() {
  return t_self;
}

bool AnyThreadOutranItsBuffer() {
  for (ThreadBuffers* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    const uint64_t room = t->buffer_room_calls.load(std::memory_order_relaxed);
    const uint64_t since = t->stats[kCallbacks].load(std::memory_order_relaxed) -
                           t->calls_at_buffer.load(std::memory_order_relaxed);
    if (room != 0 && since > room + room / 2) return true;
  }
  return false;
}

void SetThreadExitHook(void (*hook)()) {
  g_exit_hook.store(hook, std::memory_order_relaxed);
}

bool AppendLink(ThreadBuffers& thread, const LaunchLinkRecord& link) {
  return Append(thread, thread.links, link, StatId::launch_links_dropped);
}

bool AppendApiCall(ThreadBuffers& thread, const ApiRecord& call) {
  return Append(thread, thread.api_calls, call, StatId::api_calls_dropped);
}

void RestartThreadReports() {
  for (size_t i = 0; i < kThreadStatCount; ++i) g_retired_stats[i] = 0;
  for (ThreadBuffers* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    t->reported = false;
    for (auto& stat : t->stats) stat.store(0, std::memory_order_relaxed);
  }
}

void ThreadStatTotals(uint64_t (&totals)[kThreadStatCount]) {
  for (size_t i = 0; i < kThreadStatCount; ++i) totals[i] = g_retired_stats[i];
  for (ThreadBuffers* t = g_threads.load(std::memory_order_acquire); t != nullptr; t = t->next) {
    for (size_t i = 0; i < kThreadStatCount; ++i) {
      totals[i] += t->stats[i].load(std::memory_order_relaxed);
    }
  }
}

void DrainThreadBuffers(std::vector<LaunchLinkRecord>& links, std::vector<ApiRecord>& api_calls,
                        std::vector<ThreadRecord>* new_threads, uint32_t pid, NameTable& names) {
  // Which threads had ended before anything is drained: everything they appended (their
  // full chunks included) is visible now, so once drained below they can go.
  ThreadBuffers* head = g_threads.load(std::memory_order_acquire);
  std::vector<ThreadBuffers*> ended;
  for (ThreadBuffers* t = head; t != nullptr; t = t->next) {
    if (t->exited.load(std::memory_order_acquire)) ended.push_back(t);
  }
  DrainFull(links);
  DrainFull(api_calls);
  for (ThreadBuffers* t = head; t != nullptr; t = t->next) {
    if (auto* chunk = t->links.load(std::memory_order_acquire)) DrainChunk(chunk, links);
    if (auto* chunk = t->api_calls.load(std::memory_order_acquire)) DrainChunk(chunk, api_calls);
  }
  if (new_threads == nullptr) return;  // a thread is freed only after it was reported
  SetStat(StatId::thread_buffer_bytes, ThreadBufferBytes());
  for (ThreadBuffers* t = head; t != nullptr; t = t->next) {
    if (t->reported) continue;
    t->reported = true;
    new_threads->push_back(ThreadRecord{pid, t->tid, names.Intern(t->name)});
  }
  if (ended.empty()) {
    SetStat(StatId::thread_buffer_bytes, ThreadBufferBytes());
    return;
  }
  ThreadBuffers* previous = nullptr;
  size_t next_ended = 0;  // `ended` is in list order
  for (ThreadBuffers* t = g_threads.load(std::memory_order_acquire);
       t != nullptr && next_ended < ended.size();) {
    ThreadBuffers* next = t->next;
    if (t == ended[next_ended]) {
      ++next_ended;
      Unlink(t, previous);
    } else {
      previous = t;
    }
    t = next;
  }
  SetStat(StatId::thread_buffer_bytes, ThreadBufferBytes());
}

uint64_t ThreadBufferBytes() {
  return g_chunk_bytes.load(std::memory_order_relaxed);
}

}  // namespace gpuperf::inject
