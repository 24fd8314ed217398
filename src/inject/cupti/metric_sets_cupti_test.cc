// The metric sets of `gpuperf metrics` against the real CUDA 13 CUPTI host API, which runs
// without a GPU: every name is a metric of the chips we support, and every range set fits in
// one pass (range mode cannot replay). The host API also says how many passes the kernel
// sets take, which docs/hardware-metrics.md quotes.
#include <cupti_profiler_host.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/metric_sets.h"

namespace gpuperf {
namespace {

class HostObject {
 public:
  explicit HostObject(const char* chip) {
    CUpti_Profiler_Host_Initialize_Params p{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip;
    result_ = cuptiProfilerHostInitialize(&p);
    object_ = p.pHostObject;
  }
  ~HostObject() {
    if (object_ == nullptr) return;
    CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    p.pHostObject = object_;
    cuptiProfilerHostDeinitialize(&p);
  }
  CUptiResult result() const { return result_; }
  CUpti_Profiler_Host_Object* get() const { return object_; }

 private:
  CUptiResult result_;
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

// Passes of a config holding `metrics`, or 0 when CUPTI refuses the metrics.
size_t Passes(const char* chip, const std::vector<std::string_view>& metrics) {
  HostObject host(chip);
  if (host.result() != CUPTI_SUCCESS) return 0;
  std::vector<std::string> owned(metrics.begin(), metrics.end());
  std::vector<const char*> names;
  for (const std::string& m : owned) names.push_back(m.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = host.get();
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS) return 0;
  CUpti_Profiler_Host_GetConfigImageSize_Params size{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = host.get();
  if (cuptiProfilerHostGetConfigImageSize(&size) != CUPTI_SUCCESS) return 0;
  std::vector<uint8_t> image(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params get{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  get.pHostObject = host.get();
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  if (cuptiProfilerHostGetConfigImage(&get) != CUPTI_SUCCESS) return 0;
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = image.size();
  passes.pConfigImage = image.data();
  if (cuptiProfilerHostGetNumOfPasses(&passes) != CUPTI_SUCCESS) return 0;
  return passes.numOfPasses;
}

const char* const kSets[] = {"basic", "memory", "compute", "tensor"};

TEST(MetricSetsCupti, EveryKnownMetricIsValidOnHopper) {
  HostObject host("GH100");
  ASSERT_EQ(host.result(), CUPTI_SUCCESS);
  for (const KnownMetric& m : KnownMetrics()) {
    const std::string name(m.cupti_name);
    CUpti_Profiler_Host_GetMetricProperties_Params p{
        CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE};
    p.pHostObject = host.get();
    p.pMetricName = name.c_str();
    EXPECT_EQ(cuptiProfilerHostGetMetricProperties(&p), CUPTI_SUCCESS) << name;
  }
}

TEST(MetricSetsCupti, RangeSetsFitOnePassAndKernelSetsAreAccepted) {
  for (const char* chip : {"GH100", "GA100"}) {
    for (const char* set : kSets) {
      EXPECT_EQ(Passes(chip, MetricSet(set, SetScope::kPerRange)), 1u) << chip << " " << set;
      const size_t kernel_passes = Passes(chip, MetricSet(set, SetScope::kPerKernel));
      EXPECT_GE(kernel_passes, 1u) << chip << " " << set;
      EXPECT_LE(kernel_passes, 16u) << chip << " " << set;
      std::printf("%s %-8s kernel set: %zu passes\n", chip, set, kernel_passes);
    }
  }
}

TEST(MetricSetsCupti, UnknownSetIsEmpty) {
  EXPECT_TRUE(MetricSet("everything", SetScope::kPerKernel).empty());
  EXPECT_EQ(FindKnownMetric("dram_pct"),
            FindKnownMetric("gpu__dram_throughput.avg.pct_of_peak_sustained_"
                            "elapsed"));
  EXPECT_EQ(FindKnownMetric("nope"), nullptr);
}

}  // namespace
}  // namespace gpuperf
