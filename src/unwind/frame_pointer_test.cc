// FramePointerWalk against libunwind: equal through functions with frame records, and one
// frame short through a function without one (why stack_capture.cc checks each new
// frame-pointer stack against libunwind before trusting it).
#include <gtest/gtest.h>

#include <thread>

#include "unwind/unwinder.h"

namespace gpuperf {
namespace {

#define GP_WITH_FP __attribute__((noipa, optimize("no-omit-frame-pointer")))
#define GP_WITHOUT_FP __attribute__((noipa, optimize("omit-frame-pointer")))

volatile int g_sink = 0;

struct Walks {
  uint64_t fp[64] = {};
  uint64_t unwound[64] = {};
  int fp_depth = 0;
  int unwound_depth = 0;
};

bool In(uint64_t pc, void* function) {
  const auto start = reinterpret_cast<uint64_t>(function);
  return pc > start && pc < start + 256;  // these functions are tiny
}

GP_WITH_FP void Inner(Walks* walks) {
  walks->fp_depth = FramePointerWalk(walks->fp, 64);
  walks->unwound_depth = CaptureStack(walks->unwound, 64);
  g_sink = g_sink + 1;  // no tail call
}

GP_WITH_FP void Middle(Walks* walks) {
  Inner(walks);
  g_sink = g_sink + 1;
}

GP_WITH_FP void Outer(Walks* walks) {
  Middle(walks);
  g_sink = g_sink + 1;
}

GP_WITHOUT_FP void MiddleWithoutFramePointer(Walks* walks) {
  Inner(walks);
  g_sink = g_sink + 1;
}

GP_WITH_FP void OuterOverNoFramePointer(Walks* walks) {
  MiddleWithoutFramePointer(walks);
  g_sink = g_sink + 1;
}

TEST(FramePointerWalk, MatchesLibunwindThroughFramesWithRecords) {
  if (InitUnwinder() != UnwinderKind::kLibunwind) GTEST_SKIP() << "no libunwind here";
  Walks walks;
  Outer(&walks);
  ASSERT_GE(walks.fp_depth, 3);
  ASSERT_GE(walks.unwound_depth, 3);
  EXPECT_TRUE(In(walks.fp[0], reinterpret_cast<void*>(&Inner)));
  EXPECT_TRUE(In(walks.fp[1], reinterpret_cast<void*>(&Middle)));
  EXPECT_TRUE(In(walks.fp[2], reinterpret_cast<void*>(&Outer)));
  // Frame 0 is a different call site in Inner for each; the callers are the same.
  EXPECT_TRUE(In(walks.unwound[0], reinterpret_cast<void*>(&Inner)));
  for (int i = 1; i < 3; ++i) EXPECT_EQ(walks.fp[i], walks.unwound[i]) << "frame " << i;
}

TEST(FramePointerWalk, AFunctionWithoutARecordHidesItsCaller) {
  if (InitUnwinder() != UnwinderKind::kLibunwind) GTEST_SKIP() << "no libunwind here";
  Walks walks;
  OuterOverNoFramePointer(&walks);
  ASSERT_GE(walks.unwound_depth, 3);
  ASSERT_GE(walks.fp_depth, 2);
  // libunwind sees Inner <- MiddleWithoutFramePointer <- OuterOverNoFramePointer ...
  EXPECT_TRUE(In(walks.unwound[1], reinterpret_cast<void*>(&MiddleWithoutFramePointer)));
  EXPECT_TRUE(In(walks.unwound[2], reinterpret_cast<void*>(&OuterOverNoFramePointer)));
  // ... the frame-pointer walk reaches the middle function (Inner's return address) but then
  // jumps over its caller.
  EXPECT_TRUE(In(walks.fp[1], reinterpret_cast<void*>(&MiddleWithoutFramePointer)));
  if (walks.fp_depth > 2) {
    EXPECT_FALSE(In(walks.fp[2], reinterpret_cast<void*>(&OuterOverNoFramePointer)));
  }
}

TEST(FramePointerWalk, StaysInsideTheStackOfAnyThread) {
  int depth = -1;
  std::thread([&depth] {
    uint64_t pcs[256];
    depth = FramePointerWalk(pcs, 256);
  }).join();
  EXPECT_GE(depth, 1);
  EXPECT_LE(depth, 256);
  uint64_t pcs[1];
  EXPECT_EQ(FramePointerWalk(pcs, 0), 0);
}

}  // namespace
}  // namespace gpuperf
