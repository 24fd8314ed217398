// The .eh_frame table unwinder against libunwind on stacks through three shared libraries
// and libc, all built with -O2 -fomit-frame-pointer (chain.h): the same PCs on every frame,
// the frames the chain's structure predicts, frames that realign the stack, and a clean
// fallback where a frame's CFA is in a register the walk does not track.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "unwind/chain.h"  // GP_CHAIN_NS=chain_nofp: linked
#include "unwind/chain_frames.h"
#include "unwind/table_unwinder.h"
#include "unwind/unwinder.h"
#undef GP_CHAIN_NS
#define GP_CHAIN_NS chain_fp
#include "unwind/chain.h"  // loaded with dlopen by one test
#include "unwind/load_fp_chain.h"

namespace gpuperf {
namespace {

namespace chain = chain_nofp;
using chain_test::ChainEntry;
using chain_test::ChainFrames;
using chain_test::ExpectedChainFrames;
using chain_test::FpRun;
using chain_test::HasFrameIn;
using chain_test::LoadFramePointerChain;

struct LeafCapture {
  UnwindComparison comparison;
  TableWalkResult table;
  uint64_t pcs[kMaxStackDepth] = {};
  int max_depth = kMaxStackDepth;
};

volatile int g_sink = 0;

__attribute__((noinline)) int Leaf(void* arg) {
  auto* capture = static_cast<LeafCapture*>(arg);
  capture->comparison = CompareWithLibunwind(capture->max_depth);
  TableCaptureStack(capture->pcs, capture->max_depth, &capture->table);
  g_sink = g_sink + 1;  // no tail call
  return 1;
}

LeafCapture RunChain(int levels, ChainEntry entry, int max_depth = kMaxStackDepth) {
  LeafCapture capture;
  capture.max_depth = max_depth;
  chain::ChainContext context;
  context.leaf = Leaf;
  context.arg = &capture;
  context.realign = entry == ChainEntry::kRealigned;
  context.other_register = entry == ChainEntry::kOtherRegister;
  chain::Run(levels, &context);
  EXPECT_TRUE(context.leaf_called);
  return capture;
}

class TableUnwinderMultilib : public ::testing::Test {
 protected:
  void SetUp() override {
    if (InitUnwinder() != UnwinderKind::kLibunwind) GTEST_SKIP() << "no libunwind here";
    ASSERT_TRUE(InitTableUnwinder());
  }
};

TEST_F(TableUnwinderMultilib, EqualsLibunwindOnEveryFrame) {
  // With the per-thread rule cache (the second walk of each stack hits it) and without.
  for (int round = 0; round < 2 * 17; ++round) {
    const int levels = round % 17;
    const bool cached = round < 17;
    UseTableRuleCache(cached);
    SCOPED_TRACE("levels " + std::to_string(levels) + (cached ? ", cached" : ", uncached"));
    const LeafCapture capture = RunChain(levels, ChainEntry::kPlain);
    const UnwindComparison& c = capture.comparison;
    EXPECT_EQ(c.table.stop, TableWalkStop::kOutermost) << TableWalkStopName(c.table.stop);
    EXPECT_TRUE(c.agrees()) << "first mismatch at frame " << c.first_mismatch;
    EXPECT_EQ(c.table.depth, c.libunwind_depth);
    EXPECT_EQ(c.compared, c.table.depth - 1);
    EXPECT_EQ(c.mismatches, 0);
    // The stack the leaf itself captured is the chain's, frame for frame.
    ASSERT_EQ(capture.table.stop, TableWalkStop::kOutermost);
    EXPECT_EQ(ChainFrames(capture.pcs, capture.table.depth), ExpectedChainFrames(levels));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libgp_unwind_chain_a"));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libgp_unwind_chain_b"));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libgp_unwind_chain_c"));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libc.so"));  // qsort_r
  }
  UseTableRuleCache(true);
}

TEST_F(TableUnwinderMultilib, EqualsLibunwindDeepAndOnAnotherThread) {
  LeafCapture deep, threaded;
  deep = RunChain(60, ChainEntry::kPlain);
  std::thread([&] { threaded = RunChain(12, ChainEntry::kPlain); }).join();
  for (const LeafCapture* capture : {&deep, &threaded}) {
    const UnwindComparison& c = capture->comparison;
    EXPECT_EQ(c.table.stop, TableWalkStop::kOutermost) << TableWalkStopName(c.table.stop);
    EXPECT_TRUE(c.agrees()) << "first mismatch at frame " << c.first_mismatch;
    EXPECT_GT(c.compared, 20);
  }
  EXPECT_GT(deep.comparison.table.depth, 100);
  EXPECT_EQ(ChainFrames(threaded.pcs, threaded.table.depth), ExpectedChainFrames(12));
}

TEST_F(TableUnwinderMultilib, StopsAtMaxDepthLikeLibunwind) {
  const LeafCapture capture = RunChain(12, ChainEntry::kPlain, /*max_depth=*/10);
  EXPECT_EQ(capture.comparison.table.stop, TableWalkStop::kMaxDepth);
  EXPECT_EQ(capture.comparison.table.depth, 10);
  EXPECT_TRUE(capture.comparison.agrees());
}

TEST_F(TableUnwinderMultilib, WalksFramesThatRealignTheStack) {
  // GCC's realigned frame: CFA = *(RBP-8), RBP saved at RBP+0 (DRAP), as in libcublasLt.
  for (int levels : {0, 3, 6}) {
    const LeafCapture capture = RunChain(levels, ChainEntry::kRealigned);
    const UnwindComparison& c = capture.comparison;
    EXPECT_EQ(c.table.stop, TableWalkStop::kOutermost) << TableWalkStopName(c.table.stop);
    EXPECT_TRUE(c.agrees()) << "first mismatch at frame " << c.first_mismatch;
    ASSERT_EQ(capture.table.stop, TableWalkStop::kOutermost);
    EXPECT_EQ(ChainFrames(capture.pcs, capture.table.depth),
              ExpectedChainFrames(levels, ChainEntry::kRealigned));
  }
}

TEST_F(TableUnwinderMultilib, FallsBackAtAFrameWhoseCfaIsInAnotherRegister) {
  const UnwindVerifyCounts before = ReadUnwindVerifyCounts();
  const LeafCapture capture = RunChain(6, ChainEntry::kOtherRegister);
  const UnwindComparison& c = capture.comparison;
  // The walk gets as far as the hand-written frame, and everything up to it is right.
  EXPECT_EQ(c.table.stop, TableWalkStop::kUnexpressible) << TableWalkStopName(c.table.stop);
  EXPECT_FALSE(c.table.complete());
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_GT(c.libunwind_depth, c.table.depth);
  const std::vector<std::string> frames = ChainFrames(capture.pcs, capture.table.depth);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back(), "Descend");  // the R12 frame's callee, the last one the table had
  // libunwind, which the caller falls back to, sees the whole chain.
  uint64_t pcs[kMaxStackDepth];
  chain::ChainContext context;
  context.other_register = true;
  context.arg = pcs;
  context.leaf = [](void* arg) {
    return CaptureStack(static_cast<uint64_t*>(arg), kMaxStackDepth);
  };
  chain::Run(6, &context);
  EXPECT_EQ(ChainFrames(pcs, context.leaf_result),
            ExpectedChainFrames(6, ChainEntry::kOtherRegister));
  const UnwindVerifyCounts after = ReadUnwindVerifyCounts();
  EXPECT_EQ(after.stacks, before.stacks + 1);
  EXPECT_EQ(after.fallbacks, before.fallbacks + 1);
  EXPECT_EQ(after.frames_mismatched, before.frames_mismatched);
  EXPECT_EQ(after.stops[static_cast<int>(TableWalkStop::kUnexpressible)],
            before.stops[static_cast<int>(TableWalkStop::kUnexpressible)] + 1);
}

TEST_F(TableUnwinderMultilib, ALibraryLoadedLaterIsUnknownUntilTheTablesAreRefreshed) {
  const FpRun run = LoadFramePointerChain();
  ASSERT_NE(run, nullptr) << dlerror();
  LeafCapture capture;
  chain_fp::ChainContext context;
  context.leaf = Leaf;
  context.arg = &capture;
  run(4, &context);
  // The stack goes through the new libraries: the walk stops at their first frame.
  EXPECT_EQ(capture.comparison.table.stop, TableWalkStop::kUnknownModule);
  EXPECT_EQ(capture.comparison.mismatches, 0);
  EXPECT_EQ(RefreshTableUnwinder(), 3);  // the three libraries, nothing else
  capture = LeafCapture();
  run(4, &context);
  EXPECT_EQ(capture.comparison.table.stop, TableWalkStop::kOutermost);
  EXPECT_TRUE(capture.comparison.agrees()) << capture.comparison.first_mismatch;
}

}  // namespace
}  // namespace gpuperf
