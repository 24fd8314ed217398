#include "analyze/hardware/occupancy.h"

#include <gtest/gtest.h>

#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::H100Device;

DeviceRecord H100() {
  return H100Device();
}

TEST(OccupancyTest, SmallKernelReachesFullOccupancy) {
  // 256 threads = 8 warps; 64/8 = 8 blocks by warps. 32 regs * 32 = 1024 per warp,
  // 16384 per sub-partition / 1024 = 16 warps, * 4 = 64 warps = 8 blocks.
  Occupancy occ = ComputeOccupancy(H100(), {256, 32, 0});
  EXPECT_EQ(occ.blocks_per_sm, 8u);
  EXPECT_EQ(occ.warps_per_sm, 64u);
  EXPECT_DOUBLE_EQ(occ.fraction, 1.0);
  EXPECT_EQ(occ.limiter, OccupancyLimiter::kWarps);
}

TEST(OccupancyTest, RegisterBound) {
  // 128 regs: 4096 per warp; 16384 / 4096 = 4 warps per sub-partition = 16 per SM,
  // two blocks of 8 warps: 16/64 = 25%.
  Occupancy occ = ComputeOccupancy(H100(), {256, 128, 0});
  EXPECT_EQ(occ.blocks_per_sm, 2u);
  EXPECT_DOUBLE_EQ(occ.fraction, 0.25);
  EXPECT_EQ(occ.limiter, OccupancyLimiter::kRegisters);
}

TEST(OccupancyTest, RegistersRoundToAllocationUnitPerSubPartition) {
  // 72 regs * 32 = 2304 (a multiple of 256); 16384 / 2304 = 7 warps per sub-partition,
  // 28 per SM; blocks of 8 warps: 3 blocks = 24 warps = 37.5%.
  Occupancy occ = ComputeOccupancy(H100(), {256, 72, 0});
  EXPECT_EQ(occ.blocks_per_sm, 3u);
  EXPECT_DOUBLE_EQ(occ.fraction, 0.375);
  // 65 regs * 32 = 2080, rounded up to 2304: same answer as 72.
  EXPECT_EQ(ComputeOccupancy(H100(), {256, 65, 0}).blocks_per_sm, 3u);
}

TEST(OccupancyTest, SharedMemoryBoundIncludesReservedKiB) {
  // 48 KiB + 1 KiB reserved = 50176 bytes; 233472 / 50176 = 4 blocks of 4 warps = 25%.
  Occupancy occ = ComputeOccupancy(H100(), {128, 32, 48 * 1024});
  EXPECT_EQ(occ.blocks_per_sm, 4u);
  EXPECT_DOUBLE_EQ(occ.fraction, 0.25);
  EXPECT_EQ(occ.limiter, OccupancyLimiter::kSharedMemory);
  // 100 bytes + 1024 reserved = 1124, rounded to 1152: 233472 / 1152 = 202 blocks,
  // so the 32-block limit binds: 32 blocks of 1 warp = 50%.
  Occupancy tiny = ComputeOccupancy(H100(), {32, 16, 100});
  EXPECT_EQ(tiny.blocks_per_sm, 32u);
  EXPECT_DOUBLE_EQ(tiny.fraction, 0.5);
  EXPECT_EQ(tiny.limiter, OccupancyLimiter::kBlocks);
  // Opted-in dynamic shared memory above the 48 KiB default: 65 KiB = 66560 bytes,
  // 233472 / 66560 = 3 blocks of 4 warps = 18.75%.
  EXPECT_DOUBLE_EQ(ComputeOccupancy(H100(), {128, 32, 64 * 1024}).fraction, 12.0 / 64);
}

TEST(OccupancyTest, PartialWarpsCountAsWholeWarps) {
  // 96 threads = 3 warps; 64 / 3 = 21 blocks = 63 warps.
  Occupancy occ = ComputeOccupancy(H100(), {96, 32, 0});
  EXPECT_EQ(occ.blocks_per_sm, 21u);
  EXPECT_EQ(occ.warps_per_sm, 63u);
  // 33 threads still take 2 warps: 64 / 2 = 32 blocks by warps and by blocks.
  EXPECT_EQ(ComputeOccupancy(H100(), {33, 32, 0}).warps_per_sm, 64u);
}

TEST(OccupancyTest, LaunchesThatCannotRun) {
  EXPECT_EQ(ComputeOccupancy(H100(), {2048, 32, 0}).limiter, OccupancyLimiter::kDoesNotFit);
  // 1024 threads * 128 regs = 131072 registers > 65536 per block.
  EXPECT_EQ(ComputeOccupancy(H100(), {1024, 128, 0}).limiter, OccupancyLimiter::kDoesNotFit);
  EXPECT_EQ(ComputeOccupancy(H100(), {128, 32, 228 * 1024}).limiter, OccupancyLimiter::kDoesNotFit);
  EXPECT_EQ(ComputeOccupancy(H100(), {0, 32, 0}).limiter, OccupancyLimiter::kNone);
  EXPECT_EQ(ComputeOccupancy(DeviceRecord{}, {128, 32, 0}).limiter, OccupancyLimiter::kNone);
}

}  // namespace
}  // namespace gpuperf
