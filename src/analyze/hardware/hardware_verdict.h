// Whether a kernel is memory, compute or latency bound, from its hardware metrics, in the
// manner of Nsight Compute's speed-of-light rule: a unit working at 60% or more of its peak
// is the bottleneck (the busier of SM and memory); neither that busy means the kernel waits
// (latency, or too little parallelism to hide it).
#pragma once

#include "analyze/hardware/hardware_model.h"

namespace gpuperf {

// Busy threshold, percent of peak.
inline constexpr double kBoundThresholdPct = 60;
// A range whose SMs were busy less than this share of it is judged over the busy time only
// (above it the gaps change no verdict and the plain rates read more simply).
inline constexpr double kRangeBusyScalePct = 90;

// Reads the row's metrics: SM and memory throughput per kernel; per range, one-pass stand-ins
// (issue slots for the SM, DRAM throughput for memory), over the time the SMs were busy.
BoundVerdict JudgeBound(const HardwareRow& row);

}  // namespace gpuperf
