// The range profiler (cupti_range_profiler.h), the profiler target queries
// (cupti_profiler_target.h, cupti_target.h) and the profiler host API (cupti_profiler_host.h),
// as the fake implements them: every device is a "GH100"; a config image lists its metrics; a
// counter data image holds the names of the ranges measured; values come from FakeMetricValue.
// Auto ranges are the kernels emitted on the context while the profiler runs; user ranges are
// the ranges pushed. Every entry point can be made to fail (hw_state.h).
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "fake_cupti/hw_injected.h"
#include "fake_cupti/state.h"

struct CUpti_RangeProfiler_Object {
  CUcontext context = nullptr;
  uint32_t context_id = 0;
  bool started = false;
  bool configured = false;
  CUpti_ProfilerRange range = CUPTI_Range_INVALID;
  size_t max_ranges = 0;
  uint8_t* image = nullptr;
  size_t image_size = 0;
  std::vector<std::string> measured;  // ranges since the last decode
  std::vector<std::string> stack;     // open user ranges
};

struct CUpti_Profiler_Host_Object {
  std::string chip;
  std::vector<std::string> metrics;
};

namespace fake_cupti {
namespace {

constexpr char kConfigMagic[4] = {'F', 'K', 'C', 'F'};
constexpr char kDataMagic[4] = {'F', 'K', 'C', 'D'};
constexpr size_t kNameRoom = 256;  // bytes of counter data per range

std::mutex g_mutex;
std::vector<CUpti_RangeProfiler_Object*> g_objects;  // never freed: handles stay valid

// Counter data: magic, count, then count NUL-terminated names of kNameRoom bytes each.
uint32_t ImageCount(const uint8_t* image, size_t size) {
  if (image == nullptr || size < 8 || std::memcmp(image, kDataMagic, 4) != 0) return 0;
  uint32_t count = 0;
  std::memcpy(&count, image + 4, 4);
  return count;
}

const char* ImageName(const uint8_t* image, size_t size, size_t index) {
  const size_t offset = 8 + index * kNameRoom;
  if (index >= ImageCount(image, size) || offset + kNameRoom > size) return nullptr;
  return reinterpret_cast<const char*>(image + offset);
}

// Passes the fake's config needs: the multi-pass throughput breakdowns take several.
size_t FakePasses(const std::vector<std::string>& metrics) {
  size_t heavy = 0;
  for (const std::string& m : metrics) {
    for (const char* part :
         {"sm__throughput", "compute_memory_throughput", "instruction_throughput",
          "l1tex__throughput", "lts__throughput", "lts__t_sector_hit_rate"}) {
      if (m.find(part) != std::string::npos) ++heavy;
    }
  }
  return 1 + 2 * heavy;
}

std::vector<std::string> ConfigMetrics(const uint8_t* config, size_t size) {
  std::vector<std::string> metrics;
  if (config == nullptr || size < 4 || std::memcmp(config, kConfigMagic, 4) != 0) return metrics;
  for (size_t pos = 4; pos < size;) {
    const char* name = reinterpret_cast<const char*>(config + pos);
    const size_t length = strnlen(name, size - pos);
    if (length == 0) break;
    metrics.emplace_back(name, length);
    pos += length + 1;
  }
  return metrics;
}

}  // namespace

void ProfilerSawKernel(uint32_t context_id, const char* name) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (CUpti_RangeProfiler_Object* object : g_objects) {
    if (object->context_id == context_id && object->started && object->range == CUPTI_AutoRange) {
      object->measured.push_back(name ? name : "");
    }
  }
}

}  // namespace fake_cupti

using fake_cupti::Fail;

extern "C" {

// ---- target queries ----

CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiProfilerInitialize);
  return p ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) {
  return p ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiDeviceGetChipName);
  if (p == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->pChipName = "GH100";
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiProfilerDeviceSupported);
  if (p == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  const char* unsupported = std::getenv("FAKE_CUPTI_UNSUPPORTED");
  const std::string part = unsupported ? unsupported : "";
  auto level = [&part](const char* name) {
    return part == name ? CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED
                        : CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  };
  p->architecture = level("architecture");
  p->sli = level("SLI");
  p->vGpu = part == "vGPU" ? CUPTI_PROFILER_CONFIGURATION_DISABLED
                           : CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->confidentialCompute = level("confidential computing");
  p->cmp = level("CMP");
  p->wsl = level("WSL");
  p->isSupported = part.empty() ? CUPTI_PROFILER_CONFIGURATION_SUPPORTED
                                : CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiProfilerGetCounterAvailability);
  if (p == nullptr || p->ctx == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (p->pCounterAvailabilityImage != nullptr) {
    std::memset(p->pCounterAvailabilityImage, 0xa5, p->counterAvailabilityImageSize);
  }
  p->counterAvailabilityImageSize = 64;
  return CUPTI_SUCCESS;
}

// ---- host ----

CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiProfilerHostInitialize);
  if (p == nullptr || p->pChipName == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (std::strcmp(p->pChipName, "GH100") != 0) return Fail(CUPTI_ERROR_INVALID_CHIP_NAME);
  p->pHostObject = new CUpti_Profiler_Host_Object{p->pChipName, {}};
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  if (p == nullptr || p->pHostObject == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  delete p->pHostObject;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiProfilerHostConfigAddMetrics);
  if (p == nullptr || p->pHostObject == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  for (size_t i = 0; i < p->numMetrics; ++i) {
    // Every real metric name has a unit and a rollup: "unit__counter.rollup".
    const std::string name = p->ppMetricNames[i];
    if (name.find("__") == std::string::npos) return Fail(CUPTI_ERROR_INVALID_METRIC_NAME);
    p->pHostObject->metrics.push_back(name);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  if (p == nullptr || p->pHostObject == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  size_t size = 5;
  for (const std::string& m : p->pHostObject->metrics) size += m.size() + 1;
  p->configImageSize = size;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  if (p == nullptr || p->pHostObject == nullptr || p->pConfigImage == nullptr) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  std::string image(fake_cupti::kConfigMagic, 4);
  for (const std::string& m : p->pHostObject->metrics) image += m + '\0';
  image += '\0';
  if (p->configImageSize < image.size()) return Fail(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  std::memcpy(p->pConfigImage, image.data(), image.size());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  if (p == nullptr || p->pConfigImage == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->numOfPasses =
      fake_cupti::FakePasses(fake_cupti::ConfigMetrics(p->pConfigImage, p->configImageSize));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiProfilerHostEvaluateToGpuValues);
  if (p == nullptr || p->pHostObject == nullptr || p->pMetricValues == nullptr) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  const char* range =
      fake_cupti::ImageName(p->pCounterDataImage, p->counterDataImageSize, p->rangeIndex);
  if (range == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  for (size_t i = 0; i < p->numMetrics; ++i) {
    p->pMetricValues[i] = fake_cupti::FakeMetricValue(p->ppMetricNames[i], range);
  }
  return CUPTI_SUCCESS;
}

// ---- range profiler ----

CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiRangeProfilerEnable);
  if (p == nullptr || p->ctx == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  auto* object = new CUpti_RangeProfiler_Object();
  object->context = p->ctx;
  object->context_id = reinterpret_cast<fake_cupti::FakeContext*>(p->ctx)->id;
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  fake_cupti::g_objects.push_back(object);
  p->pRangeProfilerObject = object;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
  if (p == nullptr || p->pRangeProfilerObject == nullptr)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  p->pRangeProfilerObject->started = false;
  p->pRangeProfilerObject->context_id = 0;  // sees no more kernels
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  if (p == nullptr || p->pRangeProfilerObject == nullptr)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->counterDataSize = 8 + p->maxNumOfRanges * fake_cupti::kNameRoom;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  if (p == nullptr || p->pCounterData == nullptr || p->counterDataSize < 8) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  std::memset(p->pCounterData, 0, p->counterDataSize);
  std::memcpy(p->pCounterData, fake_cupti::kDataMagic, 4);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiRangeProfilerSetConfig);
  if (p == nullptr || p->pRangeProfilerObject == nullptr || p->pConfig == nullptr ||
      p->pCounterDataImage == nullptr) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  // Kernel replay needs auto ranges; user ranges cannot replay a kernel.
  if ((p->range == CUPTI_AutoRange) != (p->replayMode == CUPTI_KernelReplay)) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
  object->range = p->range;
  object->max_ranges = p->maxRangesPerPass;
  object->image = p->pCounterDataImage;
  object->image_size = p->counterDataImageSize;
  object->configured = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiRangeProfilerStart);
  if (p == nullptr || p->pRangeProfilerObject == nullptr)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  if (!p->pRangeProfilerObject->configured) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  p->pRangeProfilerObject->started = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  if (p == nullptr || p->pRangeProfilerObject == nullptr)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
  if (!object->started || !object->stack.empty()) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  object->started = false;
  p->isAllPassSubmitted = 1;
  p->passIndex = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerPushRange(CUpti_RangeProfiler_PushRange_Params* p) {
  if (p == nullptr || p->pRangeProfilerObject == nullptr || p->pRangeName == nullptr) {
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
  if (!object->started || object->range != CUPTI_UserRange)
    return Fail(CUPTI_ERROR_INVALID_OPERATION);
  object->stack.push_back(p->pRangeName);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerPopRange(CUpti_RangeProfiler_PopRange_Params* p) {
  if (p == nullptr || p->pRangeProfilerObject == nullptr)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
  if (object->stack.empty()) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  // One nesting level is measured: the outermost ranges.
  if (object->stack.size() == 1) object->measured.push_back(object->stack.back());
  object->stack.pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  FAKE_CUPTI_INJECTED(cuptiRangeProfilerDecodeData);
  if (p == nullptr || p->pRangeProfilerObject == nullptr)
    return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  std::lock_guard<std::mutex> lock(fake_cupti::g_mutex);
  CUpti_RangeProfiler_Object* object = p->pRangeProfilerObject;
  if (object->started) return Fail(CUPTI_ERROR_INVALID_OPERATION);
  uint32_t count = fake_cupti::ImageCount(object->image, object->image_size);
  p->numOfRangeDropped = 0;
  for (const std::string& name : object->measured) {
    const size_t offset = 8 + count * fake_cupti::kNameRoom;
    if (count >= object->max_ranges || offset + fake_cupti::kNameRoom > object->image_size) {
      ++p->numOfRangeDropped;
      continue;
    }
    std::strncpy(reinterpret_cast<char*>(object->image + offset), name.c_str(),
                 fake_cupti::kNameRoom - 1);
    ++count;
  }
  std::memcpy(object->image + 4, &count, 4);
  object->measured.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  if (p == nullptr || p->pCounterDataImage == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->numTotalRanges = fake_cupti::ImageCount(p->pCounterDataImage, p->counterDataImageSize);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI
cuptiRangeProfilerCounterDataGetRangeInfo(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) {
  if (p == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  p->rangeName =
      fake_cupti::ImageName(p->pCounterDataImage, p->counterDataImageSize, p->rangeIndex);
  return p->rangeName ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

}  // extern "C"
