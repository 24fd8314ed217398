#include "fake_cupti/state.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace fake_cupti {
namespace {

#include "fake_cupti_names.inc"

thread_local CUptiResult t_last_error = CUPTI_SUCCESS;

void PrepareFork() {
  G().mu.lock();
  G().buffers.PrepareFork();
}
void ParentAfterFork() {
  G().buffers.ParentAfterFork();
  G().mu.unlock();
}
void ChildAfterFork() {
  G().buffers.ChildAfterFork();
  G().mu.unlock();
}

State* CreateState() {
  auto* state = new State();
  pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
  return state;
}

}  // namespace

State& G() {
  static State* state = CreateState();
  return *state;
}

CUptiResult Fail(CUptiResult result) {
  if (result != CUPTI_SUCCESS) t_last_error = result;
  return result;
}

CUptiResult TakeLastError() {
  CUptiResult last = t_last_error;
  t_last_error = CUPTI_SUCCESS;
  return last;
}

uint64_t Now() {
  if (CUpti_TimestampCallbackFunc callback = G().timestamp_callback.load()) return callback();
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);  // CUPTI's own clock on Linux
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t CurrentThreadId() {
  if (G().thread_id_type.load() == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return static_cast<uint32_t>(syscall(SYS_gettid));
  }
  // The default type is pthread_self(), cut to the record's 32 bits.
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(pthread_self()));
}

const char* Intern(const char* s) {
  if (s == nullptr) return nullptr;
  State& g = G();
  std::lock_guard<std::mutex> lock(g.strings_mu);
  return g.strings.emplace(s).first->c_str();
}

bool KindEnabled(CUpti_ActivityKind kind, uint32_t context_id) {
  if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= kKindLimit) return false;
  State& g = G();
  if (context_id != 0 && g.has_context_kinds.load()) {
    // A per-context setting supersedes the global one.
    std::lock_guard<std::mutex> lock(g.mu);
    auto it = g.context_kinds.find((uint64_t{context_id} << 32) | kind);
    if (it != g.context_kinds.end()) return it->second > 0;
  }
  return g.kind_enabled[kind].load(std::memory_order_relaxed);
}

void MarkKindEnabled(CUpti_ActivityKind kind, bool enabled) {
  State& g = G();
  g.kind_enabled[kind] = enabled;
  if (enabled) {
    g.any_kind_enabled = true;
    if (kind < 64) g.counters.kinds_ever_enabled.fetch_or(uint64_t{1} << kind);
  }
}

FakeContext* FindContext(uint32_t context_id) {
  State& g = G();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.contexts.find(context_id);
  return it == g.contexts.end() ? nullptr : it->second;
}

void IssueCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  CUpti_Subscriber_st* subscriber = G().subscriber.load();
  if (subscriber == nullptr || subscriber->callback == nullptr) return;
  if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= kMaxCbid) {
    return;
  }
  if (!subscriber->enabled[domain][cbid].load(std::memory_order_relaxed)) return;
  G().counters.callbacks_issued++;
  G().counters.callbacks_in_flight++;
  ThreadCallbacks& mine = ThisThreadCallbacks();
  const bool outer_at_exit = mine.at_api_exit;
  if (mine.running++ == 0) mine.finalizes_at_start = G().counters.finalize_calls.load();
  mine.at_api_exit =
      (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) &&
      static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_EXIT;
  subscriber->callback(subscriber->userdata, domain, cbid, data);
  mine.at_api_exit = outer_at_exit;
  --mine.running;
  G().counters.callbacks_in_flight--;
}

void NoteCallFromCallback() {
  const ThreadCallbacks& mine = ThisThreadCallbacks();
  if (mine.running > 0 && G().counters.finalize_calls.load() != mine.finalizes_at_start) {
    G().counters.calls_across_finalize++;
  }
}

ThreadCallbacks& ThisThreadCallbacks() {
  thread_local ThreadCallbacks callbacks;
  return callbacks;
}

const char* CallbackName(CUpti_CallbackDomain domain, uint32_t cbid) {
  auto find = [cbid](const auto& table) -> const char* {
    for (const auto& entry : table) {
      // The enum's SIZE entry is a bound, not a callback: CUPTI rejects it.
      if (entry.value == cbid && std::strcmp(entry.name, "SIZE") != 0) return entry.name;
    }
    return nullptr;
  };
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) return find(kRuntimeCallbackNames);
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) return find(kDriverCallbackNames);
  return nullptr;
}

const char* ResultName(CUptiResult result) {
  // Where the 13.0 library itself differs from its header (checked by RealCuptiTest): it has
  // no string for two codes the header lists, and names five internal codes it does not.
  static const FakeCuptiName kLibraryOnly[] = {{1000, "CUPTI_ERROR_CANT_OPEN_FILE"},
                                               {1001, "CUPTI_ERROR_FROM_DBMS"},
                                               {1002, "CUPTI_ERROR_OPENED_FOR_WRITE"},
                                               {1003, "CUPTI_ERROR_OPENED_FOR_READ"},
                                               {1004, "CUPTI_ERROR_TRUNCATED_PDM"}};
  if (result == CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED ||
      result == CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE) {
    return nullptr;
  }
  for (const auto& entry : kLibraryOnly) {
    if (entry.value == static_cast<unsigned>(result)) return entry.name;
  }
  for (const auto& entry : kResultNames) {
    if (entry.value == static_cast<unsigned>(result)) return entry.name;
  }
  return nullptr;
}

}  // namespace fake_cupti
