#include "inject/stack/frame_pointer_odds.h"

#include <gtest/gtest.h>

namespace gpuperf::inject {
namespace {

// Launches until the first that is not tried; how many were.
uint32_t TriedUntilSkip(FramePointerOdds& odds, bool hit_every, uint32_t limit) {
  for (uint32_t n = 0; n < limit; ++n) {
    if (!odds.ShouldTry()) return n;
    odds.Note(hit_every);
  }
  return limit;
}

TEST(FramePointerOdds, GivesUpAfterAJudgementOfMisses) {
  FramePointerOdds odds;
  for (uint32_t i = 0; i + 1 < FramePointerOdds::kJudgeAfter; ++i) {
    ASSERT_TRUE(odds.ShouldTry());
    EXPECT_FALSE(odds.Note(false));
  }
  ASSERT_TRUE(odds.ShouldTry());
  EXPECT_TRUE(odds.Note(false));  // the 1,024th miss: the verdict
  // Skipped for kSkipFor launches, then tried again for a whole new judgement.
  uint32_t skipped = 0;
  while (!odds.ShouldTry()) ++skipped;
  EXPECT_EQ(skipped, FramePointerOdds::kSkipFor - 1);
  EXPECT_FALSE(odds.Note(false));
  EXPECT_EQ(TriedUntilSkip(odds, false, 1u << 20), FramePointerOdds::kJudgeAfter - 1);
}

TEST(FramePointerOdds, KeepsTryingWhileOneInTenHits) {
  FramePointerOdds odds;
  for (uint32_t i = 0; i < 10 * FramePointerOdds::kJudgeAfter; ++i) {
    ASSERT_TRUE(odds.ShouldTry()) << i;
    EXPECT_FALSE(odds.Note(i % 9 == 0));  // 113 or 114 hits in each 1,024
  }
  FramePointerOdds all_hits;
  EXPECT_EQ(TriedUntilSkip(all_hits, true, 1u << 16), 1u << 16);
}

TEST(FramePointerOdds, JustUnderOneInTenGivesUp) {
  FramePointerOdds odds;
  bool gave_up = false;
  for (uint32_t i = 0; i < FramePointerOdds::kJudgeAfter; ++i) {
    ASSERT_TRUE(odds.ShouldTry());
    gave_up = odds.Note(i < 102);  // 102 of 1,024: 9.96%
  }
  EXPECT_TRUE(gave_up);
  EXPECT_FALSE(odds.ShouldTry());
}

}  // namespace
}  // namespace gpuperf::inject
