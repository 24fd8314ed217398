// The fake_cupti_* control API: what libcuda/libcudart would make CUPTI do.
#include "fake_cupti/fake_cupti.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "fake_cupti/hw_state.h"
#include "fake_cupti/state.h"

using fake_cupti::G;
using fake_cupti::Intern;

namespace fake_cupti {
void ResetActivityAttributes();
}  // namespace fake_cupti

namespace {

// Strips the "_v7000" style suffix the runtime cbid enum carries: the callback data names the
// function itself ("cudaLaunchKernel"), cuptiGetCallbackName the enum entry.
const char* RuntimeFunctionName(const char* enum_name) {
  std::string name = enum_name;
  size_t pos = name.rfind("_v");
  if (pos != std::string::npos && pos + 2 < name.size() &&
      name.find_first_not_of("0123456789", pos + 2) == std::string::npos) {
    name.resize(pos);
  }
  return Intern(name.c_str());
}

int Emit(const void* record, size_t size, CUpti_ActivityKind kind, uint32_t context_id,
         bool incomplete = false) {
  if (!fake_cupti::KindEnabled(kind, context_id)) return 0;
  return G().buffers.Append(record, size, incomplete) ? 1 : -1;
}

CUcontext Handle(uint32_t context_id) {
  return reinterpret_cast<CUcontext>(fake_cupti::FindContext(context_id));
}

}  // namespace

extern "C" {

uint64_t fake_cupti_now(void) {
  return fake_cupti::Now();
}

void fake_cupti_cu_init_finished(void) {
  G().driver_initialized = true;
  fake_cupti_resource_event(CUPTI_CBID_RESOURCE_CU_INIT_FINISHED, 0, nullptr);
}

uint32_t fake_cupti_create_context(uint32_t device_id) {
  fake_cupti::State& g = G();
  auto* context = new fake_cupti::FakeContext();
  context->id = g.next_context_id++;
  context->device_id = device_id;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.contexts[context->id] = context;
  }
  g.current_context = context->id;
  fake_cupti_resource_event(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, context->id, nullptr);
  fake_cupti_emit_context(context->id, device_id);
  return context->id;
}

void fake_cupti_destroy_context(uint32_t context_id) {
  fake_cupti_resource_event(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, context_id, nullptr);
  uint32_t expected = context_id;
  G().current_context.compare_exchange_strong(expected, 0);
}

CUcontext fake_cupti_context_handle(uint32_t context_id) {
  return Handle(context_id);
}

uint32_t fake_cupti_current_context(void) {
  return G().current_context.load();
}

CUstream fake_cupti_create_stream(uint32_t context_id, uint32_t stream_id) {
  auto* stream = new fake_cupti::State::FakeStream{context_id, stream_id};
  CUstream handle = reinterpret_cast<CUstream>(stream);
  {
    std::lock_guard<std::mutex> lock(G().mu);
    G().streams[handle] = stream;
  }
  fake_cupti_resource_event(CUPTI_CBID_RESOURCE_STREAM_CREATED, context_id, handle);
  return handle;
}

const char* fake_cupti_function_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* enum_name = fake_cupti::CallbackName(domain, cbid);
  if (enum_name == nullptr || cbid == 0) return nullptr;
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? RuntimeFunctionName(enum_name) : enum_name;
}

uint32_t fake_cupti_api_enter(FakeCuptiApiFrame* frame, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const char* symbol_name, const void* params) {
  fake_cupti::State& g = G();
  *frame = FakeCuptiApiFrame{};
  frame->domain = domain;
  frame->cbid = cbid;
  frame->function_name = fake_cupti_function_name(domain, cbid);
  frame->symbol_name = Intern(symbol_name);
  frame->params = params;
  frame->correlation_id = g.next_correlation_id++;
  frame->context_uid = g.current_context.load();
  frame->context = Handle(frame->context_uid);
  frame->start = fake_cupti::Now();
  g.counters.api_calls++;

  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_ENTER;
  data.functionName = frame->function_name;
  data.functionParams = params;
  data.functionReturnValue = nullptr;  // valid only at exit
  data.symbolName = frame->symbol_name;
  data.context = frame->context;
  data.contextUid = frame->context_uid;
  data.correlationData = &frame->correlation_data;
  data.correlationId = frame->correlation_id;
  fake_cupti::IssueCallback(domain, cbid, &data);
  return frame->correlation_id;
}

void fake_cupti_api_exit(FakeCuptiApiFrame* frame, uint32_t return_value) {
  frame->return_value = return_value;
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_EXIT;
  data.functionName = frame->function_name;
  data.functionParams = frame->params;
  data.functionReturnValue = &frame->return_value;
  data.symbolName = frame->symbol_name;
  data.context = frame->context;
  data.contextUid = frame->context_uid;
  data.correlationData = &frame->correlation_data;
  data.correlationId = frame->correlation_id;
  fake_cupti::IssueCallback(frame->domain, frame->cbid, &data);

  if (!fake_cupti::ApiRecordEnabled(frame->domain, frame->cbid, frame->context_uid)) return;
  if (fake_cupti::KindEnabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, frame->context_uid)) {
    // One external correlation record per kind with an id pushed, just before the API record.
    auto& stacks = fake_cupti::ExternalIdStacks();
    for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
      if (stacks[kind].empty()) continue;
      fake_cupti_emit_external_correlation(static_cast<CUpti_ExternalCorrelationKind>(kind),
                                           stacks[kind].back(), frame->correlation_id);
    }
  }
  CUpti_ActivityAPI record{};
  record.kind = frame->domain == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME
                                                             : CUPTI_ACTIVITY_KIND_DRIVER;
  record.cbid = frame->cbid;
  record.start = frame->start;
  record.end = fake_cupti::Now();
  record.processId = static_cast<uint32_t>(getpid());
  record.threadId = fake_cupti::CurrentThreadId();
  record.correlationId = frame->correlation_id;
  record.returnValue = return_value;
  // Written directly: ApiRecordEnabled already decided, per-cbid switches included.
  G().buffers.Append(&record, sizeof(record), false);
}

uint32_t fake_cupti_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const char* symbol_name) {
  FakeCuptiApiFrame frame;
  uint32_t correlation_id = fake_cupti_api_enter(&frame, domain, cbid, symbol_name, nullptr);
  fake_cupti_api_exit(&frame, 0);
  return correlation_id;
}

void fake_cupti_resource_event(CUpti_CallbackIdResource cbid, uint32_t context_id,
                               CUstream stream) {
  CUpti_ResourceData data{};
  data.context = Handle(context_id);
  data.resourceHandle.stream = stream;
  fake_cupti::IssueCallback(CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

void fake_cupti_sync_event(CUpti_CallbackIdSync cbid, uint32_t context_id, CUstream stream) {
  CUpti_SynchronizeData data{};
  data.context = Handle(context_id);
  data.stream = stream;
  fake_cupti::IssueCallback(CUPTI_CB_DOMAIN_SYNCHRONIZE, cbid, &data);
}

int fake_cupti_kind_enabled(CUpti_ActivityKind kind, uint32_t context_id) {
  return fake_cupti::KindEnabled(kind, context_id) ? 1 : 0;
}

int fake_cupti_emit_kernel(const FakeCuptiKernel* k) {
  fake_cupti::ProfilerSawKernel(k->context_id, k->name);
  CUpti_ActivityKernel10 record{};
  if (fake_cupti::KindEnabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, k->context_id)) {
    record.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  } else if (fake_cupti::KindEnabled(CUPTI_ACTIVITY_KIND_KERNEL, k->context_id)) {
    record.kind = CUPTI_ACTIVITY_KIND_KERNEL;
  } else {
    return 0;
  }
  record.registersPerThread = k->registers_per_thread;
  if (!k->incomplete) {
    record.start = k->start;
    record.end = k->end;
    record.completed = k->end;
  }
  record.deviceId = k->device_id;
  record.contextId = k->context_id;
  record.streamId = k->stream_id;
  record.gridX = k->grid_x;
  record.gridY = k->grid_y;
  record.gridZ = k->grid_z;
  record.blockX = k->block_x;
  record.blockY = k->block_y;
  record.blockZ = k->block_z;
  record.staticSharedMemory = k->static_shared_memory;
  record.dynamicSharedMemory = k->dynamic_shared_memory;
  record.correlationId = k->correlation_id;
  record.name = Intern(k->name);
  record.graphId = k->graph_id;
  record.graphNodeId = k->graph_node_id;
  record.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  record.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  return G().buffers.Append(&record, sizeof(record), k->incomplete != 0) ? 1 : -1;
}

int fake_cupti_emit_memcpy(const FakeCuptiMemcpy* m) {
  CUpti_ActivityMemcpy6 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  record.copyKind = static_cast<uint8_t>(m->copy_kind);
  record.srcKind = static_cast<uint8_t>(m->src_kind);
  record.dstKind = static_cast<uint8_t>(m->dst_kind);
  record.flags = m->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
  record.bytes = m->bytes;
  record.start = m->start;
  record.end = m->end;
  record.deviceId = m->device_id;
  record.contextId = m->context_id;
  record.streamId = m->stream_id;
  record.correlationId = m->correlation_id;
  record.runtimeCorrelationId = m->runtime_correlation_id;
  record.graphNodeId = m->graph_node_id;
  record.graphId = m->graph_id;
  record.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  record.copyCount = 1;
  return Emit(&record, sizeof(record), record.kind, m->context_id);
}

int fake_cupti_emit_memset(const FakeCuptiMemset* m) {
  CUpti_ActivityMemset4 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  record.value = m->value;
  record.bytes = m->bytes;
  record.start = m->start;
  record.end = m->end;
  record.deviceId = m->device_id;
  record.contextId = m->context_id;
  record.streamId = m->stream_id;
  record.correlationId = m->correlation_id;
  record.flags = m->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
  record.memoryKind = static_cast<uint16_t>(m->memory_kind);
  record.graphNodeId = m->graph_node_id;
  record.graphId = m->graph_id;
  record.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  return Emit(&record, sizeof(record), record.kind, m->context_id);
}

int fake_cupti_emit_sync(uint32_t correlation_id, CUpti_ActivitySynchronizationType type,
                         uint32_t context_id, uint32_t stream_id, uint64_t start, uint64_t end) {
  CUpti_ActivitySynchronization2 record{};
  record.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  record.type = type;
  record.start = start;
  record.end = end;
  record.correlationId = correlation_id;
  record.contextId = context_id;
  record.streamId = stream_id;
  record.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  return Emit(&record, sizeof(record), record.kind, context_id);
}

int fake_cupti_emit_memory(uint32_t correlation_id, CUpti_ActivityMemoryOperationType operation,
                           CUpti_ActivityMemoryKind memory_kind, uint64_t address, uint64_t bytes,
                           uint32_t device_id, uint32_t context_id, uint64_t timestamp) {
  CUpti_ActivityMemory4 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  record.memoryOperationType = operation;
  record.memoryKind = memory_kind;
  record.correlationId = correlation_id;
  record.address = address;
  record.bytes = bytes;
  record.timestamp = timestamp;
  record.processId = static_cast<uint32_t>(getpid());
  record.deviceId = device_id;
  record.contextId = context_id;
  return Emit(&record, sizeof(record), record.kind, context_id);
}

int fake_cupti_emit_marker(CUpti_ActivityFlag flags, uint32_t id, const char* name,
                           const char* domain, uint64_t timestamp) {
  CUpti_ActivityMarker2 record{};
  record.kind = CUPTI_ACTIVITY_KIND_MARKER;
  record.flags = flags;
  record.timestamp = timestamp;
  record.id = id;
  record.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  record.objectId.pt.processId = static_cast<uint32_t>(getpid());
  record.objectId.pt.threadId = fake_cupti::CurrentThreadId();
  record.name = Intern(name);
  record.domain = Intern(domain);
  return Emit(&record, sizeof(record), record.kind, 0);
}

int fake_cupti_emit_overhead(CUpti_ActivityOverheadKind overhead_kind, uint64_t start, uint64_t end,
                             uint32_t correlation_id) {
  CUpti_ActivityOverhead3 record{};
  record.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  record.overheadKind = overhead_kind;
  record.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  record.objectId.pt.processId = static_cast<uint32_t>(getpid());
  record.objectId.pt.threadId = fake_cupti::CurrentThreadId();
  record.start = start;
  record.end = end;
  record.correlationId = correlation_id;
  return Emit(&record, sizeof(record), record.kind, 0);
}

int fake_cupti_emit_device(uint32_t device_id, const char* name) {
  CUpti_ActivityDevice5 record{};
  record.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  // An H100-like device, so translated records carry plausible numbers.
  record.globalMemoryBandwidth = 3352320000;  // KB/s
  record.globalMemorySize = 85031714816ull;
  record.coreClockRate = 1980000;  // kHz
  record.numMultiprocessors = 132;
  record.numThreadsPerWarp = 32;
  record.maxWarpsPerMultiprocessor = 64;
  record.maxBlocksPerMultiprocessor = 32;
  record.maxSharedMemoryPerMultiprocessor = 233472;
  record.maxRegistersPerMultiprocessor = 65536;
  record.maxRegistersPerBlock = 65536;
  record.maxSharedMemoryPerBlock = 49152;
  record.maxThreadsPerBlock = 1024;
  record.maxBlockDimX = 1024;
  record.maxBlockDimY = 1024;
  record.maxBlockDimZ = 64;
  record.maxGridDimX = 2147483647;
  record.maxGridDimY = 65535;
  record.maxGridDimZ = 65535;
  record.computeCapabilityMajor = 9;
  record.computeCapabilityMinor = 0;
  record.id = device_id;
  record.uuid.bytes[0] = static_cast<char>(device_id + 1);
  record.name = Intern(name);
  record.isCudaVisible = 1;
  {
    std::lock_guard<std::mutex> lock(G().mu);
    G().devices.push_back(record);
  }
  return Emit(&record, sizeof(record), record.kind, 0);
}

int fake_cupti_emit_context(uint32_t context_id, uint32_t device_id) {
  CUpti_ActivityContext3 record{};
  record.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  record.contextId = context_id;
  record.deviceId = device_id;
  record.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
  record.nullStreamId = 7;  // what CUDA 13 reports for the legacy default stream
  return Emit(&record, sizeof(record), record.kind, context_id);
}

int fake_cupti_emit_graph_trace(uint32_t correlation_id, uint32_t graph_id, uint32_t device_id,
                                uint32_t context_id, uint32_t stream_id, uint64_t start,
                                uint64_t end) {
  CUpti_ActivityGraphTrace2 record{};
  record.kind = CUPTI_ACTIVITY_KIND_GRAPH_TRACE;
  record.correlationId = correlation_id;
  record.start = start;
  record.end = end;
  record.deviceId = device_id;
  record.graphId = graph_id;
  record.contextId = context_id;
  record.streamId = stream_id;
  record.endDeviceId = device_id;
  record.endContextId = context_id;
  return Emit(&record, sizeof(record), record.kind, context_id);
}

int fake_cupti_emit_external_correlation(CUpti_ExternalCorrelationKind kind, uint64_t external_id,
                                         uint32_t correlation_id) {
  CUpti_ActivityExternalCorrelation record{};
  record.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  record.externalKind = kind;
  record.externalId = external_id;
  record.correlationId = correlation_id;
  return Emit(&record, sizeof(record), record.kind, 0);
}

int fake_cupti_emit_record(const CUpti_Activity* record) {
  size_t size = fake_cupti::RecordSize(record->kind);
  if (size == 0) return -1;
  return Emit(record, size, record->kind, 0);
}

void fake_cupti_complete_pending(uint64_t start, uint64_t end) {
  G().buffers.CompletePending(start, end);
}

void fake_cupti_drop_records(size_t n) {
  G().buffers.AddDropped(n);
}

void fake_cupti_get_stats(FakeCuptiStats* stats) {
  fake_cupti::State& g = G();
  const auto& b = g.buffers.stats;
  const auto& c = g.counters;
  *stats = FakeCuptiStats{};
  stats->api_calls = c.api_calls;
  stats->callbacks_issued = c.callbacks_issued;
  stats->buffers_requested = b.requested;
  stats->buffers_completed = b.completed;
  stats->buffers_completed_on_worker = b.completed_on_worker;
  stats->empty_buffers_returned = b.empty_returned;
  stats->records_written = b.records_written;
  stats->records_delivered = b.records_delivered;
  stats->records_dropped = b.records_dropped;
  stats->incomplete_delivered = b.incomplete_delivered;
  stats->flush_all_calls = c.flush_all_calls;
  stats->forced_flush_calls = c.forced_flush_calls;
  stats->subscribe_calls = c.subscribe_calls;
  stats->subscribe_rejected = c.subscribe_rejected;
  stats->misaligned_buffers = b.misaligned;
  stats->timestamp_callback_late = c.timestamp_callback_late;
  stats->kinds_ever_enabled = c.kinds_ever_enabled;
  stats->pending_buffers = g.buffers.PendingBuffers();
  stats->hw_trace_enabled = c.hw_trace_enabled;
  stats->hw_trace_late = c.hw_trace_late;
  stats->hw_trace_early = c.hw_trace_early;
  stats->finalize_calls = c.finalize_calls;
  stats->calls_across_finalize = c.calls_across_finalize;
  stats->finalize_off_api_exit = c.finalize_off_api_exit;
  stats->finalize_after_callback_off = c.finalize_after_callback_off;
  CUpti_Subscriber_st* subscriber = g.subscriber.load();
  stats->subscribed = subscriber != nullptr && !subscriber->foreign ? 1 : 0;
  for (int kind = 1; kind < fake_cupti::kKindLimit; ++kind)
    stats->kinds_enabled += g.kind_enabled[kind] ? 1 : 0;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    for (const auto& [key, count] : g.context_kinds) stats->kinds_enabled += count > 0 ? 1 : 0;
  }
}

void fake_cupti_print_stats(int fd) {
  FakeCuptiStats s;
  fake_cupti_get_stats(&s);
  char line[768];
  int n = snprintf(
      line, sizeof(line),
      "fake-cupti: pid=%d api_calls=%llu callbacks=%llu buffers_requested=%llu "
      "buffers_completed=%llu buffers_on_worker=%llu empty_buffers=%llu records_written=%llu "
      "records_delivered=%llu records_dropped=%llu incomplete_delivered=%llu flush_all=%llu "
      "forced_flush=%llu subscribe_calls=%llu subscribe_rejected=%llu misaligned_buffers=%llu "
      "late_timestamp_callback=%llu kinds_mask=0x%llx pending_buffers=%llu hw_trace=%llu "
      "hw_trace_late=%llu hw_trace_early=%llu\n",
      static_cast<int>(getpid()), (unsigned long long)s.api_calls,
      (unsigned long long)s.callbacks_issued, (unsigned long long)s.buffers_requested,
      (unsigned long long)s.buffers_completed, (unsigned long long)s.buffers_completed_on_worker,
      (unsigned long long)s.empty_buffers_returned, (unsigned long long)s.records_written,
      (unsigned long long)s.records_delivered, (unsigned long long)s.records_dropped,
      (unsigned long long)s.incomplete_delivered, (unsigned long long)s.flush_all_calls,
      (unsigned long long)s.forced_flush_calls, (unsigned long long)s.subscribe_calls,
      (unsigned long long)s.subscribe_rejected, (unsigned long long)s.misaligned_buffers,
      (unsigned long long)s.timestamp_callback_late, (unsigned long long)s.kinds_ever_enabled,
      (unsigned long long)s.pending_buffers, (unsigned long long)s.hw_trace_enabled,
      (unsigned long long)s.hw_trace_late, (unsigned long long)s.hw_trace_early);
  if (n > 0) {
    ssize_t ignored = write(fd, line, static_cast<size_t>(n) < sizeof(line) ? n : sizeof(line));
    (void)ignored;
  }
}

void fake_cupti_reset(void) {
  fake_cupti::State& g = G();
  g.buffers.Reset();
  auto& b = g.buffers.stats;
  for (auto* counter :
       {&b.requested, &b.completed, &b.completed_on_worker, &b.empty_returned, &b.records_written,
        &b.records_delivered, &b.records_dropped, &b.incomplete_delivered, &b.misaligned}) {
    *counter = 0;
  }
  auto& c = g.counters;
  for (auto* counter :
       {&c.api_calls, &c.callbacks_issued, &c.flush_all_calls, &c.forced_flush_calls,
        &c.subscribe_calls, &c.subscribe_rejected, &c.timestamp_callback_late,
        &c.kinds_ever_enabled, &c.hw_trace_enabled, &c.hw_trace_late, &c.hw_trace_early}) {
    *counter = 0;
  }
  g.subscriber = nullptr;
  for (auto& enabled : g.kind_enabled) enabled = false;
  g.any_kind_enabled = false;
  for (auto& entry : g.runtime_api_override) entry = 0;
  for (auto& entry : g.driver_api_override) entry = 0;
  {
    std::lock_guard<std::mutex> lock(g.mu);
    g.context_kinds.clear();
    g.contexts.clear();  // the FakeContext objects are leaked on purpose: handles stay valid
  }
  g.has_context_kinds = false;
  g.driver_initialized = false;
  g.timestamp_callback = nullptr;
  g.thread_id_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  g.current_context = 0;
  g.next_correlation_id = 1;
  g.next_context_id = 1;
  for (auto& stack : fake_cupti::ExternalIdStacks()) stack.clear();
  fake_cupti::ResetActivityAttributes();
}

}  // extern "C"
