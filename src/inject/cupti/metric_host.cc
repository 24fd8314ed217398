#include "inject/cupti/metric_host.h"

#include "inject/cupti/cupti_call.h"

namespace gpuperf::inject {

MetricHost::~MetricHost() {
  if (object_ == nullptr) return;
  auto params = CuptiParams<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  params.pHostObject = object_;
  cuptiProfilerHostDeinitialize(&params);
}

CUptiResult MetricHost::Create(const std::string& chip, const std::vector<uint8_t>& availability,
                               const std::vector<std::string_view>& metrics,
                               const char** failed_call) {
  chip_ = chip;
  owned_names_.assign(metrics.begin(), metrics.end());
  names_.clear();
  for (const std::string& name : owned_names_) names_.push_back(name.c_str());

  auto init = CuptiParams<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = chip_.c_str();
  init.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  CUptiResult result = cuptiProfilerHostInitialize(&init);
  *failed_call = "cuptiProfilerHostInitialize";
  if (result != CUPTI_SUCCESS) return result;
  object_ = init.pHostObject;

  auto add = CuptiParams<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = object_;
  add.ppMetricNames = names_.data();
  add.numMetrics = names_.size();
  *failed_call = "cuptiProfilerHostConfigAddMetrics";
  if ((result = cuptiProfilerHostConfigAddMetrics(&add)) != CUPTI_SUCCESS) return result;

  auto size = CuptiParams<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = object_;
  *failed_call = "cuptiProfilerHostGetConfigImageSize";
  if ((result = cuptiProfilerHostGetConfigImageSize(&size)) != CUPTI_SUCCESS) return result;
  config_.assign(size.configImageSize, 0);

  auto image = CuptiParams<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = object_;
  image.configImageSize = config_.size();
  image.pConfigImage = config_.data();
  *failed_call = "cuptiProfilerHostGetConfigImage";
  if ((result = cuptiProfilerHostGetConfigImage(&image)) != CUPTI_SUCCESS) return result;

  auto passes = CuptiParams<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = config_.size();
  passes.pConfigImage = config_.data();
  *failed_call = "cuptiProfilerHostGetNumOfPasses";
  if ((result = cuptiProfilerHostGetNumOfPasses(&passes)) != CUPTI_SUCCESS) return result;
  passes_ = passes.numOfPasses;
  *failed_call = "";
  return CUPTI_SUCCESS;
}

CUptiResult MetricHost::Evaluate(const std::vector<uint8_t>& counter_data, size_t index,
                                 std::vector<double>& values) const {
  values.assign(names_.size(), 0.0);
  auto params = CuptiParams<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  params.pHostObject = object_;
  params.pCounterDataImage = counter_data.data();
  params.counterDataImageSize = counter_data.size();
  params.rangeIndex = index;
  // CUPTI takes a non-const array of names it only reads.
  params.ppMetricNames = const_cast<const char**>(names_.data());
  params.numMetrics = names_.size();
  params.pMetricValues = values.data();
  return cuptiProfilerHostEvaluateToGpuValues(&params);
}

}  // namespace gpuperf::inject
