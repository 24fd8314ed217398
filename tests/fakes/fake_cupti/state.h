// Process-wide state of the fake CUPTI, shared by the entry points (activity_api.cc,
// callback_api.cc, misc_api.cc) and the control API (control.cc).
#pragma once

#include <cupti.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "fake_cupti/buffers.h"

// The opaque CUpti_SubscriberHandle of the real API is a pointer to this.
struct CUpti_Subscriber_st {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::string name;      // as _v2 reports it to a later subscriber: "CUPTI for <name>"
  bool foreign = false;  // stands in for another tool (fake_cupti_set_second_subscriber)
  // enabled[domain][cbid]: read on app threads while the client may toggle it.
  std::array<std::unique_ptr<std::atomic<uint8_t>[]>, CUPTI_CB_DOMAIN_SIZE> enabled;
};

namespace fake_cupti {

inline constexpr uint32_t kMaxCbid = 1024;  // above every runtime/driver/resource cbid in 13.0
inline constexpr int kKindLimit = CUPTI_ACTIVITY_KIND_COUNT;

struct FakeContext {
  uint32_t id = 0;
  uint32_t device_id = 0;
};

struct Counters {
  std::atomic<uint64_t> api_calls{0}, callbacks_issued{0}, flush_all_calls{0},
      forced_flush_calls{0}, subscribe_calls{0}, subscribe_rejected{0}, timestamp_callback_late{0},
      kinds_ever_enabled{0}, hw_trace_enabled{0}, hw_trace_late{0}, hw_trace_early{0},
      finalize_calls{0}, calls_across_finalize{0}, finalize_off_api_exit{0},
      finalize_after_callback_off{0};
  // Callbacks running now (IssueCallback).
  std::atomic<int64_t> callbacks_in_flight{0};
};

// This thread's callbacks running now, and whether the innermost is at the exit of a runtime
// or driver API call: the one place CUPTI's header calls cuptiFinalize safe without the
// client's own synchronization.
struct ThreadCallbacks {
  int64_t running = 0;
  bool at_api_exit = false;
  uint64_t finalizes_at_start = 0;  // finalize_calls when the outermost callback began
};
ThreadCallbacks& ThisThreadCallbacks();
// Called by the CUPTI functions a client's callback uses, as they return: real CUPTI tears
// down what such a call reads (its stream and context tables), so a call made from a callback
// that a cuptiFinalize overtook (before or during the call) is counted (calls_across_finalize).
void NoteCallFromCallback();

struct State {
  std::mutex mu;  // configuration: subscriber changes, contexts, per-context kinds, attributes

  std::atomic<CUpti_Subscriber_st*> subscriber{nullptr};
  std::atomic<uint32_t> next_correlation_id{1};
  std::atomic<uint32_t> next_context_id{1};
  std::atomic<uint32_t> current_context{0};
  std::unordered_map<uint32_t, FakeContext*> contexts;  // never freed: handles stay valid
  // Every device the app described (fake_cupti_emit_device), whether its kind was on or
  // not: what cuptiActivityEnableAndDump(DEVICE) gives a client that subscribed late.
  std::vector<CUpti_ActivityDevice5> devices;
  // An API callback was switched off by id since the last finalize (cuptiEnableCallback).
  std::atomic<bool> api_callback_switched_off{false};
  struct FakeStream {
    uint32_t context_id = 0;
    uint32_t stream_id = 0;
  };
  std::unordered_map<const void*, FakeStream*> streams;  // CUstream handle -> ids, never freed

  std::array<std::atomic<bool>, kKindLimit> kind_enabled{};
  std::atomic<bool> any_kind_enabled{false};
  std::atomic<bool> driver_initialized{false};  // fake_cupti_cu_init_finished was called
  // Per-context overrides from cuptiActivityEnableContext/DisableContext: +1 on, -1 off.
  std::unordered_map<uint64_t, int> context_kinds;  // key: (context id << 32) | kind
  std::atomic<bool> has_context_kinds{false};
  // cuptiActivityEnableRuntimeApi/DriverApi: per-cbid +1 on, -1 off, 0 follow the kind.
  std::array<std::atomic<int8_t>, kMaxCbid> runtime_api_override{};
  std::array<std::atomic<int8_t>, kMaxCbid> driver_api_override{};

  std::atomic<CUpti_TimestampCallbackFunc> timestamp_callback{nullptr};
  std::atomic<int> thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};

  BufferQueue buffers;
  Counters counters;

  std::mutex strings_mu;
  std::unordered_set<std::string> strings;
};

// The one instance, created on first use and never destroyed, so that calls made from atexit
// handlers, signal-driven threads or a forked child never meet a destructed object.
State& G();

// Records `result` as the calling thread's last error (unless CUPTI_SUCCESS) and returns it.
CUptiResult Fail(CUptiResult result);
CUptiResult TakeLastError();

uint64_t Now();
uint32_t CurrentThreadId();
// A stable copy of `s` (NULL stays NULL): activity records point at it after delivery.
const char* Intern(const char* s);

bool KindEnabled(CUpti_ActivityKind kind, uint32_t context_id);
void MarkKindEnabled(CUpti_ActivityKind kind, bool enabled);
FakeContext* FindContext(uint32_t context_id);
// Whether the API record of (domain, cbid) is collected: RUNTIME/DRIVER kind plus the per-cbid
// switches of cuptiActivityEnableRuntimeApi/DriverApi.
bool ApiRecordEnabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t context_id);
// The calling thread's external correlation ids, one stack per CUpti_ExternalCorrelationKind.
std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE>& ExternalIdStacks();

// Issues one callback to the subscriber if it enabled (domain, cbid).
void IssueCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);

// Callback names from the generated tables (nullptr if unknown).
const char* CallbackName(CUpti_CallbackDomain domain, uint32_t cbid);
const char* ResultName(CUptiResult result);

}  // namespace fake_cupti
