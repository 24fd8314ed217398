// The fake's hardware profilers: range profiler (per-context objects, counter data images of
// the fake's own layout), profiler host (config images listing the metrics, values computed from
// each range's name) and PC sampling (samples a test driver queues per context). Shared by
// range_profiler_api.cc, pc_sampling_api.cc and hw_control.cc.
//
// Failures are injected by environment: FAKE_CUPTI_FAIL="cuptiRangeProfilerEnable=35,..." makes
// the named entry point return that CUPTI result; FAKE_CUPTI_UNSUPPORTED=<part> (vGPU, MIG,
// architecture, ...) makes cuptiProfilerDeviceSupported say the device is not supported.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>

namespace fake_cupti {

// The result FAKE_CUPTI_FAIL gives `function`, else CUPTI_SUCCESS.
CUptiResult Injected(const char* function);

// A kernel ran on `context_id`: a range for every started auto-range profiler there.
void ProfilerSawKernel(uint32_t context_id, const char* name);

// The value the fake's counters give `metric` for a range named `range` (deterministic:
// "copy" ranges are memory bound, "fma" ranges compute bound, the others latency bound).
double FakeMetricValue(const std::string& metric, const std::string& range);

// The CRC the fake gives a cubin (FNV-1a, 64 bits).
uint64_t FakeCubinCrc(const void* data, size_t size);

}  // namespace fake_cupti
