// The rules about copies, kernels' configuration and memory (pageable_copies,
// tiny_copies, low_occupancy, memory_growth), each on a scripted program that shows the
// problem and one that does not.
#include <gtest/gtest.h>

#include <string>

#include "analyze/insights/rules.h"
#include "support/insight_scenario.h"

namespace gpuperf {
namespace {

using testing::EvidenceValue;
using testing::InsightScenario;

// Twenty 4 MiB uploads of 400 µs each, one per millisecond, from `host` memory.
InsightScenario Uploads(MemoryKind host) {
  InsightScenario s;
  const StackId upload = s.Stack({"main", "train", "upload_batch"});
  for (int i = 0; i < 20; ++i) {
    s.Copy(upload, MemcpyKind::kHtoD, host, 4 << 20, 10 + i * 1000, 400);
  }
  return s;
}

TEST(PageableCopies, CopiesFromPageableMemoryAreNamedWithTheirStack) {
  const std::vector<Insight> found = Uploads(MemoryKind::kPageable).Insights("pageable_copies");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(EvidenceValue(in, "copies"), 20);
  EXPECT_EQ(EvidenceValue(in, "bytes"), 80 << 20);
  EXPECT_EQ(in.at_stake_ns, 20u * 400'000);
  EXPECT_EQ(in.stake, StakeKind::kGpuTime);
  EXPECT_EQ(EvidenceValue(in, "cpu_time_in_calls"), 20 * 401'000);
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "upload_batch (app.cc:10)");
  EXPECT_NE(in.finding.find("host-to-device"), std::string::npos) << in.finding;
}

TEST(PageableCopies, PinnedMemoryIsFine) {
  EXPECT_TRUE(Uploads(MemoryKind::kPinned).Insights("pageable_copies").empty());
}

// `copies` device-to-host copies of `bytes`, 12 µs each, one every 50 µs.
InsightScenario Readbacks(int copies, uint64_t bytes) {
  InsightScenario s;
  const StackId read = s.Stack({"main", "train", "log_metric"});
  for (int i = 0; i < copies; ++i) {
    s.Copy(read, MemcpyKind::kDtoH, MemoryKind::kPinned, bytes, 10 + i * 50, 12, "cudaMemcpy");
  }
  return s;
}

TEST(TinyCopies, ManySmallCopiesFromOnePlaceAreNamed) {
  const std::vector<Insight> found = Readbacks(100, 1024).Insights("tiny_copies");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_EQ(EvidenceValue(in, "copies"), 100);
  EXPECT_EQ(EvidenceValue(in, "average_bytes"), 1024);
  EXPECT_EQ(in.stake, StakeKind::kCpuBlocked);
  EXPECT_EQ(in.at_stake_ns, 100u * 13'000);  // each call: 1 µs before the copy, then the copy
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "log_metric (app.cc:10)");
}

TEST(TinyCopies, FewOrLargeCopiesAreFine) {
  EXPECT_TRUE(Readbacks(40, 1024).Insights("tiny_copies").empty());
  EXPECT_TRUE(Readbacks(100, 1 << 20).Insights("tiny_copies").empty());
}

// Ten 200 µs launches of `kernel` with 256-thread blocks and `registers` per thread.
InsightScenario HotKernel(std::string_view kernel, uint32_t registers) {
  InsightScenario s;
  const StackId solve = s.Stack({"main", "solve"});
  for (int i = 0; i < 10; ++i) {
    s.Launch(solve, kernel, i * 300, 5, i * 300 + 6, 200).registers_per_thread = registers;
  }
  return s;
}

TEST(LowOccupancy, ARegisterHungryHotKernelIsNamedWithItsLimiter) {
  // 255 registers x 256 threads: one block (8 of 64 warps) per H100 SM.
  const std::vector<Insight> found = HotKernel("_Z6solvePf", 255).Insights("low_occupancy");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  EXPECT_DOUBLE_EQ(EvidenceValue(in, "theoretical_occupancy"), 0.125);
  EXPECT_EQ(EvidenceValue(in, "registers_per_thread"), 255);
  EXPECT_EQ(in.at_stake_ns, 10u * 200'000);
  EXPECT_NE(in.finding.find("limited by registers"), std::string::npos) << in.finding;
  EXPECT_NE(in.suggestion.find("__launch_bounds__"), std::string::npos);
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "solve (app.cc:10)");
}

TEST(LowOccupancy, FullOccupancyOrALibraryKernelIsLeftAlone) {
  EXPECT_TRUE(HotKernel("_Z6solvePf", 32).Insights("low_occupancy").empty());
  EXPECT_TRUE(HotKernel("sm90_xmma_gemm_f32f32_tn_n_tilesize128x128x8", 255)
                  .Insights("low_occupancy")
                  .empty());
}

// 80 ms of steps (a 100 µs kernel every millisecond); `allocate(s, i, stack)` runs at
// step i, with a stack ending in `allocator`.
template <class Allocate>
InsightScenario Steps(const std::string& allocator, Allocate allocate) {
  InsightScenario s;
  const StackId step = s.Stack({"main", "step"});
  const StackId allocating = s.Stack({"main", "step", allocator});
  for (int i = 0; i < 80; ++i) {
    s.Launch(step, "k", i * 1000, 5, i * 1000 + 6, 100);
    allocate(s, i, allocating);
  }
  return s;
}

TEST(MemoryGrowth, MemoryKeptEveryOtherStepIsGrowth) {
  InsightScenario s = Steps("grow_cache", [](InsightScenario& s, int i, StackId stack) {
    if (i % 2 == 0) s.Allocate(stack, 0x100000000 + i * (8 << 20), 4 << 20, i * 1000 + 1000);
  });
  const std::vector<Insight> found = s.Insights("memory_growth");
  ASSERT_EQ(found.size(), 1u);
  const Insight& in = found[0];
  // 4 MiB at 1, 3, 5 ... 79 ms; the active span's midpoint is 39.6 ms.
  EXPECT_EQ(EvidenceValue(in, "in_use_at_midpoint"), 20 * (4 << 20));
  EXPECT_EQ(EvidenceValue(in, "growth"), 20 * (4 << 20));
  EXPECT_EQ(EvidenceValue(in, "allocations_kept_since_midpoint"), 20);
  EXPECT_EQ(in.stake, StakeKind::kMemory);
  EXPECT_EQ(in.at_stake_bytes, 20u * (4 << 20));
  ASSERT_FALSE(in.stack.empty());
  EXPECT_EQ(in.stack[0], "grow_cache (app.cc:10)");
}

TEST(MemoryGrowth, StartUpAllocationAndFreedBuffersAreNotGrowth) {
  InsightScenario s = Steps("scratch", [](InsightScenario& s, int i, StackId stack) {
    if (i == 0) s.Allocate(stack, 0x200000000, 1ull << 30, 500);  // the model: 1 GiB
    s.Allocate(stack, 0x300000000, 64 << 20, i * 1000 + 200);     // a scratch buffer per step
    s.Free(0x300000000, i * 1000 + 900);
  });
  EXPECT_TRUE(s.Insights("memory_growth").empty());
}

}  // namespace
}  // namespace gpuperf
