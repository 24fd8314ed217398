// Synchronizations (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, which
// make the CPU wait, and cudaStreamWaitEvent, which makes a stream wait; and their driver
// calls) as sync records, written from gpuperf's own API callbacks.
//
// Why not CUPTI's SYNCHRONIZATION activity kind: in the decode benchmark on the H100 it made
// every step 21-31% slower, alone of all the kinds gpuperf records, and disabling it again
// did not undo it; a CUPTI that never had it on costs 1-3% there (docs/performance.md,
// session 11). Its records are the host call's own start and end, which the callbacks see
// anyway: a sync record from the callback has the same kind, thread, stream and times, and
// its correlation id names the call's launch link (its stack; a stream's wait on an event is
// not linked, as before). What it lacks is CUPTI's event id (0 here), which no output uses,
// and CUPTI's records of event and stream queries (no wait: a query returns at once).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string_view>

#include "gpuperf/records.h"

namespace gpuperf::inject {

struct Recorder;

// The kind of synchronization a CUDA call (its name without version or per-thread suffix, as
// CUPTI spells it) is, or kUnknown for any other call.
SyncKind SyncKindOfCall(std::string_view name, bool runtime);
// Whether the CPU waits in it (everything but a stream's wait on an event). Such calls are
// linked to their stack: the report's sync rows and the stall insights name the place that
// waited. A few calls a step against hundreds of launches, so they always get their stack,
// whatever --sample-launches leaves to the launches.
constexpr bool IsHostWait(SyncKind kind) {
  return kind != SyncKind::kUnknown && kind != SyncKind::kStreamWaitEvent;
}

// Where the stream is: every stream synchronize and stream-wait-event call, runtime or driver,
// takes the stream as its first parameter (cudaStreamSynchronize_v3020_params,
// cudaStreamWaitEvent_v3020_params, cuStreamSynchronize_params, cuStreamWaitEvent_params and
// their per-thread-stream variants).
struct HostWait {
  SyncKind kind = SyncKind::kUnknown;
  bool per_thread_stream = false;  // a _ptsz call: stream 0 is the thread's own
  bool stream_known = false;       // a wait on or of one stream: `stream` is it
  CUstream stream = nullptr;
};

// At the call's entry: what the record will need from its parameters.
HostWait HostWaitAtEntry(SyncKind kind, bool per_thread_stream, const CUpti_CallbackData* data);

// At the outermost call's exit: the record, handed to the writer.
void RecordHostWait(Recorder& recorder, const HostWait& wait, uint32_t tid, uint64_t start_ns,
                    uint64_t end_ns, const CUpti_CallbackData* data);

}  // namespace gpuperf::inject
