#include "analyze/join/cpu_time.h"

#include <gtest/gtest.h>

#include "support/test_trace.h"

namespace gpuperf {
namespace {

TEST(CpuTime, KnowsTheCudaCallsThatWaitForTheGpu) {
  for (const char* name : {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                           "cuCtxSynchronize", "cuStreamSynchronize", "cudaMemcpy", "cudaMemcpy2D",
                           "cuMemcpyDtoH_v2", "cudaMemcpyToSymbol"}) {
    EXPECT_TRUE(IsGpuSyncFunction(name)) << name;
  }
  for (const char* name :
       {"cudaMemcpyAsync", "cuMemcpyHtoDAsync_v2", "cudaStreamWaitEvent", "cudaLaunchKernel",
        "pthread_cond_wait", "memcpy", "Synchronize", "at::cuda::stream_synchronize"}) {
    EXPECT_FALSE(IsGpuSyncFunction(name)) << name;
  }
}

ApiRecord Api(StringId name, uint32_t tid, uint64_t start, uint64_t end) {
  ApiRecord a;
  a.pid = 7;
  a.tid = tid;
  a.name = name;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

TEST(CpuTime, SamplesAndBlockedTimeInsideASyncCallOfTheirThreadAreGpuWaits) {
  testing::TestTrace t;
  const StringId sync = t.Str("cudaStreamSynchronize");
  const StringId launch = t.Str("cudaLaunchKernel");
  CpuTimeCollector collector(t.trace().strings);
  const ApiRecord apis[] = {Api(sync, 1, 1000, 2000), Api(launch, 1, 3000, 4000),
                            Api(sync, 1, 1800, 2500)};  // overlapping windows merge
  collector.AddApis(apis);
  SyncRecord stream_sync;
  stream_sync.pid = 7;
  stream_sync.tid = 2;
  stream_sync.kind = SyncKind::kEventSynchronize;
  stream_sync.start_ns = 10000;
  stream_sync.end_ns = 11000;
  collector.AddSyncs({&stream_sync, 1});

  const CpuSampleRecord samples[] = {
      {7, 1, 1500, 5, 0, 100},   // inside the sync call: a spin
      {7, 1, 2400, 5, 0, 100},   // inside the second, overlapping one
      {7, 1, 3500, 5, 0, 100},   // inside a launch: not a wait
      {7, 2, 1500, 5, 0, 100},   // another thread
      {7, 2, 10500, 5, 0, 100},  // inside the other thread's event sync
  };
  collector.AddSamples(samples);
  OffCpuRecord mostly_inside{7, 1, 900, 2500, 1200, 3, 6, OffCpuReason::kSleep};
  OffCpuRecord mostly_outside{7, 1, 2200, 3800, 1000, 2, 6, OffCpuReason::kSleep};
  const OffCpuRecord off[] = {mostly_inside, mostly_outside};
  collector.AddOffCpu(off);

  const std::vector<CpuTimeEntry> entries = collector.Finish();
  ASSERT_EQ(entries.size(), 6u);
  // (pid, tid, stack, kind, reason, gpu_wait) order.
  EXPECT_EQ(entries[0].tid, 1u);
  EXPECT_EQ(entries[0].kind, CpuTimeKind::kOnCpu);
  EXPECT_FALSE(entries[0].gpu_wait);
  EXPECT_EQ(entries[0].count, 1u);
  EXPECT_TRUE(entries[1].gpu_wait);
  EXPECT_EQ(entries[1].kind, CpuTimeKind::kOnCpu);
  EXPECT_EQ(entries[1].ns, 200u);
  EXPECT_EQ(entries[1].count, 2u);
  EXPECT_EQ(entries[2].kind, CpuTimeKind::kOffCpu);
  EXPECT_FALSE(entries[2].gpu_wait);
  EXPECT_EQ(entries[2].ns, 1000u);
  EXPECT_TRUE(entries[3].gpu_wait);
  EXPECT_EQ(entries[3].ns, 1200u);
  EXPECT_EQ(entries[3].count, 3u);
  EXPECT_EQ(entries[4].tid, 2u);
  EXPECT_FALSE(entries[4].gpu_wait);  // thread 1's sync call does not make thread 2 wait
  EXPECT_EQ(entries[5].tid, 2u);
  EXPECT_TRUE(entries[5].gpu_wait);  // inside its own event sync
  EXPECT_EQ(entries[5].ns, 100u);
}

TEST(CpuTime, NothingIsAWaitWithoutCudaCalls) {
  testing::TestTrace t;
  CpuTimeCollector collector(t.trace().strings);
  EXPECT_TRUE(collector.empty());
  const CpuSampleRecord sample{3, 3, 100, 1, 0, 10101010};
  collector.AddSamples({&sample, 1});
  EXPECT_FALSE(collector.empty());
  const std::vector<CpuTimeEntry> entries = collector.Finish();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_FALSE(entries[0].gpu_wait);
  EXPECT_EQ(entries[0].ns, 10101010u);
}

}  // namespace
}  // namespace gpuperf
