// Theoretical occupancy of a kernel launch: how many warps per SM the launch
// configuration and the kernel's resources allow, as a fraction of the SM's maximum.
// This is the "theoretical occupancy" of the CUDA occupancy calculator, computed from
// the limits the trace recorded for the device (DeviceRecord); achieved occupancy needs
// hardware counters and is not a trace property.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuperf/records.h"

namespace gpuperf {

struct LaunchResources {
  uint32_t threads_per_block = 0;
  uint32_t registers_per_thread = 0;
  uint32_t shared_bytes_per_block = 0;  // static + dynamic
};

// Which resource bounds the number of resident blocks (the smallest limit wins; on a
// tie the first in this order is named).
enum class OccupancyLimiter : uint8_t {
  kNone = 0,  // could not be computed (unknown device, empty block)
  kWarps,
  kBlocks,
  kRegisters,
  kSharedMemory,
  kDoesNotFit,  // the block exceeds a per-block limit: the launch could not run as recorded
};

struct Occupancy {
  uint32_t blocks_per_sm = 0;  // resident blocks per SM
  uint32_t warps_per_sm = 0;   // resident warps per SM
  double fraction = 0;         // warps_per_sm / max warps per SM, 0..1
  OccupancyLimiter limiter = OccupancyLimiter::kNone;
};

Occupancy ComputeOccupancy(const DeviceRecord& device, const LaunchResources& launch);

std::string_view OccupancyLimiterName(OccupancyLimiter limiter);

}  // namespace gpuperf
