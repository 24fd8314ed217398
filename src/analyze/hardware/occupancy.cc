#include "analyze/hardware/occupancy.h"

#include <algorithm>

namespace gpuperf {
namespace {

// Allocation rules of the CUDA occupancy calculator (cuda_occupancy.h of CUDA 13),
// valid from Volta (sm_70) through Blackwell; Hopper (sm_90) is the case we check:
//  - Registers are allocated per warp, in units of 256 registers.
//  - An SM has 4 sub-partitions; each holds a quarter of the register file and a warp
//    lives in one, so the register limit is computed per sub-partition and times 4.
//  - The hardware checks the per-block register limit as if a block's warps were spread
//    over all 4 sub-partitions (warps rounded up to a multiple of 4).
//  - Shared memory is allocated per block in units of 128 bytes (256 before Ampere),
//    and from Ampere (sm_80) on the driver reserves 1 KiB per block for itself.
//  - A thread can address at most 255 registers.
// Assumptions (the trace does not record them):
//  - The shared-memory carveout is the largest the SM offers (max_shared_per_sm): the
//    driver picks the carveout per launch, so this is the upper bound.
//  - No per-block barrier or cluster limits (cluster launches are rare in traces and
//    their co-scheduling limit is not in DeviceRecord).
constexpr uint32_t kRegisterAllocationUnit = 256;
constexpr uint32_t kSubPartitions = 4;
constexpr uint32_t kMaxRegistersPerThread = 255;

uint32_t RoundUp(uint32_t value, uint32_t unit) {
  return (value + unit - 1) / unit * unit;
}
uint32_t DivRoundUp(uint32_t value, uint32_t unit) {
  return (value + unit - 1) / unit;
}

uint32_t SharedAllocationUnit(const DeviceRecord& device) {
  return device.compute_major >= 8 || device.compute_major == 0 ? 128 : 256;
}
uint32_t ReservedSharedPerBlock(const DeviceRecord& device) {
  return device.compute_major >= 8 ? 1024 : 0;
}

}  // namespace

Occupancy ComputeOccupancy(const DeviceRecord& device, const LaunchResources& launch) {
  Occupancy result;
  const uint32_t warp_size = device.warp_size ? device.warp_size : 32;
  if (launch.threads_per_block == 0 || device.max_warps_per_sm == 0 ||
      device.max_blocks_per_sm == 0) {
    return result;
  }
  const uint32_t warps_per_block = DivRoundUp(launch.threads_per_block, warp_size);

  // Each limit is a number of resident blocks per SM.
  const uint32_t by_warps = device.max_warps_per_sm / warps_per_block;
  const uint32_t by_blocks = device.max_blocks_per_sm;

  uint32_t by_registers = UINT32_MAX;
  bool fits =
      device.max_threads_per_block == 0 || launch.threads_per_block <= device.max_threads_per_block;
  if (launch.registers_per_thread > 0 && device.max_registers_per_sm > 0) {
    const uint32_t per_warp =
        RoundUp(launch.registers_per_thread * warp_size, kRegisterAllocationUnit);
    const uint32_t per_block_checked = per_warp * RoundUp(warps_per_block, kSubPartitions);
    if (launch.registers_per_thread > kMaxRegistersPerThread ||
        (device.max_registers_per_block > 0 &&
         per_block_checked > device.max_registers_per_block)) {
      fits = false;
    }
    const uint32_t warps_per_partition = device.max_registers_per_sm / kSubPartitions / per_warp;
    by_registers = warps_per_partition * kSubPartitions / warps_per_block;
  }

  uint32_t by_shared = UINT32_MAX;
  const uint32_t reserved = ReservedSharedPerBlock(device);
  const uint32_t shared_per_block =
      RoundUp(launch.shared_bytes_per_block + reserved, SharedAllocationUnit(device));
  if (shared_per_block > 0 && device.max_shared_per_sm > 0) {
    // Not checked against max_shared_per_block: kernels opt in to more dynamic shared
    // memory than that default (cudaFuncAttributeMaxDynamicSharedMemorySize).
    if (shared_per_block > device.max_shared_per_sm) fits = false;
    by_shared = device.max_shared_per_sm / shared_per_block;
  }

  if (!fits) {
    result.limiter = OccupancyLimiter::kDoesNotFit;
    return result;
  }
  uint32_t blocks = by_warps;
  result.limiter = OccupancyLimiter::kWarps;
  if (by_blocks < blocks) {
    blocks = by_blocks;
    result.limiter = OccupancyLimiter::kBlocks;
  }
  if (by_registers < blocks) {
    blocks = by_registers;
    result.limiter = OccupancyLimiter::kRegisters;
  }
  if (by_shared < blocks) {
    blocks = by_shared;
    result.limiter = OccupancyLimiter::kSharedMemory;
  }
  result.blocks_per_sm = blocks;
  result.warps_per_sm = blocks * warps_per_block;
  result.fraction = static_cast<double>(result.warps_per_sm) / device.max_warps_per_sm;
  return result;
}

std::string_view OccupancyLimiterName(OccupancyLimiter limiter) {
  switch (limiter) {
    case OccupancyLimiter::kWarps:
      return "warps";
    case OccupancyLimiter::kBlocks:
      return "blocks";
    case OccupancyLimiter::kRegisters:
      return "registers";
    case OccupancyLimiter::kSharedMemory:
      return "shared_memory";
    case OccupancyLimiter::kDoesNotFit:
      return "does_not_fit";
    case OccupancyLimiter::kNone:
      break;
  }
  return "unknown";
}

}  // namespace gpuperf
