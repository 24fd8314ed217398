#include "inject/cupti/range_session.h"

#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <map>
#include <string>

#include "base/hardware_advice.h"
#include "base/metric_sets.h"
#include "inject/cupti/cupti_call.h"
#include "inject/record_batch.h"
#include "inject/recorder.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

// The codes the advice is written for, as cupti_result.h numbers them.
static_assert(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ==
              static_cast<int>(CuptiCode::kInsufficientPrivileges));
static_assert(CUPTI_ERROR_HARDWARE_BUSY == static_cast<int>(CuptiCode::kHardwareBusy));
static_assert(CUPTI_ERROR_NOT_INITIALIZED == static_cast<int>(CuptiCode::kNotInitialized));
static_assert(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED ==
              static_cast<int>(CuptiCode::kMigDeviceNotSupported));
static_assert(CUPTI_ERROR_INVALID_CHIP_NAME == static_cast<int>(CuptiCode::kInvalidChipName));

// One host object per (chip, set): the config image is the same for every device of a chip.
std::mutex g_hosts_mutex;
std::map<std::string, std::shared_ptr<MetricHost>> g_hosts;
std::atomic<uint32_t> g_next_range_id{1};
// The first reason counters cannot be used is said once; the count says how often.
const char g_failure_logged = 0;

// Which part of the device cuptiProfilerDeviceSupported says is not supported.
const char* UnsupportedPart(const CUpti_Profiler_DeviceSupported_Params& p) {
  if (p.architecture != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "architecture";
  if (p.vGpu != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "vGPU";
  if (p.confidentialCompute != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    return "confidential computing";
  }
  if (p.cmp != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "CMP";
  if (p.sli != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "SLI";
  if (p.wsl != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return "WSL";
  return "this configuration";
}

std::string Where(uint32_t device_id) {
  return "device " + std::to_string(device_id);
}

}  // namespace

RangeSession::~RangeSession() = default;

bool RangeSession::Fail(Recorder* recorder, const char* call, CUptiResult result) {
  usable_ = false;
  started_ = false;
  CountStat(StatId::hardware_unavailable);
  const std::string line = HardwareFailureLine("hardware metrics", Where(device_id_),
                                               static_cast<int>(result), CuptiErrorText(result));
  LogOnceFor(&g_failure_logged, "%s", line.c_str());
  LogVerbose("%s failed on device %u: %s", call, device_id_, CuptiErrorText(result));
  (void)recorder;
  return false;
}

bool RangeSession::Setup(Recorder& recorder, const std::string& metric_set) {
  CUptiResult r = cuptiGetDeviceId(context_, &device_id_);
  if (r != CUPTI_SUCCESS) return Fail(&recorder, "cuptiGetDeviceId", r);
  cuptiGetContextId(context_, &context_id_);

  static const CUptiResult initialized = [] {
    auto init =
        CuptiParams<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    return cuptiProfilerInitialize(&init);
  }();
  if (initialized != CUPTI_SUCCESS) return Fail(&recorder, "cuptiProfilerInitialize", initialized);

  auto supported = CuptiParams<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  supported.cuDevice = static_cast<CUdevice>(device_id_);
  supported.api = CUPTI_PROFILER_RANGE_PROFILING;
  r = cuptiProfilerDeviceSupported(&supported);
  if (r != CUPTI_SUCCESS) return Fail(&recorder, "cuptiProfilerDeviceSupported", r);
  if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    CountStat(StatId::hardware_unavailable);
    const std::string line =
        UnsupportedDeviceLine("hardware metrics", Where(device_id_), UnsupportedPart(supported));
    LogOnceFor(&g_failure_logged, "%s", line.c_str());
    return false;
  }
  auto chip =
      CuptiParams<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = device_id_;
  r = cuptiDeviceGetChipName(&chip);
  if (r != CUPTI_SUCCESS || chip.pChipName == nullptr) {
    return Fail(&recorder, "cuptiDeviceGetChipName", r);
  }
  // Counters another client holds show up here (privileges, a DCGM session).
  auto avail = CuptiParams<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = context_;
  r = cuptiProfilerGetCounterAvailability(&avail);
  if (r != CUPTI_SUCCESS) return Fail(&recorder, "cuptiProfilerGetCounterAvailability", r);
  std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  r = cuptiProfilerGetCounterAvailability(&avail);
  if (r != CUPTI_SUCCESS) return Fail(&recorder, "cuptiProfilerGetCounterAvailability", r);

  const SetScope scope = options_.user_ranges ? SetScope::kPerRange : SetScope::kPerKernel;
  const std::string key = std::string(chip.pChipName) + "/" + metric_set + "/" +
                          (options_.user_ranges ? "range" : "kernel");
  {
    std::lock_guard<std::mutex> lock(g_hosts_mutex);
    std::shared_ptr<MetricHost>& host = g_hosts[key];
    if (host == nullptr) {
      auto created = std::make_shared<MetricHost>();
      const char* call = "";
      r = created->Create(chip.pChipName, availability, MetricSet(metric_set, scope), &call);
      if (r != CUPTI_SUCCESS) return Fail(&recorder, call, r);
      host = created;
      LogVerbose("metric set '%s' on %s: %zu metrics, %zu passes", metric_set.c_str(),
                 chip.pChipName, host->metric_names().size(), host->passes());
    }
    host_ = host;
  }
  if (options_.user_ranges && host_->passes() != 1) {
    CountStat(StatId::hardware_unavailable);
    LogOnce("hardware metrics per range need a one-pass set; '%s' takes %zu passes on %s",
            metric_set.c_str(), host_->passes(), host_->chip().c_str());
    return false;
  }
  set_name_ = recorder.names.Intern(metric_set);

  auto enable =
      CuptiParams<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context_;
  r = cuptiRangeProfilerEnable(&enable);
  if (r != CUPTI_SUCCESS) return Fail(&recorder, "cuptiRangeProfilerEnable", r);
  object_ = enable.pRangeProfilerObject;
  usable_ = InitCounterData() && SetConfig();
  return usable_;
}

bool RangeSession::InitCounterData() {
  auto size = CuptiParams<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = object_;
  size.pMetricNames = const_cast<const char**>(host_->metric_names().data());
  size.numMetrics = host_->metric_names().size();
  size.maxNumOfRanges = options_.max_ranges;
  size.maxNumRangeTreeNodes = options_.max_ranges;
  CUptiResult r = cuptiRangeProfilerGetCounterDataSize(&size);
  if (r != CUPTI_SUCCESS) return Fail(nullptr, "cuptiRangeProfilerGetCounterDataSize", r);
  counter_data_.assign(size.counterDataSize, 0);
  auto init = CuptiParams<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = object_;
  init.counterDataSize = counter_data_.size();
  init.pCounterData = counter_data_.data();
  r = cuptiRangeProfilerCounterDataImageInitialize(&init);
  if (r != CUPTI_SUCCESS) return Fail(nullptr, "cuptiRangeProfilerCounterDataImageInitialize", r);
  return true;
}

bool RangeSession::SetConfig() {
  auto config = CuptiParams<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = object_;
  config.configSize = host_->config().size();
  config.pConfig = host_->config().data();
  config.counterDataImageSize = counter_data_.size();
  config.pCounterDataImage = counter_data_.data();
  config.range = options_.user_ranges ? CUPTI_UserRange : CUPTI_AutoRange;
  config.replayMode = options_.user_ranges ? CUPTI_UserReplay : CUPTI_KernelReplay;
  config.maxRangesPerPass = options_.max_ranges;
  config.numNestingLevels = 1;  // user ranges: the outermost only
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  const CUptiResult r = cuptiRangeProfilerSetConfig(&config);
  if (r != CUPTI_SUCCESS) return Fail(nullptr, "cuptiRangeProfilerSetConfig", r);
  return true;
}

bool RangeSession::Start() {
  if (!usable_) return false;
  if (started_) return true;
  auto start =
      CuptiParams<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  start.pRangeProfilerObject = object_;
  const CUptiResult r = cuptiRangeProfilerStart(&start);
  if (r != CUPTI_SUCCESS) return Fail(nullptr, "cuptiRangeProfilerStart", r);
  started_ = true;
  return true;
}

bool RangeSession::PushRange(const std::string& name) {
  auto push = CuptiParams<CUpti_RangeProfiler_PushRange_Params>(
      CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = object_;
  push.pRangeName = name.c_str();
  return GP_CUPTI_CALL(cuptiRangeProfilerPushRange(&push)) == CUPTI_SUCCESS;
}

bool RangeSession::PopRange() {
  auto pop = CuptiParams<CUpti_RangeProfiler_PopRange_Params>(
      CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = object_;
  return GP_CUPTI_CALL(cuptiRangeProfilerPopRange(&pop)) == CUPTI_SUCCESS;
}

void RangeSession::Flush(Recorder& recorder) {
  if (!usable_) return;
  if (started_) {
    auto stop =
        CuptiParams<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object_;
    const CUptiResult r = cuptiRangeProfilerStop(&stop);
    started_ = false;
    if (r != CUPTI_SUCCESS) {
      CountStat(StatId::metric_ranges_lost, ranges_.size());
      ranges_.clear();
      Fail(&recorder, "cuptiRangeProfilerStop", r);
      return;
    }
    if (!stop.isAllPassSubmitted) {
      LogVerbose("range profiler: not every pass was submitted on device %u", device_id_);
    }
  }
  if (ranges_.empty()) return;
  auto decode = CuptiParams<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = object_;
  CUptiResult r = cuptiRangeProfilerDecodeData(&decode);
  if (r != CUPTI_SUCCESS) {
    CountStat(StatId::metric_ranges_lost, ranges_.size());
    ranges_.clear();
    Fail(&recorder, "cuptiRangeProfilerDecodeData", r);
    return;
  }
  if (decode.numOfRangeDropped) CountStat(StatId::metric_ranges_lost, decode.numOfRangeDropped);
  auto info = CuptiParams<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  r = GP_CUPTI_CALL(cuptiRangeProfilerGetCounterDataInfo(&info));
  Emit(recorder, r == CUPTI_SUCCESS ? info.numTotalRanges : 0);
  ranges_.clear();
  // Fresh counter data for the next ranges.
  usable_ = InitCounterData() && SetConfig();
}

void RangeSession::Emit(Recorder& recorder, size_t cupti_ranges) {
  // CUPTI numbers the ranges in the order they ran, as they were appended to ranges_. A count
  // that differs means some launch was not seen (or some range not measured): the kernels are
  // then named by position only where the counts agree.
  const bool paired = cupti_ranges == ranges_.size();
  if (!paired) {
    CountStat(StatId::metric_names_unmatched, cupti_ranges);
    LogOnce("range profiler: %zu ranges measured for %zu launches seen; their kernels are unnamed",
            cupti_ranges, ranges_.size());
  }
  auto batch = std::make_unique<RecordBatch>();
  std::vector<double> values;
  for (size_t i = 0; i < cupti_ranges; ++i) {
    if (host_->Evaluate(counter_data_, i, values) != CUPTI_SUCCESS) {
      CountStat(StatId::metric_ranges_lost);
      continue;
    }
    MetricRangeRecord range;
    range.pid = recorder.pid;
    range.range_id = g_next_range_id.fetch_add(1);
    range.metric_set = set_name_;
    range.device_id = device_id_;
    range.context_id = context_id_;
    range.passes = static_cast<uint32_t>(host_->passes());
    range.serialized = options_.user_ranges ? 0 : 1;
    if (paired) {
      const PendingRange& seen = ranges_[i];
      range.kind = seen.kind;
      range.name = seen.name;
      range.correlation_id = seen.correlation_id;
      range.start_ns = seen.start_ns;
      range.end_ns = seen.end_ns;
    } else {
      range.kind = options_.user_ranges ? MetricRangeKind::kNvtx : MetricRangeKind::kKernel;
      range.name = recorder.names.Intern("[unnamed range " + std::to_string(i) + "]");
    }
    batch->metric_ranges.push_back(range);
    for (size_t m = 0; m < values.size(); ++m) {
      batch->metric_values.push_back(
          MetricValueRecord{recorder.pid, range.range_id,
                            recorder.names.Intern(host_->metric_names()[m]), values[m]});
    }
    CountStat(StatId::metric_ranges);
  }
  recorder.writer.Enqueue(std::move(batch));
}

void RangeSession::Disable() {
  if (object_ == nullptr) return;
  auto disable = CuptiParams<CUpti_RangeProfiler_Disable_Params>(
      CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
  disable.pRangeProfilerObject = object_;
  GP_CUPTI_CALL(cuptiRangeProfilerDisable(&disable));
  object_ = nullptr;
  usable_ = false;
  started_ = false;
}

}  // namespace gpuperf::inject
