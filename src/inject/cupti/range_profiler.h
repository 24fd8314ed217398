// `gpuperf metrics`: CUPTI's range profiler (cupti_range_profiler.h) on every context.
//
// Per kernel (the default): auto ranges with kernel replay. CUPTI runs each kernel alone, once
// per pass, restoring its memory in between, so the kernels of the run are serialized: the
// ranges are marked `serialized` and never count as a timeline. The kernel of each range is
// the launch seen in the callback (launches of a context are kept in order by holding its
// lock from launch enter to exit). Per range: user ranges around each outermost NVTX range, or
// around fixed time windows of launches, with one pass and no replay, so kernels stay
// concurrent; the metric set must then fit one pass (base/metric_sets.h).
//
// Everything runs on the application's threads (in its launch and NVTX callbacks, as CUPTI
// requires), except the last flush at exit. Records go to the writer thread in batches.
#pragma once

#include <cstdint>

namespace gpuperf::inject {

struct Recorder;

// Checks the set and enables the callbacks the mode needs. False (after one line saying why)
// when the set is unknown or there is no CUPTI subscription.
bool StartRangeProfiler(Recorder& recorder);
// Every callback of gpuperf's subscriber (hardware.cc forwards them).
void RangeProfilerCallback(int domain, uint32_t cbid, const void* data);
// Process exit: closes open ranges, measures what is pending and disables the profiler.
void FinishRangeProfiler();

}  // namespace gpuperf::inject
