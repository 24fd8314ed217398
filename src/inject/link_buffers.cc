#include "inject/link_buffers.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>

#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

std::atomic<ThreadLinks*> g_threads{nullptr};
std::atomic<LinkBuffer*> g_full{nullptr};
// Threads the writer has already reported (writer thread only).
ThreadLinks* g_reported_until = nullptr;

void PushFull(LinkBuffer* buffer) {
  LinkBuffer* head = g_full.load(std::memory_order_relaxed);
  do {
    buffer->next_full = head;
  } while (!g_full.compare_exchange_weak(head, buffer, std::memory_order_release,
                                         std::memory_order_relaxed));
}

void DrainBuffer(LinkBuffer* buffer, std::vector<LaunchLinkRecord>& out) {
  const uint32_t committed = buffer->committed.load(std::memory_order_acquire);
  for (uint32_t i = buffer->drained; i < committed; ++i) out.push_back(buffer->links[i]);
  buffer->drained = committed;
}

}  // namespace

ThreadLinks& CurrentThreadLinks() {
  // Never freed: the writer may still drain a thread's buffer after the thread exits.
  static thread_local ThreadLinks* self = nullptr;
  if (self != nullptr) return *self;
  self = new (std::nothrow) ThreadLinks();
  if (self == nullptr) {
    static ThreadLinks fallback;  // out of memory: share one (links may be dropped)
    return fallback;
  }
  self->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  prctl(PR_GET_NAME, self->name, 0, 0, 0);
  ThreadLinks* head = g_threads.load(std::memory_order_relaxed);
  do {
    self->next = head;
  } while (!g_threads.compare_exchange_weak(head, self, std::memory_order_release,
                                            std::memory_order_relaxed));
  return *self;
}

bool AppendLink(ThreadLinks& thread, const LaunchLinkRecord& link) {
  LinkBuffer* buffer = thread.current.load(std::memory_order_relaxed);
  if (buffer == nullptr || buffer->committed.load(std::memory_order_relaxed) == kLinksPerBuffer) {
    LinkBuffer* fresh = new (std::nothrow) LinkBuffer();
    if (fresh == nullptr) {
      CountStat(StatId::launch_links_dropped);
      return false;
    }
    thread.current.store(fresh, std::memory_order_release);
    if (buffer != nullptr) PushFull(buffer);  // the writer frees it once drained
    buffer = fresh;
  }
  const uint32_t index = buffer->committed.load(std::memory_order_relaxed);
  buffer->links[index] = link;
  buffer->committed.store(index + 1, std::memory_order_release);
  return true;
}

void DrainLinks(std::vector<LaunchLinkRecord>& out, std::vector<ThreadRecord>* new_threads,
                uint32_t pid, NameTable& names) {
  // Full buffers first: they were retired before the threads' current ones began.
  LinkBuffer* full = g_full.exchange(nullptr, std::memory_order_acquire);
  std::vector<LinkBuffer*> retired;
  for (; full != nullptr; full = full->next_full) retired.push_back(full);
  for (auto it = retired.rbegin(); it != retired.rend(); ++it) {
    DrainBuffer(*it, out);
    delete *it;
  }
  ThreadLinks* head = g_threads.load(std::memory_order_acquire);
  for (ThreadLinks* t = head; t != nullptr; t = t->next) {
    if (LinkBuffer* current = t->current.load(std::memory_order_acquire)) DrainBuffer(current, out);
  }
  if (new_threads != nullptr) {
    for (ThreadLinks* t = head; t != nullptr && t != g_reported_until; t = t->next) {
      new_threads->push_back(ThreadRecord{pid, t->tid, names.Intern(t->name)});
    }
    g_reported_until = head;
  }
}

}  // namespace gpuperf::inject
