// PC sampling (cupti_pcsampling.h) as the fake implements it: per context, the samples a test
// driver queued with fake_cupti_pc_sample, handed over by cuptiPCSamplingGetData (at most the
// buffer's collectNumPcs per call, the rest announced in remainingNumPcs) and flushed into the
// configured buffer by cuptiPCSamplingDisable. Stall reasons have indexes that are not their
// positions, as on real devices. Every entry point can be made to fail (hw_state.h).
#include <cupti_pcsampling.h>

#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "fake_cupti/fake_cupti.h"
#include "fake_cupti/hw_injected.h"
#include "fake_cupti/state.h"

namespace fake_cupti {
namespace {

const uint32_t kStallIndexes[] = {2, 5, 9};
const char* const kStallNames[] = {"smsp__pcsamp_warps_issue_stalled_long_scoreboard",
                                   "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle",
                                   "smsp__pcsamp_warps_issue_stalled_selected"};

struct PcState {
  bool enabled = false;
  CUpti_PCSamplingData* configured = nullptr;
  // (crc, function, pc) -> stall index -> samples
  std::map<std::tuple<uint64_t, std::string, uint64_t>, std::map<uint32_t, uint32_t>> pending;
};

std::mutex g_mutex;
std::map<CUcontext, PcState> g_states;

// Moves up to data->collectNumPcs pending PCs into `data`.
void Fill(PcState& state, CUpti_PCSamplingData* data) {
  size_t n = 0;
  uint64_t samples = 0;
  auto it = state.pending.begin();
  for (; it != state.pending.end() && n < data->collectNumPcs; ++n) {
    CUpti_PCSamplingPCData& pc = data->pPcData[n];
    pc.cubinCrc = std::get<0>(it->first);
    pc.functionName = const_cast<char*>(Intern(std::get<1>(it->first).c_str()));
    pc.pcOffset = std::get<2>(it->first);
    pc.functionIndex = 0;
    pc.correlationId = 0;  // continuous mode
    size_t s = 0;
    for (const auto& [index, count] : it->second) {
      if (s >= pc.stallReasonCount) break;
      pc.stallReason[s].pcSamplingStallReasonIndex = index;
      pc.stallReason[s].samples = count;
      samples += count;
      ++s;
    }
    pc.stallReasonCount = s;
    it = state.pending.erase(it);
  }
  data->totalNumPcs = n;
  data->remainingNumPcs = state.pending.size();
  data->totalSamples = samples;
  data->droppedSamples = 0;
  data->nonUsrKernelsTotalSamples = 0;
  data->hardwareBufferFull = 0;
}

}  // namespace
}  // namespace fake_cupti

using fake_cupti::Fail;

extern "C" {

int fake_cupti_pc_sample(uint32_t context_id, uint64_t cubin_crc, const char* function,
                         uint64_t pc_offset, uint32_t stall_index, uint32_t samples) {
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  auto it = fake_cupti::g_states.find(fake_cupti_context_handle(context_id));
  if (it == fake_cupti::g_states.end() || !it->second.enabled || it->second.configured == nullptr) {
    return 0;
  }
  it->second.pending[{cubin_crc, function, pc_offset}][stall_index] += samples;
  return 1;
}

CUptiResult CUPTIAPI cuptiGetCubinCrc(CUpti_GetCubinCrcParams* p) {
  FAKE_CUPTI_INJECTED(cuptiGetCubinCrc);
  if (p == nullptr || p->cubin == nullptr || p->cubinSize == 0) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  p->cubinCrc = fake_cupti::FakeCubinCrc(p->cubin, p->cubinSize);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingEnable(CUpti_PCSamplingEnableParams* p) {
  FAKE_CUPTI_INJECTED(cuptiPCSamplingEnable);
  if (p == nullptr || p->ctx == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  fake_cupti::g_states[p->ctx].enabled = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingDisable(CUpti_PCSamplingDisableParams* p) {
  if (p == nullptr || p->ctx == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  fake_cupti::PcState& state = fake_cupti::g_states[p->ctx];
  if (!state.enabled) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  // What is left goes into the configured buffer (what does not fit is lost, as in CUPTI).
  if (state.configured != nullptr) fake_cupti::Fill(state, state.configured);
  state.pending.clear();
  state.enabled = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiPCSamplingGetNumStallReasons(CUpti_PCSamplingGetNumStallReasonsParams* p) {
  FAKE_CUPTI_INJECTED(cuptiPCSamplingGetNumStallReasons);
  if (p == nullptr || p->numStallReasons == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *p->numStallReasons = std::size(fake_cupti::kStallIndexes);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingGetStallReasons(CUpti_PCSamplingGetStallReasonsParams* p) {
  if (p == nullptr || p->stallReasonIndex == nullptr || p->stallReasons == nullptr) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  for (size_t i = 0; i < p->numStallReasons && i < std::size(fake_cupti::kStallIndexes); ++i) {
    p->stallReasonIndex[i] = fake_cupti::kStallIndexes[i];
    std::strncpy(p->stallReasons[i], fake_cupti::kStallNames[i],
                 CUPTI_STALL_REASON_STRING_SIZE - 1);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiPCSamplingSetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams* p) {
  FAKE_CUPTI_INJECTED(cuptiPCSamplingSetConfigurationAttribute);
  if (p == nullptr || p->ctx == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  fake_cupti::PcState& state = fake_cupti::g_states[p->ctx];
  if (!state.enabled) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  CUptiResult result = CUPTI_SUCCESS;
  for (size_t i = 0; i < p->numAttributes; ++i) {
    CUpti_PCSamplingConfigurationInfo& info = p->pPCSamplingConfigurationInfo[i];
    info.attributeStatus = CUPTI_SUCCESS;
    switch (info.attributeType) {
      case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
        state.configured = static_cast<CUpti_PCSamplingData*>(
            info.attributeData.samplingDataBufferData.samplingDataBuffer);
        break;
      case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD: {
        const uint32_t period = info.attributeData.samplingPeriodData.samplingPeriod;
        if (period < 5 || period > 31)
          info.attributeStatus = result = CUPTI_ERROR_INVALID_PARAMETER;
        break;
      }
      default:
        break;
    }
  }
  return result == CUPTI_SUCCESS ? result : Fail(result);
}

CUptiResult CUPTIAPI
cuptiPCSamplingGetConfigurationAttribute(CUpti_PCSamplingConfigurationInfoParams* p) {
  return p ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiPCSamplingGetData(CUpti_PCSamplingGetDataParams* p) {
  FAKE_CUPTI_INJECTED(cuptiPCSamplingGetData);
  if (p == nullptr || p->ctx == nullptr || p->pcSamplingData == nullptr) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  fake_cupti::PcState& state = fake_cupti::g_states[p->ctx];
  if (!state.enabled) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  fake_cupti::Fill(state, static_cast<CUpti_PCSamplingData*>(p->pcSamplingData));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPCSamplingStart(CUpti_PCSamplingStartParams* p) {
  return p ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiPCSamplingStop(CUpti_PCSamplingStopParams* p) {
  return p ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

}  // extern "C"
