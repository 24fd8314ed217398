#include "inject/nccl/nccl_plugin.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <new>

#include "inject/nccl/nccl_events.h"
#include "inject/nccl/nccl_profiler_abi.h"
#include "inject/record_batch.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

using namespace nccl_abi;

// One table for the process, made at the first communicator's init (a process without NCCL
// never pays its ~1 MiB) and never freed, so a late stopEvent cannot touch freed memory.
std::atomic<NcclEventTable*> g_table{nullptr};

NcclEventTable* MakeTable() {
  static NcclEventTable* table = [] {
    auto* made = new (std::nothrow) NcclEventTable();
    g_table.store(made, std::memory_order_release);
    return made;
  }();
  return table;
}

NcclEventTable* Table() {
  return g_table.load(std::memory_order_acquire);
}

uint32_t ThreadId() {
  thread_local uint32_t tid = 0;
  if (tid == 0) tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return tid;
}

// Records only while the recorder runs and captures (the capture range applies).
bool Recording() {
  Recorder* r = GetRecorder();
  return r != nullptr && !r->disabled.load(std::memory_order_relaxed) &&
         r->capturing.load(std::memory_order_relaxed);
}

int Init(void** context, uint64_t comm_hash, int* activation_mask, const char* comm_name,
         int nnodes, int nranks, int rank, uint32_t version) {
  if (context == nullptr || activation_mask == nullptr) return kInternalError;
  *context = nullptr;
  Recorder* r = GetRecorder();
  if (r == nullptr || r->disabled.load()) return kInternalError;  // NCCL goes on without us
  NcclEventTable* table = MakeTable();
  NcclEventTable::Comm* comm = table == nullptr ? nullptr
                                                : table->AddComm(comm_hash, comm_name, rank, nranks,
                                                                 nnodes, version, MonotonicNs());
  if (comm == nullptr) {
    CountStat(StatId::nccl_events_ignored);
    return kInternalError;
  }
  CountStat(StatId::nccl_communicators);
  // The mask is NCCL's, one for the process: every communicator's init sets it alike.
  *activation_mask = kProfileColl;
  *context = comm;
  return kSuccess;
}

template <class Descr>
int StartEvent(void* context, void** handle, Descr* descr) {
  if (handle == nullptr) return kSuccess;
  *handle = nullptr;
  if (descr == nullptr || descr->type != static_cast<decltype(descr->type)>(kProfileColl)) {
    CountStat(StatId::nccl_events_ignored);
    return kSuccess;
  }
  NcclEventTable* table = Table();
  NcclEventTable::Comm* comm = table == nullptr ? nullptr : table->FindComm(context);
  if (comm == nullptr) {
    CountStat(StatId::nccl_events_ignored);
    return kSuccess;
  }
  if (!Recording()) return kSuccess;
  const uint64_t now = MonotonicNs();
  NcclCollectiveStart fields;
  fields.seq = descr->coll.seq_number;
  fields.func = descr->coll.func;
  fields.datatype = descr->coll.datatype;
  fields.algorithm = descr->coll.algo;
  fields.protocol = descr->coll.proto;
  fields.count = descr->coll.count;
  fields.root = descr->coll.root;
  fields.rank = descr->rank;
  fields.channels = descr->coll.channels;
  *handle = table->Start(comm, fields, ThreadId(), now);
  CountStat(StatId::nccl_plugin_ns, MonotonicNs() - now);
  return kSuccess;
}

int StopEvent(void* handle) {
  if (handle == nullptr) return kSuccess;
  const uint64_t now = MonotonicNs();
  NcclEventTable* table = Table();
  if (table == nullptr || !table->Stop(handle, now)) CountStat(StatId::nccl_events_ignored);
  CountStat(StatId::nccl_plugin_ns, MonotonicNs() - now);
  return kSuccess;
}

// State changes (proxy steps, kernel channels) belong to event types gpuperf never asks for.
int RecordEventState(void*, int, void*) {
  return kSuccess;
}

// The communicator's slot stays: its collectives may still be drained after this.
int Finalize(void*) {
  return kSuccess;
}

int InitV5(void** context, uint64_t comm_hash, int* activation_mask, const char* comm_name,
           int nnodes, int nranks, int rank, DebugLogger) {
  return Init(context, comm_hash, activation_mask, comm_name, nnodes, nranks, rank, 5);
}
int InitV4(void** context, int* activation_mask, const char* comm_name, uint64_t comm_hash,
           int nnodes, int nranks, int rank, DebugLogger) {
  return Init(context, comm_hash, activation_mask, comm_name, nnodes, nranks, rank, 4);
}

}  // namespace

void DrainNcclEvents(Recorder& recorder, bool final) {
  NcclEventTable* table = Table();
  if (table == nullptr) return;
  // The writer's period and the exit path may both drain; app threads never take this.
  static std::mutex drain_mutex;
  std::lock_guard<std::mutex> lock(drain_mutex);
  auto batch = std::make_unique<RecordBatch>();
  table->Drain(recorder.pid, recorder.names, batch->nccl_collectives, batch->nccl_comms, final);
  if (table->dropped() > 0) SetStat(StatId::nccl_collectives_dropped, table->dropped());
  if (table->unfinished() > 0) SetStat(StatId::nccl_unfinished, table->unfinished());
  if (batch->nccl_collectives.empty() && batch->nccl_comms.empty()) return;
  CountStat(StatId::nccl_collectives, batch->nccl_collectives.size());
  recorder.writer.Enqueue(std::move(batch));
}

}  // namespace gpuperf::inject

// The tables NCCL looks up by name (newest first). Exported through exports.map.
extern "C" {
__attribute__((visibility("default"))) gpuperf::inject::nccl_abi::ProfilerV5 ncclProfiler_v5 = {
    "gpuperf",
    gpuperf::inject::InitV5,
    gpuperf::inject::StartEvent<gpuperf::inject::nccl_abi::EventDescrV5>,
    gpuperf::inject::StopEvent,
    gpuperf::inject::RecordEventState,
    gpuperf::inject::Finalize};
__attribute__((visibility("default"))) gpuperf::inject::nccl_abi::ProfilerV4 ncclProfiler_v4 = {
    "gpuperf",
    gpuperf::inject::InitV4,
    gpuperf::inject::StartEvent<gpuperf::inject::nccl_abi::EventDescrV4>,
    gpuperf::inject::StopEvent,
    gpuperf::inject::RecordEventState,
    gpuperf::inject::Finalize};
}
