#include "base/ordered_work.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuperf {
namespace {

TEST(OrderedWorkTest, EveryItemIsWorkedOnceAndUsedInOrder) {
  for (unsigned helpers : {0u, 1u, 3u, 8u}) {
    for (size_t window : {1u, 2u, 5u}) {
      constexpr size_t kItems = 200;
      std::vector<std::atomic<int>> worked(kItems);
      std::vector<size_t> used;
      std::vector<int> slot_value(window, -1);
      RunInOrder(
          kItems, helpers, window,
          [&](size_t i, size_t slot) {
            worked[i].fetch_add(1);
            slot_value[slot] = static_cast<int>(i);  // what `use` must find in the slot
          },
          [&](size_t i, size_t slot) {
            EXPECT_EQ(slot, i % window);
            EXPECT_EQ(slot_value[slot], static_cast<int>(i)) << "slot reused before its use";
            used.push_back(i);
          });
      ASSERT_EQ(used.size(), kItems) << helpers << " helpers, window " << window;
      for (size_t i = 0; i < kItems; ++i) {
        EXPECT_EQ(used[i], i);
        EXPECT_EQ(worked[i].load(), 1);
      }
    }
  }
}

TEST(OrderedWorkTest, NeverMoreItemsUnderWayThanTheWindow) {
  constexpr size_t kWindow = 3;
  std::mutex mutex;
  size_t started = 0, used = 0, most_ahead = 0;
  RunInOrder(
      100, 4, kWindow,
      [&](size_t, size_t) {
        std::lock_guard lock(mutex);
        ++started;
        most_ahead = std::max(most_ahead, started - used);
      },
      [&](size_t, size_t) {
        std::lock_guard lock(mutex);
        ++used;
      });
  EXPECT_LE(most_ahead, kWindow);
  EXPECT_EQ(used, 100u);
}

// While the calling thread is still using item 0, a helper works on item 1: the work runs
// ahead of its use. (A sequential loop never gets there: the wait below would run out.)
TEST(OrderedWorkTest, HelpersWorkAheadWhileAnItemIsBeingUsed) {
  std::atomic<bool> item1_started{false};
  std::atomic<bool> seen_ahead{false};
  std::thread::id caller = std::this_thread::get_id();
  std::thread::id item1_thread;
  RunInOrder(
      4, 1, 2,
      [&](size_t i, size_t) {
        if (i == 1) {
          item1_thread = std::this_thread::get_id();
          item1_started = true;
        }
      },
      [&](size_t i, size_t) {
        if (i != 0) return;
        // Generous bound: a condition, not a time, decides; the bound only ends a hang.
        for (int polls = 0; polls < 120000 && !item1_started; ++polls) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        seen_ahead = item1_started.load();
      });
  EXPECT_TRUE(seen_ahead);
  EXPECT_NE(item1_thread, caller);
}

TEST(OrderedWorkTest, NoItemsAndOneItem) {
  int calls = 0;
  RunInOrder(
      0, 4, 3, [&](size_t, size_t) { ++calls; }, [&](size_t, size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
  RunInOrder(
      1, 4, 3, [&](size_t, size_t) { ++calls; }, [&](size_t, size_t) { ++calls; });
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace gpuperf
