#include "inject/cupti/host_waits.h"

#include <memory>
#include <new>

#include "inject/record_batch.h"
#include "inject/recorder.h"
#include "inject/stats.h"

namespace gpuperf::inject {

SyncKind SyncKindOfCall(std::string_view name, bool runtime) {
  struct Wait {
    std::string_view runtime, driver;
    SyncKind kind;
  };
  static constexpr Wait kWaits[] = {
      {"cudaDeviceSynchronize", "cuCtxSynchronize", SyncKind::kContextSynchronize},
      {"cudaStreamSynchronize", "cuStreamSynchronize", SyncKind::kStreamSynchronize},
      {"cudaEventSynchronize", "cuEventSynchronize", SyncKind::kEventSynchronize},
      {"cudaStreamWaitEvent", "cuStreamWaitEvent", SyncKind::kStreamWaitEvent},
  };
  for (const Wait& wait : kWaits) {
    if (name == (runtime ? wait.runtime : wait.driver)) return wait.kind;
  }
  return SyncKind::kUnknown;
}

HostWait HostWaitAtEntry(SyncKind kind, bool per_thread_stream, const CUpti_CallbackData* data) {
  HostWait wait{.kind = kind, .per_thread_stream = per_thread_stream};
  const bool on_stream = kind == SyncKind::kStreamSynchronize || kind == SyncKind::kStreamWaitEvent;
  if (on_stream && data->functionParams != nullptr) {
    wait.stream = *static_cast<const CUstream*>(data->functionParams);
    wait.stream_known = true;
  }
  return wait;
}

void RecordHostWait(Recorder& recorder, const HostWait& wait, uint32_t tid, uint64_t start_ns,
                    uint64_t end_ns, const CUpti_CallbackData* data) {
  SyncRecord r;
  r.pid = recorder.pid;
  r.tid = tid;
  r.kind = wait.kind;
  r.context_id = data->contextUid;
  r.stream_id = UINT32_MAX;  // CUPTI's value for a wait on no one stream
  if (wait.stream_known && data->context != nullptr) {
    uint32_t stream_id = 0;
    if (cuptiGetStreamIdEx(data->context, wait.stream, wait.per_thread_stream ? 1 : 0,
                           &stream_id) == CUPTI_SUCCESS) {
      r.stream_id = stream_id;
    }
  }
  r.event_id = 0;
  r.start_ns = start_ns;
  r.end_ns = end_ns;
  r.correlation_id = data->correlationId;
  // A few waits a step: a batch of its own each, to the writer's queue (a short lock the
  // writer holds only to swap the queue, taken by a thread that has just waited for the GPU).
  std::unique_ptr<RecordBatch> batch(new (std::nothrow) RecordBatch());
  if (batch == nullptr) {
    CountStat(StatId::writer_queue_full);
    return;
  }
  batch->syncs.push_back(r);
  recorder.writer.Enqueue(std::move(batch));
}

}  // namespace gpuperf::inject
