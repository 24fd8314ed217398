// The CUPTI activity API: kinds, buffer callbacks, flushing, record iteration, attributes,
// external correlation and the timestamp callback.
#include <cupti.h>

#include <cstdlib>
#include <cstring>

#include "fake_cupti/hw_injected.h"
#include "fake_cupti/state.h"

using fake_cupti::Fail;
using fake_cupti::G;
using fake_cupti::kKindLimit;
using fake_cupti::kMaxCbid;

namespace fake_cupti {

std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE>& ExternalIdStacks() {
  thread_local std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE> stacks;
  return stacks;
}

bool ApiRecordEnabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint32_t context_id) {
  bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (!runtime && domain != CUPTI_CB_DOMAIN_DRIVER_API) return false;
  if (cbid < kMaxCbid) {
    int8_t override_value =
        runtime ? G().runtime_api_override[cbid].load() : G().driver_api_override[cbid].load();
    if (override_value != 0) return override_value > 0;
  }
  return KindEnabled(runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER,
                     context_id);
}

}  // namespace fake_cupti

namespace {

bool ValidKind(CUpti_ActivityKind kind) {
  return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < kKindLimit;
}

void ClearApiOverrides(CUpti_ActivityKind kind) {
  // "Activity kind CUPTI_ACTIVITY_KIND_RUNTIME overrides the settings done by this API if it
  // is called after the API" (and the same for DRIVER).
  auto& table =
      kind == CUPTI_ACTIVITY_KIND_RUNTIME ? G().runtime_api_override : G().driver_api_override;
  for (auto& entry : table) entry = 0;
}

CUptiResult SetContextKind(CUcontext context, CUpti_ActivityKind kind, int value) {
  if (!ValidKind(kind)) return Fail(CUPTI_ERROR_INVALID_KIND);
  if (context == nullptr) return Fail(CUPTI_ERROR_INVALID_CONTEXT);
  uint32_t context_id = reinterpret_cast<fake_cupti::FakeContext*>(context)->id;
  fake_cupti::State& g = G();
  std::lock_guard<std::mutex> lock(g.mu);
  g.context_kinds[(uint64_t{context_id} << 32) | kind] = value;
  g.has_context_kinds = true;
  if (value > 0 && kind < 64) g.counters.kinds_ever_enabled.fetch_or(uint64_t{1} << kind);
  return CUPTI_SUCCESS;
}

// Attribute storage: the value type each attribute has in the header.
struct Attributes {
  size_t device_buffer_size = 8 * 1024 * 1024;
  size_t device_buffer_size_cdp = 8 * 1024 * 1024;
  size_t device_buffer_pool_limit = 250;
  size_t device_buffer_pre_allocate = 3;
  size_t device_buffer_size_device_graphs = 16 * 1024 * 1024;
  uint8_t zeroed_out_activity_buffer = 0;
  uint8_t host_pinned = 0;
  uint8_t per_thread_buffer = 1;
};
Attributes& Attrs() {
  static Attributes* attributes = new Attributes();
  return *attributes;
}

// Where attribute `attr` lives and how big it is; nullptr for attributes CUDA 12.3+ dropped.
void* AttributeSlot(CUpti_ActivityAttribute attr, size_t* size) {
  Attributes& a = Attrs();
  *size = sizeof(size_t);
  switch (attr) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE:
      return &a.device_buffer_size;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_CDP:
      return &a.device_buffer_size_cdp;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
      return &a.device_buffer_pool_limit;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE:
      return &a.device_buffer_pre_allocate;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS:
      return &a.device_buffer_size_device_graphs;
    default:
      break;
  }
  *size = sizeof(uint8_t);
  switch (attr) {
    case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
      return &a.zeroed_out_activity_buffer;
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
      return &a.host_pinned;
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER:
      return &a.per_thread_buffer;
    default:
      return nullptr;
  }
}

}  // namespace

namespace fake_cupti {
void ResetActivityAttributes() {
  Attrs() = Attributes();
}
}  // namespace fake_cupti

extern "C" {

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (!ValidKind(kind)) return Fail(CUPTI_ERROR_INVALID_KIND);
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    ClearApiOverrides(kind);
  }
  fake_cupti::MarkKindEnabled(kind, true);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind) {
  CUptiResult result = cuptiActivityEnable(kind);
  if (result != CUPTI_SUCCESS) return result;
  if (kind == CUPTI_ACTIVITY_KIND_DEVICE) {
    // The devices CUDA knows, as CUPTI 13 dumps them for a client that came late.
    std::vector<CUpti_ActivityDevice5> devices;
    {
      std::lock_guard<std::mutex> lock(G().mu);
      devices = G().devices;
    }
    for (const auto& device : devices) G().buffers.Append(&device, sizeof(device), false);
    return CUPTI_SUCCESS;
  }
  if (kind != CUPTI_ACTIVITY_KIND_CONTEXT) return result;
  // Records for the contexts that already exist (late attach).
  std::vector<fake_cupti::FakeContext> existing;
  {
    std::lock_guard<std::mutex> lock(G().mu);
    for (auto& [id, context] : G().contexts) existing.push_back(*context);
  }
  for (const auto& context : existing) {
    CUpti_ActivityContext3 record{};
    record.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
    record.contextId = context.id;
    record.deviceId = context.device_id;
    record.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
    G().buffers.Append(&record, sizeof(record), false);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (!ValidKind(kind)) return Fail(CUPTI_ERROR_INVALID_KIND);
  if (kind == CUPTI_ACTIVITY_KIND_RUNTIME || kind == CUPTI_ACTIVITY_KIND_DRIVER) {
    ClearApiOverrides(kind);
  }
  fake_cupti::MarkKindEnabled(kind, false);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind) {
  return SetContextKind(context, kind, +1);
}

CUptiResult CUPTIAPI cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind) {
  return SetContextKind(context, kind, -1);
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (cbid >= kMaxCbid) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  G().driver_api_override[cbid] = enable ? 1 : -1;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  if (cbid >= kMaxCbid) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  G().runtime_api_override[cbid] = enable ? 1 : -1;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                    CUpti_BuffersCallbackCompleteFunc complete) {
  if (request == nullptr || complete == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  G().buffers.SetCallbacks(request, complete);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc callback) {
  if (callback == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  // The header asks for registration before any kind is enabled, and documents a late one as
  // accepted (earlier records keep the old clock): accept it, and count it for the tests.
  if (G().any_kind_enabled.load()) G().counters.timestamp_callback_late++;
  G().timestamp_callback = callback;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  if (!G().buffers.HasCallbacks()) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  bool forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
  G().counters.flush_all_calls++;
  if (forced) G().counters.forced_flush_calls++;
  G().buffers.FlushAll(forced);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext context, uint32_t stream_id, uint32_t flag) {
  return cuptiActivityFlushAll(flag);  // deprecated: context and stream are ignored
}

CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time) {
  G().buffers.SetFlushPeriod(time);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                       size_t* dropped) {
  if (dropped == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  // All buffers are global since CUDA 6.0: every drop is counted on the global queue.
  *dropped = context == nullptr ? G().buffers.TakeDropped() : 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_size,
                                                CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  uint8_t* base = buffer;
  if (reinterpret_cast<uintptr_t>(base) % 8 != 0) base += 8 - reinterpret_cast<uintptr_t>(base) % 8;
  uint8_t* next = base;
  if (*record != nullptr) {
    auto* current = reinterpret_cast<uint8_t*>(*record);
    size_t size = fake_cupti::RecordSize((*record)->kind);
    if (size == 0) return Fail(CUPTI_ERROR_INVALID_KIND);
    next = current + size;
  }
  size_t offset = static_cast<size_t>(next - buffer);
  if (offset + sizeof(CUpti_ActivityKind) > valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  auto* candidate = reinterpret_cast<CUpti_Activity*>(next);
  size_t size = fake_cupti::RecordSize(candidate->kind);
  if (size == 0 || offset + size > valid_size) return Fail(CUPTI_ERROR_INVALID_KIND);
  *record = candidate;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* value_size,
                                               void* value) {
  if (value_size == nullptr || value == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  size_t size = 0;
  void* slot = AttributeSlot(attr, &size);
  if (slot == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (*value_size < size) return Fail(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  std::memcpy(value, slot, size);
  *value_size = size;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* value_size,
                                               void* value) {
  if (value_size == nullptr || value == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  size_t size = 0;
  void* slot = AttributeSlot(attr, &size);
  if (slot == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (*value_size < size) return Fail(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  std::memcpy(slot, value, size);
  if (attr == CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) {
    G().buffers.SetPerThread(Attrs().per_thread_buffer != 0);
  }
  if (attr == CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER) {
    // Non-zero: the client promises zeroed buffers, so CUPTI skips zeroing them.
    G().buffers.SetZeroBuffers(Attrs().zeroed_out_activity_buffer == 0);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  fake_cupti::ExternalIdStacks()[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t* last_id) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID ||
      kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  auto& stack = fake_cupti::ExternalIdStacks()[kind];
  if (stack.empty()) return Fail(CUPTI_ERROR_QUEUE_EMPTY);
  if (last_id != nullptr) *last_id = stack.back();
  stack.pop_back();
  return CUPTI_SUCCESS;
}

// Switches the fake accepts without changing what it records.
CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnableLaunchAttributes(uint8_t) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnableDeviceGraph(uint8_t) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnableAllocationSource(uint8_t) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnableAllSyncRecords(uint8_t) {
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t) {
  return CUPTI_SUCCESS;
}
// Hardware features a machine without a GPU does not have. FAKE_CUPTI_HW_TRACE=supported
// plays a Blackwell GPU for the Hardware Event System, which CUPTI takes only once the driver
// is initialized (an H100 answers NOT_INITIALIZED inside cuInit) and before the first context.
CUptiResult CUPTIAPI cuptiActivityEnableHWTrace(uint8_t enable) {
  if (!enable) return CUPTI_SUCCESS;
  if (!G().driver_initialized.load()) {
    G().counters.hw_trace_early++;
    return Fail(CUPTI_ERROR_NOT_INITIALIZED);
  }
  const char* supported = std::getenv("FAKE_CUPTI_HW_TRACE");
  if (supported == nullptr || std::strcmp(supported, "supported") != 0) {
    return Fail(CUPTI_ERROR_NOT_SUPPORTED);
  }
  std::lock_guard<std::mutex> lock(G().mu);
  if (!G().contexts.empty()) {
    G().counters.hw_trace_late++;
    return Fail(CUPTI_ERROR_INVALID_OPERATION);
  }
  G().counters.hw_trace_enabled++;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI
cuptiActivityConfigureUnifiedMemoryCounter(CUpti_ActivityUnifiedMemoryCounterConfig*, uint32_t) {
  return Fail(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED);
}
CUptiResult CUPTIAPI cuptiActivityConfigurePCSampling(CUcontext, CUpti_ActivityPCSamplingConfig*) {
  return Fail(CUPTI_ERROR_NOT_SUPPORTED);
}
CUptiResult CUPTIAPI cuptiGetAutoBoostState(CUcontext, CUpti_ActivityAutoBoostState*) {
  return Fail(CUPTI_ERROR_NOT_SUPPORTED);
}
CUptiResult CUPTIAPI cuptiDeviceVirtualizationMode(CUdevice, CUpti_DeviceVirtualizationMode* mode) {
  if (mode == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *mode = CUPTI_DEVICE_VIRTUALIZATION_MODE_NONE;
  return CUPTI_SUCCESS;
}

// Graph handles made by the fake's drivers carry their id in the pointer value.
CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t* id) {
  if (graph == nullptr || id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(graph));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetGraphExecId(CUgraphExec graph_exec, uint32_t* id) {
  if (graph_exec == nullptr || id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *id = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(graph_exec));
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI cuptiGetGraphNodeId(CUgraphNode node, uint64_t* id) {
  if (node == nullptr || id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *id = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(node));
  return CUPTI_SUCCESS;
}

// Detach: unsubscribe, disable every kind, forget the buffer callbacks. Buffers not flushed
// before are lost, as the header warns.
CUptiResult CUPTIAPI cuptiFinalize(void) {
  FAKE_CUPTI_INJECTED(cuptiFinalize);  // refused: everything stays as it was
  fake_cupti::State& g = G();
  CUpti_Subscriber_st* subscriber = g.subscriber.load();
  if (subscriber != nullptr && !subscriber->foreign) {
    g.subscriber.compare_exchange_strong(subscriber, nullptr);
  }
  for (int kind = 1; kind < kKindLimit; ++kind) g.kind_enabled[kind] = false;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.context_kinds.clear();
    g.has_context_kinds = false;
  }
  g.buffers.Reset();
  g.counters.finalize_calls++;
  const fake_cupti::ThreadCallbacks& mine = fake_cupti::ThisThreadCallbacks();
  // Anywhere but at an API exit it is safe only once the client has synchronized every
  // thread's CUDA work itself, which a profiler that attached from outside cannot do.
  if (!mine.at_api_exit) g.counters.finalize_off_api_exit++;
  // What crashes real CUPTI 13.0 in a PyTorch process (callback_api.cc, cuptiEnableCallback).
  if (g.api_callback_switched_off.exchange(false)) g.counters.finalize_after_callback_off++;
  return CUPTI_SUCCESS;
}

}  // extern "C"
