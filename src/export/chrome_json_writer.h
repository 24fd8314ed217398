// TimelineWriter for the Chrome trace event JSON format (chrome://tracing, Perfetto UI).
//
// One event per line: integer pid/tid, `M` metadata for process/thread names and sort
// order, `X` complete slices, `i` instants, `C` counters, and Kineto-style `ac2g` flow
// pairs (`s` on the launch call, `f` with "bp":"e" on the GPU work). Timestamps are
// microseconds printed from integer nanoseconds with exactly three decimals, so no
// floating-point rounding moves an event. Every string is written by AppendJsonString
// (base/json_output.h), so any kernel or NVTX name yields valid JSON. GPUs appear as
// their own processes (pid kGpuPidBase + n, above any Linux pid).
// Launch stacks go to the "stackFrames" table, referenced by "sf".
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

#include "analyze/timeline/timeline_events.h"

namespace gpuperf {

inline constexpr uint32_t kGpuPidBase = 100'000'000;
// Tracks that are not a real thread (extra lanes, NVTX, copy rows) get tids from here.
inline constexpr uint32_t kSyntheticTidBase = 200'000'000;

std::unique_ptr<TimelineWriter> MakeChromeJsonWriter(std::ostream& out);

// Appends ns as microseconds with exactly three decimals: 1234567 -> "1234.567".
void AppendMicros(std::string& out, uint64_t ns);

}  // namespace gpuperf
