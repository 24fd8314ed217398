// Control API of the fake libcupti.so.13: what a test driver calls to play the part of
// libcuda/libcudart (API calls with callbacks, GPU activity records, resource events), plus the
// fake's own counters so tests can check what was delivered. Everything here is exported under
// the FAKE_CUPTI_1 symbol version, next to the real CUPTI entry points (see README.md).
#pragma once

#include <cupti.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

// ---- clock and contexts ----

// cuptiGetTimestamp(): the registered timestamp callback if any, else CLOCK_REALTIME.
uint64_t fake_cupti_now(void);

// Creates a context on `device_id`, makes it current (like the runtime's primary context, it is
// current on every thread), issues CUPTI_CBID_RESOURCE_CONTEXT_CREATED and appends a
// CUpti_ActivityContext3 record if CONTEXT is enabled. Returns the context id (1, 2, ...).
uint32_t fake_cupti_create_context(uint32_t device_id);
// The end of cuInit, after the injection library initialized: the resource callback
// CU_INIT_FINISHED. Until then CUPTI refuses what needs an initialized driver (the
// Hardware Event System: CUPTI_ERROR_NOT_INITIALIZED, as on a real H100 inside cuInit).
void fake_cupti_cu_init_finished(void);
// Issues CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING; the current context becomes none.
void fake_cupti_destroy_context(uint32_t context_id);
// The CUcontext handle the fake uses for `context_id` (NULL for 0 or an unknown id).
CUcontext fake_cupti_context_handle(uint32_t context_id);
uint32_t fake_cupti_current_context(void);
// Issues CUPTI_CBID_RESOURCE_STREAM_CREATED for a stream of `context_id`; returns its handle.
CUstream fake_cupti_create_stream(uint32_t context_id, uint32_t stream_id);

// ---- API calls (runtime/driver domains) ----

// One runtime or driver API invocation, owned by the caller between enter and exit.
typedef struct FakeCuptiApiFrame {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const char* function_name;  // from the cbid, as CUpti_CallbackData.functionName
  const char* symbol_name;    // kernel name for launches, else NULL
  const void* params;         // the real <api>_params struct, or NULL
  uint32_t correlation_id;
  uint32_t context_uid;
  CUcontext context;
  uint64_t start;
  uint64_t correlation_data;  // CUpti_CallbackData.correlationData points here
  uint32_t return_value;
} FakeCuptiApiFrame;

// Assigns a new correlation id and issues the API_ENTER callback (if the subscriber enabled
// this domain/cbid). Returns the correlation id. `params` may be NULL.
uint32_t fake_cupti_api_enter(FakeCuptiApiFrame* frame, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const char* symbol_name, const void* params);
// Issues the API_EXIT callback and appends the CUpti_ActivityAPI record (RUNTIME or DRIVER kind,
// when enabled), preceded by one CUpti_ActivityExternalCorrelation per pushed external id.
void fake_cupti_api_exit(FakeCuptiApiFrame* frame, uint32_t return_value);
// enter + exit with nothing in between; returns the correlation id.
uint32_t fake_cupti_api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const char* symbol_name);
// The name CUpti_CallbackData.functionName carries for a cbid ("cudaLaunchKernel",
// "cuLaunchKernel"), or NULL if the cbid is unknown.
const char* fake_cupti_function_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// ---- other callback domains ----

// Resource domain: issues `cbid` with CUpti_ResourceData (context, stream) if enabled.
void fake_cupti_resource_event(CUpti_CallbackIdResource cbid, uint32_t context_id, CUstream stream);
// Synchronize domain: issues `cbid` with CUpti_SynchronizeData if enabled.
void fake_cupti_sync_event(CUpti_CallbackIdSync cbid, uint32_t context_id, CUstream stream);

// ---- activity records ----
// Each emit appends the real CUDA 13 struct to the calling thread's activity buffer (or the
// global buffer when CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER is 0), asking the client for
// a buffer through its request callback when needed. Returns 1 if recorded, 0 if the kind is not
// enabled, -1 if dropped (no buffer given, or too small: the dropped counter goes up).

typedef struct FakeCuptiKernel {
  uint32_t correlation_id;
  const char* name;  // interned by the fake: the pointer stays valid for the process lifetime
  uint32_t device_id, context_id, stream_id;
  uint64_t start, end;
  uint32_t graph_id;
  uint64_t graph_node_id;
  int32_t grid_x, grid_y, grid_z, block_x, block_y, block_z;
  uint16_t registers_per_thread;
  int32_t static_shared_memory, dynamic_shared_memory;
  // The GPU has not reported the timestamps yet: start = end = completed = 0, and the buffer is
  // held back by a default flush until fake_cupti_complete_pending() or a forced flush.
  int incomplete;
} FakeCuptiKernel;
// CONCURRENT_KERNEL if enabled, else KERNEL if enabled.
int fake_cupti_emit_kernel(const FakeCuptiKernel* kernel);

typedef struct FakeCuptiMemcpy {
  uint32_t correlation_id;          // the driver API call's id
  uint32_t runtime_correlation_id;  // the runtime API call's id (0 if driver-only)
  CUpti_ActivityMemcpyKind copy_kind;
  CUpti_ActivityMemoryKind src_kind, dst_kind;
  uint64_t bytes;
  uint64_t start, end;
  uint32_t device_id, context_id, stream_id;
  uint32_t graph_id;
  uint64_t graph_node_id;
  int async;
} FakeCuptiMemcpy;
int fake_cupti_emit_memcpy(const FakeCuptiMemcpy* memcpy_record);

typedef struct FakeCuptiMemset {
  uint32_t correlation_id;
  uint32_t value;
  uint64_t bytes;
  uint64_t start, end;
  uint32_t device_id, context_id, stream_id;
  CUpti_ActivityMemoryKind memory_kind;
  uint32_t graph_id;
  uint64_t graph_node_id;
  int async;
} FakeCuptiMemset;
int fake_cupti_emit_memset(const FakeCuptiMemset* memset_record);

int fake_cupti_emit_sync(uint32_t correlation_id, CUpti_ActivitySynchronizationType type,
                         uint32_t context_id, uint32_t stream_id, uint64_t start, uint64_t end);
// MEMORY2: one allocation or release.
int fake_cupti_emit_memory(uint32_t correlation_id, CUpti_ActivityMemoryOperationType operation,
                           CUpti_ActivityMemoryKind memory_kind, uint64_t address, uint64_t bytes,
                           uint32_t device_id, uint32_t context_id, uint64_t timestamp);
// MARKER (NVTX): flags is CUPTI_ACTIVITY_FLAG_MARKER_START / _END / _INSTANTANEOUS; `id` pairs a
// start with its end; name/domain are interned (name is NULL on an end marker, as in CUPTI).
int fake_cupti_emit_marker(CUpti_ActivityFlag flags, uint32_t id, const char* name,
                           const char* domain, uint64_t timestamp);
int fake_cupti_emit_overhead(CUpti_ActivityOverheadKind overhead_kind, uint64_t start, uint64_t end,
                             uint32_t correlation_id);
int fake_cupti_emit_device(uint32_t device_id, const char* name);
int fake_cupti_emit_context(uint32_t context_id, uint32_t device_id);
int fake_cupti_emit_graph_trace(uint32_t correlation_id, uint32_t graph_id, uint32_t device_id,
                                uint32_t context_id, uint32_t stream_id, uint64_t start,
                                uint64_t end);
int fake_cupti_emit_external_correlation(CUpti_ExternalCorrelationKind kind, uint64_t external_id,
                                         uint32_t correlation_id);
// Any record whose kind the fake knows (see cuptiActivityGetNextRecord); the caller fills it.
int fake_cupti_emit_record(const CUpti_Activity* record);
int fake_cupti_kind_enabled(CUpti_ActivityKind kind, uint32_t context_id);

// The GPU finished: fills the timestamps of every incomplete kernel record still held in a
// buffer (start, end, completed = end) and lets default flushes deliver those buffers.
void fake_cupti_complete_pending(uint64_t start, uint64_t end);
// Adds `n` to the dropped-records counter, as when CUPTI had no buffer space.
void fake_cupti_drop_records(size_t n);

// Occupies the subscriber slot the way Nsight Systems or Kineto would: a later cuptiSubscribe*
// fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and _v2 reports "CUPTI for <name>".
// Returns 0 on success, -1 if a subscriber already exists.
int fake_cupti_set_second_subscriber(const char* name);

// ---- hardware profilers (see hw_state.h for the failures FAKE_CUPTI_FAIL injects) ----

// Issues CUPTI_CBID_RESOURCE_MODULE_LOADED for a module of `context_id` with this cubin;
// returns the CRC cuptiGetCubinCrc gives it.
uint64_t fake_cupti_load_module(uint32_t context_id, const void* cubin, size_t size);
// Queues PC samples on a context where PC sampling is enabled and configured (else returns 0).
int fake_cupti_pc_sample(uint32_t context_id, uint64_t cubin_crc, const char* function,
                         uint64_t pc_offset, uint32_t stall_index, uint32_t samples);
// NVTX callbacks (CUPTI_CB_DOMAIN_NVTX) of nvtxRangePushA / nvtxRangePop.
void fake_cupti_nvtx_push(const char* name);
void fake_cupti_nvtx_pop(void);

// ---- what the fake did ----
typedef struct FakeCuptiStats {
  uint64_t api_calls;
  uint64_t callbacks_issued;
  uint64_t buffers_requested;
  uint64_t buffers_completed;            // handed to the complete callback, all threads
  uint64_t buffers_completed_on_worker;  // ... on the fake's worker thread
  uint64_t empty_buffers_returned;       // completed with validSize 0 (too small to use)
  uint64_t records_written;
  uint64_t records_delivered;
  uint64_t records_dropped;       // total ever dropped (the CUPTI counter resets when read)
  uint64_t incomplete_delivered;  // incomplete records delivered by a forced flush
  uint64_t flush_all_calls;
  uint64_t forced_flush_calls;
  uint64_t subscribe_calls;
  uint64_t subscribe_rejected;
  uint64_t misaligned_buffers;       // request callback gave a buffer not 8-byte aligned
  uint64_t timestamp_callback_late;  // registered after an activity kind was enabled
  uint64_t kinds_ever_enabled;       // bit k set if kind k (< 64) was ever enabled
  uint64_t pending_buffers;          // buffers holding records not yet delivered
  uint64_t hw_trace_enabled;         // cuptiActivityEnableHWTrace(1) taken (FAKE_CUPTI_HW_TRACE)
  uint64_t hw_trace_late;            // ... refused: a context existed already
  uint64_t hw_trace_early;           // ... refused: inside cuInit (fake_cupti_cu_init_finished)
  uint64_t finalize_calls;           // cuptiFinalize
  uint64_t subscribed;               // 1 while a client (not the second_subscriber) subscribes
  uint64_t kinds_enabled;            // activity kinds enabled now, on any context or globally
  uint64_t calls_across_finalize;    // CUPTI calls from a client's callback that a
                                     // cuptiFinalize overtook (before or during the call)
  uint64_t finalize_off_api_exit;    // cuptiFinalize other than from a callback at the exit of
                                     // a runtime or driver API call
  uint64_t finalize_after_callback_off;  // cuptiFinalize after an API callback was switched
                                         // off by id (crashes real CUPTI 13.0 under PyTorch)
} FakeCuptiStats;
void fake_cupti_get_stats(FakeCuptiStats* stats);
// One line "fake-cupti: pid=... key=value ..." written to `fd` (async-signal-safe enough for
// tests: no locks, one write()).
void fake_cupti_print_stats(int fd);

// Back to the state of a freshly loaded library (subscriber, kinds, callbacks, buffers, worker,
// counters), for in-process unit tests. Buffers still held are dropped without delivery.
void fake_cupti_reset(void);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
