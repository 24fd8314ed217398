#include "inject/memory_budget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "inject/config.h"

namespace gpuperf::inject {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

TEST(MemoryBudgetTest, GrantsWithinTheSoftBudgetWithoutGrowing) {
  MemoryBudget budget;
  budget.Configure(64 * kMiB, 1024 * kMiB);
  for (int i = 0; i < 32; ++i) {
    MemoryBudget::Reservation r = budget.Reserve(2 * kMiB);
    ASSERT_TRUE(r.granted);
    EXPECT_EQ(r.grown_to, 0u);
  }
  EXPECT_EQ(budget.held(), 64 * kMiB);
  EXPECT_EQ(budget.growths(), 0u);
  EXPECT_TRUE(budget.UnderPressure());
}

TEST(MemoryBudgetTest, DoublesPastTheSoftBudgetUpToTheCapThenRefuses) {
  MemoryBudget budget;
  budget.Configure(64 * kMiB, 256 * kMiB);
  std::vector<uint64_t> grown;
  int granted = 0;
  for (int i = 0; i < 200; ++i) {
    MemoryBudget::Reservation r = budget.Reserve(2 * kMiB);
    if (!r.granted) break;
    ++granted;
    if (r.grown_to) grown.push_back(r.grown_to);
  }
  EXPECT_EQ(granted, 128);  // 256 MiB of 2 MiB buffers
  EXPECT_EQ(grown, (std::vector<uint64_t>{128 * kMiB, 256 * kMiB}));
  EXPECT_EQ(budget.growths(), 2u);
  EXPECT_FALSE(budget.Reserve(1).granted);
  budget.Release(2 * kMiB);
  EXPECT_TRUE(budget.Reserve(2 * kMiB).granted);
  EXPECT_EQ(budget.peak(), 256 * kMiB);
}

TEST(MemoryBudgetTest, ReleasingEndsThePressureAndKeepsThePeak) {
  MemoryBudget budget;
  budget.Configure(64 * kMiB, 64 * kMiB);
  ASSERT_TRUE(budget.Reserve(40 * kMiB).granted);
  EXPECT_TRUE(budget.UnderPressure());
  budget.Release(40 * kMiB);
  EXPECT_FALSE(budget.UnderPressure());
  EXPECT_EQ(budget.held(), 0u);
  EXPECT_EQ(budget.peak(), 40 * kMiB);
  EXPECT_FALSE(budget.Reserve(65 * kMiB).granted);  // one request larger than the cap
}

TEST(MemoryBudgetTest, ACapBelowTheSoftBudgetIsTheWholeBudget) {
  MemoryBudget budget;
  budget.Configure(64 * kMiB, 4 * kMiB);
  EXPECT_EQ(budget.soft(), 4 * kMiB);
  EXPECT_TRUE(budget.Reserve(4 * kMiB).granted);
  EXPECT_FALSE(budget.Reserve(1).granted);
  EXPECT_EQ(budget.growths(), 0u);
}

TEST(MemoryBudgetTest, ConcurrentReservationsNeverPassTheCap) {
  MemoryBudget budget;
  budget.Configure(8 * kMiB, 32 * kMiB);
  std::atomic<int> granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (budget.Reserve(kMiB).granted) {
          granted++;
          budget.Release(kMiB);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(budget.held(), 0u);
  EXPECT_LE(budget.peak(), 32 * kMiB);
  EXPECT_EQ(granted.load(), 8000);  // 8 MiB at most in use at once: never refused
}

TEST(MemoryCapTest, OneGiBOrASixteenthOfSmallerMachinesNeverBelowTheSoftBudget) {
  EXPECT_EQ(DefaultMemoryCap(128ull << 30), 1024 * kMiB);
  EXPECT_EQ(DefaultMemoryCap(8ull << 30), 512 * kMiB);
  EXPECT_EQ(DefaultMemoryCap(512 * kMiB), 64 * kMiB);
  EXPECT_EQ(DefaultMemoryCap(0), 1024 * kMiB);  // unknown
}

TEST(MemoryCapTest, MaxMemorySetsTheCapAndAtMostTheSoftBudget) {
  setenv("GPUPERF_MAX_MEMORY_MB", "32", 1);
  std::string error;
  Config config = ReadConfigFromEnvironment(&error);
  unsetenv("GPUPERF_MAX_MEMORY_MB");
  EXPECT_EQ(error, "");
  EXPECT_EQ(config.max_memory_bytes, 32 * kMiB);
  EXPECT_EQ(config.soft_memory_bytes, 32 * kMiB);
  config = ReadConfigFromEnvironment(&error);
  EXPECT_EQ(config.soft_memory_bytes, 64 * kMiB);
  EXPECT_GE(config.max_memory_bytes, 64 * kMiB);
  EXPECT_LE(config.first_buffer_bytes, config.buffer_bytes);
}

}  // namespace
}  // namespace gpuperf::inject
