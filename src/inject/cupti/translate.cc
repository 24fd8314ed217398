#include "inject/cupti/translate.h"

#include <cupti.h>

#include <cstring>
#include <string>

#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

OverheadKind ToOverheadKind(CUpti_ActivityOverheadKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return OverheadKind::kDriverCompiler;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return OverheadKind::kBufferFlush;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return OverheadKind::kInstrumentation;
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return OverheadKind::kResource;
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return OverheadKind::kModuleLoading;
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return OverheadKind::kLazyFunctionLoading;
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return OverheadKind::kCommandBufferFull;
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return OverheadKind::kActivityBufferRequest;
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
      return OverheadKind::kUvmActivityInit;
    default:
      return OverheadKind::kUnknown;
  }
}

// The fields Memcpy6 and MemcpyPtoP4 share.
template <class CuptiCopy>
MemcpyRecord CopyCommon(uint32_t pid, const CuptiCopy& m) {
  MemcpyRecord r;
  r.pid = pid;
  r.kind = static_cast<MemcpyKind>(m.copyKind);
  r.src_kind = static_cast<MemoryKind>(m.srcKind);
  r.dst_kind = static_cast<MemoryKind>(m.dstKind);
  r.bytes = m.bytes;
  r.device_id = m.deviceId;
  r.context_id = m.contextId;
  r.stream_id = m.streamId;
  r.start_ns = m.start;
  r.end_ns = m.end;
  r.correlation_id = m.correlationId;
  r.graph_id = m.graphId;
  r.graph_node_id = m.graphNodeId;
  return r;
}

// CUPTI marks "not collected" timestamps as 0; a record that never completed has both 0.
bool Incomplete(uint64_t start, uint64_t end) {
  return start == 0 || end < start;
}

}  // namespace

std::string_view StripVersionSuffix(std::string_view name) {
  const size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string_view::npos) {
    name.remove_suffix(name.size() - v);
  }
  return name;
}

std::string CleanApiName(const char* name) {
  return std::string(StripVersionSuffix(name ? name : ""));
}

StringId Translator::Name(const char* text) {
  if (resolve_name_) text = resolve_name_(text);
  return names_.InternLocked(text);
}

StringId Translator::ApiName(uint32_t domain, uint32_t cbid) {
  const uint64_t key = (static_cast<uint64_t>(domain) << 32) | cbid;
  auto it = api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  const char* name = nullptr;
  std::string text;
  if (cuptiGetCallbackName(static_cast<CUpti_CallbackDomain>(domain), cbid, &name) ==
          CUPTI_SUCCESS &&
      name != nullptr) {
    text = CleanApiName(name);
  } else {
    text = (domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver api " : "runtime api ") +
           std::to_string(cbid);
  }
  StringId id = names_.InternLocked(std::string_view(text));
  api_names_.emplace(key, id);
  return id;
}

// A buffer holds thousands of records, mostly of one or two kinds: sized once, the batch's
// vectors are not regrown (and their new pages faulted in) log2(n) times on CUPTI's thread.
// Walking the buffer twice costs less than one regrowth.
void Translator::ReserveForBuffer(uint8_t* buffer, size_t valid_size, RecordBatch& batch) {
  size_t kernels = 0, copies = 0, sets = 0, apis = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        ++kernels;
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        ++copies;
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        ++sets;
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
      case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API:
        ++apis;
        break;
      default:
        break;
    }
  }
  batch.kernels.reserve(batch.kernels.size() + kernels);
  batch.memcpys.reserve(batch.memcpys.size() + copies);
  batch.memsets.reserve(batch.memsets.size() + sets);
  batch.apis.reserve(batch.apis.size() + apis);
}

TranslateCounts Translator::TranslateBuffer(uint8_t* buffer, size_t valid_size,
                                            RecordBatch& batch) {
  TranslateCounts counts;
  ReserveForBuffer(buffer, valid_size, batch);
  auto lock = names_.Lock();
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    ++counts.records;
    Translate(record, batch, counts);
  }
  return counts;
}

void Translator::Translate(const void* raw, RecordBatch& batch, TranslateCounts& counts) {
  const auto* record = static_cast<const CUpti_Activity*>(raw);
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (Incomplete(k->start, k->end)) {
        ++counts.incomplete;
        return;
      }
      KernelRecord r;
      r.pid = pid_;
      r.name = Name(k->name);
      r.device_id = k->deviceId;
      r.context_id = k->contextId;
      r.stream_id = k->streamId;
      r.start_ns = k->start;
      r.end_ns = k->end;
      r.grid_x = static_cast<uint32_t>(k->gridX);
      r.grid_y = static_cast<uint32_t>(k->gridY);
      r.grid_z = static_cast<uint32_t>(k->gridZ);
      r.block_x = static_cast<uint32_t>(k->blockX);
      r.block_y = static_cast<uint32_t>(k->blockY);
      r.block_z = static_cast<uint32_t>(k->blockZ);
      r.cluster_x = k->clusterX;
      r.cluster_y = k->clusterY;
      r.cluster_z = k->clusterZ;
      r.registers_per_thread = k->registersPerThread;
      r.static_shared_bytes = static_cast<uint32_t>(k->staticSharedMemory);
      r.dynamic_shared_bytes = static_cast<uint32_t>(k->dynamicSharedMemory);
      r.correlation_id = k->correlationId;
      r.graph_id = k->graphId;
      r.graph_node_id = k->graphNodeId;
      r.device_launched = k->isDeviceLaunched;
      batch.kernels.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      if (Incomplete(m->start, m->end)) {
        ++counts.incomplete;
        return;
      }
      MemcpyRecord r = CopyCommon(pid_, *m);
      r.src_device_id = r.dst_device_id = m->deviceId;
      r.runtime_correlation_id = m->runtimeCorrelationId;
      batch.memcpys.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      if (Incomplete(m->start, m->end)) {
        ++counts.incomplete;
        return;
      }
      MemcpyRecord r = CopyCommon(pid_, *m);
      r.src_device_id = m->srcDeviceId;
      r.dst_device_id = m->dstDeviceId;
      batch.memcpys.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      if (Incomplete(m->start, m->end)) {
        ++counts.incomplete;
        return;
      }
      MemsetRecord r;
      r.pid = pid_;
      r.bytes = m->bytes;
      r.value = m->value;
      r.memory_kind = static_cast<MemoryKind>(m->memoryKind);
      r.device_id = m->deviceId;
      r.context_id = m->contextId;
      r.stream_id = m->streamId;
      r.start_ns = m->start;
      r.end_ns = m->end;
      r.correlation_id = m->correlationId;
      r.graph_id = m->graphId;
      r.graph_node_id = m->graphNodeId;
      batch.memsets.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_INTERNAL_LAUNCH_API: {
      const auto* a = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      if (Incomplete(a->start, a->end)) {
        ++counts.incomplete;
        return;
      }
      ApiRecord r;
      r.pid = a->processId ? a->processId : pid_;
      r.tid = a->threadId;
      r.domain = record->kind == CUPTI_ACTIVITY_KIND_RUNTIME  ? ApiDomain::kRuntime
                 : record->kind == CUPTI_ACTIVITY_KIND_DRIVER ? ApiDomain::kDriver
                                                              : ApiDomain::kInternal;
      r.callback_id = a->cbid;
      r.name = ApiName(record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                                   : CUPTI_CB_DOMAIN_DRIVER_API,
                       a->cbid);
      r.start_ns = a->start;
      r.end_ns = a->end;
      r.correlation_id = a->correlationId;
      r.return_code = static_cast<int32_t>(a->returnValue);
      batch.apis.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(record);
      if (Incomplete(s->start, s->end)) {
        ++counts.incomplete;
        return;
      }
      SyncRecord r;
      r.pid = pid_;
      r.kind = static_cast<SyncKind>(s->type);
      r.context_id = s->contextId;
      r.stream_id = s->streamId;
      r.event_id = s->cudaEventId;
      r.start_ns = s->start;
      r.end_ns = s->end;
      r.correlation_id = s->correlationId;
      batch.syncs.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(record);
      MemoryRecord r;
      r.pid = m->processId ? m->processId : pid_;
      r.op = static_cast<MemoryOp>(m->memoryOperationType);
      r.memory_kind = static_cast<MemoryKind>(m->memoryKind);
      r.address = m->address;
      r.bytes = m->bytes;
      r.device_id = m->deviceId;
      r.context_id = m->contextId;
      r.stream_id = m->streamId;
      r.timestamp_ns = m->timestamp;
      r.correlation_id = m->correlationId;
      r.is_async = m->isAsync != 0;
      batch.memories.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
      const uint32_t tid = m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ||
                                   m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS
                               ? m->objectId.pt.threadId
                               : 0;
      if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
        NvtxRecord r;
        r.pid = pid_;
        r.tid = tid;
        r.kind = NvtxKind::kMark;
        r.name = Name(m->name);
        r.domain = Name(m->domain);
        r.start_ns = r.end_ns = m->timestamp;
        batch.nvtxs.push_back(r);
      } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
        open_markers_[m->id] = OpenMarker{m->timestamp, Name(m->name), Name(m->domain), tid};
      } else if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
        auto it = open_markers_.find(m->id);
        if (it == open_markers_.end()) return;  // started before recording began
        NvtxRecord r;
        r.pid = pid_;
        r.tid = it->second.tid;
        r.kind = NvtxKind::kRange;
        r.name = it->second.name;
        r.domain = it->second.domain;
        r.start_ns = it->second.start_ns;
        r.end_ns = m->timestamp;
        batch.nvtxs.push_back(r);
        open_markers_.erase(it);
      }
      return;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      const auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(record);
      OverheadRecord r;
      r.pid = pid_;
      r.tid = o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? o->objectId.pt.threadId : 0;
      r.kind = ToOverheadKind(o->overheadKind);
      r.start_ns = o->start;
      r.end_ns = o->end;
      batch.overheads.push_back(r);
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      DeviceRecord r;
      r.pid = pid_;
      r.device_id = d->id;
      r.name = Name(d->name);
      r.compute_major = d->computeCapabilityMajor;
      r.compute_minor = d->computeCapabilityMinor;
      r.sm_count = d->numMultiprocessors;
      r.warp_size = d->numThreadsPerWarp;
      r.max_threads_per_block = d->maxThreadsPerBlock;
      r.max_warps_per_sm = d->maxWarpsPerMultiprocessor;
      r.max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
      r.max_registers_per_block = d->maxRegistersPerBlock;
      r.max_registers_per_sm = d->maxRegistersPerMultiprocessor;
      r.max_shared_per_block = d->maxSharedMemoryPerBlock;
      r.max_shared_per_sm = d->maxSharedMemoryPerMultiprocessor;
      r.global_memory_bytes = d->globalMemorySize;
      r.memory_bandwidth_kbps = d->globalMemoryBandwidth;
      r.core_clock_khz = d->coreClockRate;
      batch.devices.push_back(r);
      DeviceUuid uuid;
      uuid.device_id = d->id;
      std::memcpy(uuid.bytes, d->uuid.bytes, sizeof(uuid.bytes));
      batch.device_uuids.push_back(uuid);
      return;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      const auto* c = reinterpret_cast<const CUpti_ActivityContext3*>(record);
      batch.contexts.push_back(
          ContextRecord{pid_, c->contextId, c->deviceId, c->nullStreamId, c->isGreenContext});
      return;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      batch.external_correlations.push_back(ExternalCorrelationRecord{
          pid_, static_cast<uint32_t>(e->externalKind), e->externalId, e->correlationId});
      return;
    }
    default:
      ++counts.untranslated;
      return;
  }
}

}  // namespace gpuperf::inject
