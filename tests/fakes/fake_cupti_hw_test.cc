// The fake's hardware profilers behave as the injection library relies on: auto ranges are
// the kernels run while the range profiler is started, user ranges the outermost pushed ones,
// counter data holds what was decoded, PC samples come out in pieces of the buffer's size with
// the rest announced, and the real CUPTI's host API agrees with the fake on metric names.
#include <cupti_pcsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "fake_cupti/fake_cupti.h"

namespace {

template <class P>
P Params(size_t size) {
  P p{};
  p.structSize = size;
  return p;
}

struct RangeProfiler {
  CUpti_RangeProfiler_Object* object = nullptr;
  std::vector<uint8_t> data;

  RangeProfiler(CUcontext context, CUpti_ProfilerRange range) {
    auto enable =
        Params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context;
    EXPECT_EQ(cuptiRangeProfilerEnable(&enable), CUPTI_SUCCESS);
    object = enable.pRangeProfilerObject;
    auto size = Params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object;
    size.maxNumOfRanges = 4;
    EXPECT_EQ(cuptiRangeProfilerGetCounterDataSize(&size), CUPTI_SUCCESS);
    data.assign(size.counterDataSize, 0);
    auto init = Params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = object;
    init.pCounterData = data.data();
    init.counterDataSize = data.size();
    EXPECT_EQ(cuptiRangeProfilerCounterDataImageInitialize(&init), CUPTI_SUCCESS);
    static const uint8_t config[] = {'F', 'K', 'C', 'F', 0, 0};
    auto set = Params<CUpti_RangeProfiler_SetConfig_Params>(
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    set.pRangeProfilerObject = object;
    set.pConfig = config;
    set.configSize = sizeof(config);
    set.pCounterDataImage = data.data();
    set.counterDataImageSize = data.size();
    set.range = range;
    set.replayMode = range == CUPTI_AutoRange ? CUPTI_KernelReplay : CUPTI_UserReplay;
    set.maxRangesPerPass = 4;
    EXPECT_EQ(cuptiRangeProfilerSetConfig(&set), CUPTI_SUCCESS);
  }
  CUptiResult Call(CUptiResult (*fn)(CUpti_RangeProfiler_Start_Params*)) {
    auto p = Params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object;
    return fn(&p);
  }
  CUptiResult Stop() {
    auto p = Params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object;
    return cuptiRangeProfilerStop(&p);
  }
  size_t Decode() {
    auto decode = Params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = object;
    EXPECT_EQ(cuptiRangeProfilerDecodeData(&decode), CUPTI_SUCCESS);
    auto info = Params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = data.data();
    info.counterDataImageSize = data.size();
    EXPECT_EQ(cuptiRangeProfilerGetCounterDataInfo(&info), CUPTI_SUCCESS);
    return info.numTotalRanges;
  }
  std::string Name(size_t index) {
    auto p = Params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    p.pCounterDataImage = data.data();
    p.counterDataImageSize = data.size();
    p.rangeIndex = index;
    return cuptiRangeProfilerCounterDataGetRangeInfo(&p) == CUPTI_SUCCESS ? p.rangeName : "";
  }
};

void Kernel(uint32_t context, const char* name) {
  FakeCuptiKernel k{};
  k.context_id = context;
  k.name = name;
  fake_cupti_emit_kernel(&k);
}

TEST(FakeRangeProfiler, AutoRangesAreTheKernelsRunWhileStarted) {
  fake_cupti_reset();
  const uint32_t context = fake_cupti_create_context(0);
  RangeProfiler p(fake_cupti_context_handle(context), CUPTI_AutoRange);
  Kernel(context, "before");
  EXPECT_EQ(p.Call(cuptiRangeProfilerStart), CUPTI_SUCCESS);
  Kernel(context, "_Z4copyv");
  Kernel(context, "_Z3fmav");
  EXPECT_EQ(p.Stop(), CUPTI_SUCCESS);
  Kernel(context, "after");
  ASSERT_EQ(p.Decode(), 2u);
  EXPECT_EQ(p.Name(0), "_Z4copyv");
  EXPECT_EQ(p.Name(1), "_Z3fmav");
  EXPECT_EQ(p.Name(2), "");
}

TEST(FakeRangeProfiler, UserRangesAreTheOutermostAndNeedAStartedProfiler) {
  fake_cupti_reset();
  RangeProfiler p(fake_cupti_context_handle(fake_cupti_create_context(0)), CUPTI_UserRange);
  auto push = Params<CUpti_RangeProfiler_PushRange_Params>(
      CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
  push.pRangeProfilerObject = p.object;
  push.pRangeName = "outer";
  EXPECT_EQ(cuptiRangeProfilerPushRange(&push), CUPTI_ERROR_INVALID_OPERATION);
  EXPECT_EQ(p.Call(cuptiRangeProfilerStart), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiRangeProfilerPushRange(&push), CUPTI_SUCCESS);
  push.pRangeName = "inner";
  ASSERT_EQ(cuptiRangeProfilerPushRange(&push), CUPTI_SUCCESS);
  EXPECT_EQ(p.Stop(), CUPTI_ERROR_INVALID_OPERATION);  // ranges still open
  auto pop =
      Params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
  pop.pRangeProfilerObject = p.object;
  EXPECT_EQ(cuptiRangeProfilerPopRange(&pop), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiRangeProfilerPopRange(&pop), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiRangeProfilerPopRange(&pop), CUPTI_ERROR_INVALID_OPERATION);
  EXPECT_EQ(p.Stop(), CUPTI_SUCCESS);
  ASSERT_EQ(p.Decode(), 1u);
  EXPECT_EQ(p.Name(0), "outer");
}

TEST(FakePcSampling, SamplesComeInPiecesOfTheBuffersSize) {
  fake_cupti_reset();
  const uint32_t context = fake_cupti_create_context(0);
  CUcontext handle = fake_cupti_context_handle(context);
  EXPECT_EQ(fake_cupti_pc_sample(context, 1, "k", 0, 2, 5), 0);  // not enabled yet
  CUpti_PCSamplingEnableParams enable{CUpti_PCSamplingEnableParamsSize, nullptr, handle};
  ASSERT_EQ(cuptiPCSamplingEnable(&enable), CUPTI_SUCCESS);
  std::vector<CUpti_PCSamplingStallReason> stalls(16);
  std::vector<CUpti_PCSamplingPCData> pcs(2);
  for (size_t i = 0; i < pcs.size(); ++i) {
    pcs[i].stallReason = stalls.data() + 8 + 4 * i;
    pcs[i].stallReasonCount = 4;
  }
  CUpti_PCSamplingData data{};
  data.size = sizeof(data);
  data.collectNumPcs = pcs.size();
  data.pPcData = pcs.data();
  CUpti_PCSamplingConfigurationInfo info{};
  info.attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  info.attributeData.samplingDataBufferData.samplingDataBuffer = &data;
  CUpti_PCSamplingConfigurationInfoParams config{CUpti_PCSamplingConfigurationInfoParamsSize,
                                                 nullptr, handle, 1, &info};
  ASSERT_EQ(cuptiPCSamplingSetConfigurationAttribute(&config), CUPTI_SUCCESS);
  for (uint64_t pc : {0x10, 0x20, 0x30})
    ASSERT_EQ(fake_cupti_pc_sample(context, 1, "k", pc, 2, 5), 1);
  ASSERT_EQ(fake_cupti_pc_sample(context, 1, "k", 0x10, 9, 1), 1);
  CUpti_PCSamplingData got{};
  std::vector<CUpti_PCSamplingPCData> got_pcs(2);
  for (size_t i = 0; i < got_pcs.size(); ++i) {
    got_pcs[i].stallReason = stalls.data() + 4 * i;
    got_pcs[i].stallReasonCount = 4;
  }
  got.size = sizeof(got);
  got.collectNumPcs = got_pcs.size();
  got.pPcData = got_pcs.data();
  CUpti_PCSamplingGetDataParams get{CUpti_PCSamplingGetDataParamsSize, nullptr, handle, &got};
  ASSERT_EQ(cuptiPCSamplingGetData(&get), CUPTI_SUCCESS);
  EXPECT_EQ(got.totalNumPcs, 2u);
  EXPECT_EQ(got.remainingNumPcs, 1u);
  EXPECT_EQ(got_pcs[0].pcOffset, 0x10u);
  EXPECT_EQ(got_pcs[0].stallReasonCount, 2u);  // two reasons were sampled there
  EXPECT_EQ(got.totalSamples, 11u);
  EXPECT_STREQ(got_pcs[0].functionName, "k");
  CUpti_PCSamplingDisableParams disable{CUpti_PCSamplingDisableParamsSize, nullptr, handle};
  ASSERT_EQ(cuptiPCSamplingDisable(&disable), CUPTI_SUCCESS);
  // What GetData had not handed over is flushed into the configured buffer.
  ASSERT_EQ(data.totalNumPcs, 1u);
  EXPECT_EQ(pcs[0].pcOffset, 0x30u);
  EXPECT_EQ(pcs[0].stallReason[0].samples, 5u);
  EXPECT_EQ(cuptiPCSamplingGetData(&get), CUPTI_ERROR_INVALID_OPERATION);
}

}  // namespace
