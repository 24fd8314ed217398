#include "inject/cupti/pc_sampling.h"

#include <cupti.h>
#include <cupti_pcsampling.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/hardware_advice.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/cubin_saver.h"
#include "inject/cupti/cupti_call.h"
#include "inject/pc_sample_table.h"
#include "inject/record_batch.h"
#include "inject/recorder.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

// PCs per buffer: one GetData hands over at most this many (more come with the next call).
constexpr size_t kBufferPcs = 4096;

// A buffer CUPTI fills: the data header, its PC records, and their stall arrays.
struct SampleBuffer {
  CUpti_PCSamplingData data{};
  std::vector<CUpti_PCSamplingPCData> pcs;
  std::vector<CUpti_PCSamplingStallReason> stalls;
  size_t stall_count = 0;

  void Allocate(size_t stall_reasons) {
    stall_count = stall_reasons;
    pcs.assign(kBufferPcs, CUpti_PCSamplingPCData{});
    stalls.assign(kBufferPcs * stall_reasons, CUpti_PCSamplingStallReason{});
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = kBufferPcs;
    data.pPcData = pcs.data();
    Reset();
  }
  // stallReasonCount is in and out: the room of each record, then what CUPTI wrote.
  void Reset() {
    for (size_t i = 0; i < pcs.size(); ++i) {
      pcs[i].size = sizeof(CUpti_PCSamplingPCData);
      pcs[i].stallReason = stalls.data() + i * stall_count;
      pcs[i].stallReasonCount = stall_count;
    }
    data.totalNumPcs = 0;
    data.remainingNumPcs = 0;
  }
};

struct PcContext {
  CUcontext context = nullptr;
  uint32_t device_id = 0;
  std::timed_mutex mutex;
  bool enabled = false;
  bool disabled = false;
  bool pending_apply = false;
  std::vector<uint32_t> stall_indexes;
  SampleBuffer configured;  // CUPTI flushes into it at module unload and at disable
  SampleBuffer collected;   // what GetData fills
};

Recorder* g_recorder = nullptr;
PcSampleTable g_table;
std::mutex g_contexts_mutex;
std::map<CUcontext, std::unique_ptr<PcContext>> g_contexts;  // disabled, never erased
const char g_failure_logged = 0;
const char g_buffer_full_logged = 0;

void Unavailable(uint32_t device_id, CUptiResult result) {
  CountStat(StatId::hardware_unavailable);
  const std::string line = HardwareFailureLine("PC sampling", "device " + std::to_string(device_id),
                                               static_cast<int>(result), CuptiErrorText(result));
  LogOnceFor(&g_failure_logged, "%s", line.c_str());
}

// Adds what CUPTI put into `buffer` to the table.
void Consume(SampleBuffer& buffer) {
  const CUpti_PCSamplingData& data = buffer.data;
  uint64_t samples = 0;
  for (size_t i = 0; i < data.totalNumPcs && i < buffer.pcs.size(); ++i) {
    const CUpti_PCSamplingPCData& pc = buffer.pcs[i];
    // CUPTI shares these names between records and across calls: never freed here.
    const char* function = pc.functionName != nullptr ? pc.functionName : "";
    for (size_t s = 0; s < pc.stallReasonCount && s < buffer.stall_count; ++s) {
      const CUpti_PCSamplingStallReason& stall = pc.stallReason[s];
      g_table.Add(pc.cubinCrc, function, pc.pcOffset, pc.correlationId,
                  stall.pcSamplingStallReasonIndex, stall.samples);
      samples += stall.samples;
    }
  }
  if (samples) CountStat(StatId::pc_samples, samples);
  if (data.droppedSamples) CountStat(StatId::pc_samples_dropped, data.droppedSamples);
  if (data.nonUsrKernelsTotalSamples) {
    CountStat(StatId::pc_samples_unattributed, data.nonUsrKernelsTotalSamples);
  }
  if (data.hardwareBufferFull) {
    LogOnceFor(&g_buffer_full_logged,
               "PC sampling: the hardware buffer filled up and samples were lost; sample less "
               "often (--pc-period with a larger value)");
  }
  buffer.Reset();
}

// Samples CUPTI holds for `pc` (its lock held): those it flushed into the configured buffer,
// and with `get_data` those GetData hands over (in pieces; only off CUPTI's callbacks).
void Collect(PcContext& pc, bool get_data) {
  if (pc.configured.data.totalNumPcs > 0) Consume(pc.configured);
  if (!get_data || !pc.enabled || pc.disabled || pc.pending_apply) return;
  for (int round = 0; round < 64; ++round) {
    CUpti_PCSamplingGetDataParams params{};
    params.size = CUpti_PCSamplingGetDataParamsSize;
    params.ctx = pc.context;
    params.pcSamplingData = &pc.collected.data;
    const CUptiResult r = cuptiPCSamplingGetData(&params);
    if (r != CUPTI_SUCCESS && r != CUPTI_ERROR_OUT_OF_MEMORY) {
      CountStat(StatId::cupti_call_failed);
      LogVerbose("cuptiPCSamplingGetData: %s", CuptiErrorText(r));
      pc.collected.Reset();
      return;
    }
    const size_t got = pc.collected.data.totalNumPcs;
    const size_t remaining = pc.collected.data.remainingNumPcs;
    Consume(pc.collected);
    if (got == 0 || remaining == 0) return;
  }
}

// Enables sampling and learns the device's stall reasons; Apply then configures it.
bool Enable(PcContext& pc) {
  CUpti_PCSamplingEnableParams enable{};
  enable.size = CUpti_PCSamplingEnableParamsSize;
  enable.ctx = pc.context;
  CUptiResult r = cuptiPCSamplingEnable(&enable);
  if (r != CUPTI_SUCCESS) return Unavailable(pc.device_id, r), false;
  pc.enabled = true;

  size_t count = 0;
  CUpti_PCSamplingGetNumStallReasonsParams num{};
  num.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  num.ctx = pc.context;
  num.numStallReasons = &count;
  if ((r = cuptiPCSamplingGetNumStallReasons(&num)) != CUPTI_SUCCESS) {
    return Unavailable(pc.device_id, r), false;
  }
  pc.stall_indexes.assign(count, 0);
  std::vector<std::vector<char>> names(count, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE));
  std::vector<char*> name_pointers(count);
  for (size_t i = 0; i < count; ++i) name_pointers[i] = names[i].data();
  CUpti_PCSamplingGetStallReasonsParams reasons{};
  reasons.size = CUpti_PCSamplingGetStallReasonsParamsSize;
  reasons.ctx = pc.context;
  reasons.numStallReasons = count;
  reasons.stallReasonIndex = pc.stall_indexes.data();
  reasons.stallReasons = name_pointers.data();
  if ((r = cuptiPCSamplingGetStallReasons(&reasons)) != CUPTI_SUCCESS) {
    return Unavailable(pc.device_id, r), false;
  }
  for (size_t i = 0; i < count; ++i) {
    names[i].back() = '\0';
    g_table.SetStallName(pc.stall_indexes[i], names[i].data());
  }
  pc.configured.Allocate(count);
  pc.collected.Allocate(count);
  return true;
}

CUptiResult Apply(PcContext& pc) {
  std::vector<CUpti_PCSamplingConfigurationInfo> info;
  auto add = [&info](CUpti_PCSamplingConfigurationAttributeType type) -> auto& {
    info.emplace_back();
    info.back().attributeType = type;
    return info.back().attributeData;
  };
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER)
      .samplingDataBufferData.samplingDataBuffer = &pc.configured.data;
  add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE).collectionModeData.collectionMode =
      CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  auto& stalls = add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON).stallReasonData;
  stalls.stallReasonCount = pc.stall_indexes.size();
  stalls.pStallReasonIndex = pc.stall_indexes.data();
  if (g_recorder->config.pc_sampling_period != 0) {
    add(CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD)
        .samplingPeriodData.samplingPeriod = g_recorder->config.pc_sampling_period;
  }
  CUpti_PCSamplingConfigurationInfoParams params{};
  params.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  params.ctx = pc.context;
  params.numAttributes = info.size();
  params.pPCSamplingConfigurationInfo = info.data();
  const CUptiResult r = cuptiPCSamplingSetConfigurationAttribute(&params);
  for (const CUpti_PCSamplingConfigurationInfo& i : info) {
    if (r != CUPTI_SUCCESS && i.attributeStatus != CUPTI_SUCCESS) {
      LogVerbose("PC sampling attribute %d: %s", static_cast<int>(i.attributeType),
                 CuptiErrorText(i.attributeStatus));
    }
  }
  return r;
}

// In the context-created callback. Should CUPTI refuse to be configured from inside a
// callback, the writer thread configures it at its next period (PendingApply).
void Configure(PcContext& pc) {
  if (!Enable(pc)) {
    pc.disabled = true;
    return;
  }
  const CUptiResult r = Apply(pc);
  if (r == CUPTI_ERROR_INVALID_OPERATION) {
    LogVerbose("PC sampling on device %u: configured from the writer thread", pc.device_id);
    pc.pending_apply = true;
  } else if (r != CUPTI_SUCCESS) {
    Unavailable(pc.device_id, r);
    pc.disabled = true;
  } else {
    LogVerbose("PC sampling on device %u: %zu stall reasons", pc.device_id,
               pc.stall_indexes.size());
  }
}

void PendingApply(PcContext& pc) {
  if (!pc.pending_apply || pc.disabled) return;
  pc.pending_apply = false;
  const CUptiResult r = Apply(pc);
  if (r != CUPTI_SUCCESS) {
    Unavailable(pc.device_id, r);
    pc.disabled = true;
  }
}

void Disable(PcContext& pc) {
  if (pc.disabled) return;
  pc.disabled = true;
  if (!pc.enabled) return;
  CUpti_PCSamplingDisableParams params{};
  params.size = CUpti_PCSamplingDisableParamsSize;
  params.ctx = pc.context;
  // Disabling copies the samples CUPTI still holds into the configured buffer.
  GP_CUPTI_CALL(cuptiPCSamplingDisable(&params));
  Consume(pc.configured);
}

void HandOver() {
  auto batch = std::make_unique<RecordBatch>();
  TakeSavedCubins(batch->cubins);
  g_table.Drain(g_recorder->pid, g_recorder->names, batch->pc_samples);
  if (batch->RecordCount() > 0) g_recorder->writer.Enqueue(std::move(batch));
}

PcContext* Find(CUcontext context) {
  std::lock_guard<std::mutex> lock(g_contexts_mutex);
  auto it = g_contexts.find(context);
  return it == g_contexts.end() ? nullptr : it->second.get();
}

void ContextCreated(CUcontext context) {
  auto created = std::make_unique<PcContext>();
  PcContext& pc = *created;
  pc.context = context;
  cuptiGetDeviceId(context, &pc.device_id);
  {
    std::lock_guard<std::mutex> lock(g_contexts_mutex);
    g_contexts[context] = std::move(created);
  }
  std::lock_guard<std::timed_mutex> lock(pc.mutex);
  const uint64_t begin = MonotonicNs();
  Configure(pc);
  CountStat(StatId::profiler_ns, MonotonicNs() - begin);
}

// A callback never waits for the writer thread's collection: it tries, briefly.
void CollectNow(CUcontext context, bool then_disable) {
  PcContext* pc = Find(context);
  if (pc == nullptr || !pc->mutex.try_lock_for(std::chrono::milliseconds(200))) return;
  Collect(*pc, false);
  if (then_disable) Disable(*pc);
  pc->mutex.unlock();
}

}  // namespace

bool StartPcSampling(Recorder& recorder) {
  if (!recorder.subscribed) {
    LogOnce("PC sampling needs gpuperf's CUPTI callbacks, which another tool holds: no samples");
    CountStat(StatId::hardware_unavailable);
    return false;
  }
  g_recorder = &recorder;
  StartSavingCubins(recorder);
  for (uint32_t cbid :
       {CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
        CUPTI_CBID_RESOURCE_MODULE_LOADED, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING}) {
    EnableExtraCallback(CUPTI_CB_DOMAIN_RESOURCE, cbid);
  }
  return true;
}

void PcSamplingCallback(int domain, uint32_t cbid, const void* data) {
  if (g_recorder == nullptr || domain != CUPTI_CB_DOMAIN_RESOURCE) return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
      ContextCreated(resource->context);
      break;
    case CUPTI_CBID_RESOURCE_MODULE_LOADED:
      SaveCubin(static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor));
      // CUPTI flushes into the configured buffer when a module unloads and another loads.
      CollectNow(resource->context, false);
      break;
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
      CollectNow(resource->context, false);
      break;
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
      CollectNow(resource->context, true);
      break;
    default:
      break;
  }
}

void CollectPcSamples() {
  if (g_recorder == nullptr) return;
  std::vector<PcContext*> contexts;
  {
    std::lock_guard<std::mutex> lock(g_contexts_mutex);
    for (auto& [context, pc] : g_contexts) contexts.push_back(pc.get());
  }
  for (PcContext* pc : contexts) {
    std::lock_guard<std::timed_mutex> lock(pc->mutex);
    PendingApply(*pc);
    Collect(*pc, true);
  }
  HandOver();
}

void FinishPcSampling() {
  if (g_recorder == nullptr) return;
  std::vector<PcContext*> contexts;
  {
    std::lock_guard<std::mutex> lock(g_contexts_mutex);
    for (auto& [context, pc] : g_contexts) contexts.push_back(pc.get());
  }
  for (PcContext* pc : contexts) {
    if (!pc->mutex.try_lock_for(std::chrono::seconds(5))) continue;
    Collect(*pc, true);
    Disable(*pc);
    pc->mutex.unlock();
  }
  HandOver();
}

}  // namespace gpuperf::inject
