// The .eh_frame table unwinder against libunwind on stacks through three shared libraries
// and libc, all built with -O2 -fomit-frame-pointer (chain.h): the same PCs on every frame,
// the frames the chain's structure predicts, and a clean fallback where a frame's CFA needs
// an expression.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "inject/stack/table_unwinder.h"
#include "inject/stack/unwinder.h"
#include "unwind/chain.h"  // GP_CHAIN_NS=chain_nofp: linked
#undef GP_CHAIN_NS
#define GP_CHAIN_NS chain_fp
#include "unwind/chain.h"  // loaded with dlopen by one test

namespace gpuperf {
namespace {

namespace chain = chain_nofp;

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

LeafCapture RunChain(int levels, bool realign, int max_depth = kMaxStackDepth) {
  LeafCapture capture;
  capture.max_depth = max_depth;
  chain::ChainContext context;
  context.leaf = Leaf;
  context.arg = &capture;
  context.realign = realign;
  chain::Run(levels, &context);
  EXPECT_TRUE(context.leaf_called);
  return capture;
}

// The chain functions each frame belongs to, innermost first (frames elsewhere skipped).
std::vector<std::string> ChainFrames(const uint64_t* pcs, int depth) {
  static const char* const kNames[] = {
      "Run",        "MiddleA",      "SortAndCallLeaf", "Descend",   "ManyRegisters",
      "WithAlloca", "WithBigArray", "TailCaller",      "Realigned", "CallLeaf"};
  std::vector<std::string> names;
  for (int i = 0; i < depth; ++i) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(pcs[i] - 1), &info) == 0 || info.dli_sname == nullptr) {
      continue;
    }
    const std::string mangled = info.dli_sname;
    for (const char* name : kNames) {
      // Itanium mangling: <namespace><length><name>E<parameters>
      if (mangled.find(std::to_string(std::strlen(name)) + name + "E") != std::string::npos) {
        names.push_back(name);
      }
    }
  }
  return names;
}

// What the chain's code says the stack holds (chain_b.cc's switch), innermost first. The
// tail call leaves no frame.
std::vector<std::string> ExpectedChainFrames(int levels, bool realign) {
  std::vector<std::string> outer_first = {"Run"};
  if (realign) outer_first.push_back("Realigned");
  static const char* const kByRemainder[] = {"WithAlloca", "WithBigArray", "MiddleA", nullptr,
                                             "ManyRegisters"};
  for (int n = levels; n > 0; --n) {
    outer_first.push_back("Descend");
    if (kByRemainder[n % 5] != nullptr) outer_first.push_back(kByRemainder[n % 5]);
  }
  outer_first.insert(outer_first.end(), {"Descend", "SortAndCallLeaf", "CallLeaf"});
  std::reverse(outer_first.begin(), outer_first.end());
  return outer_first;
}

bool HasFrameIn(const uint64_t* pcs, int depth, const char* library_prefix) {
  for (int i = 0; i < depth; ++i) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(pcs[i] - 1), &info) == 0 || info.dli_fname == nullptr) {
      continue;
    }
    const char* slash = std::strrchr(info.dli_fname, '/');
    const char* base = slash != nullptr ? slash + 1 : info.dli_fname;
    if (std::strncmp(base, library_prefix, std::strlen(library_prefix)) == 0) return true;
  }
  return false;
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
    const LeafCapture capture = RunChain(levels, /*realign=*/false);
    const UnwindComparison& c = capture.comparison;
    EXPECT_EQ(c.table.stop, TableWalkStop::kOutermost) << TableWalkStopName(c.table.stop);
    EXPECT_TRUE(c.agrees()) << "first mismatch at frame " << c.first_mismatch;
    EXPECT_EQ(c.table.depth, c.libunwind_depth);
    EXPECT_EQ(c.compared, c.table.depth - 1);
    EXPECT_EQ(c.mismatches, 0);
    // The stack the leaf itself captured is the chain's, frame for frame.
    ASSERT_EQ(capture.table.stop, TableWalkStop::kOutermost);
    EXPECT_EQ(ChainFrames(capture.pcs, capture.table.depth), ExpectedChainFrames(levels, false));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libgp_unwind_chain_a"));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libgp_unwind_chain_b"));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libgp_unwind_chain_c"));
    EXPECT_TRUE(HasFrameIn(capture.pcs, capture.table.depth, "libc.so"));  // qsort_r
  }
  UseTableRuleCache(true);
}

TEST_F(TableUnwinderMultilib, EqualsLibunwindDeepAndOnAnotherThread) {
  LeafCapture deep, threaded;
  deep = RunChain(60, false);
  std::thread([&] { threaded = RunChain(12, false); }).join();
  for (const LeafCapture* capture : {&deep, &threaded}) {
    const UnwindComparison& c = capture->comparison;
    EXPECT_EQ(c.table.stop, TableWalkStop::kOutermost) << TableWalkStopName(c.table.stop);
    EXPECT_TRUE(c.agrees()) << "first mismatch at frame " << c.first_mismatch;
    EXPECT_GT(c.compared, 20);
  }
  EXPECT_GT(deep.comparison.table.depth, 100);
  EXPECT_EQ(ChainFrames(threaded.pcs, threaded.table.depth), ExpectedChainFrames(12, false));
}

TEST_F(TableUnwinderMultilib, StopsAtMaxDepthLikeLibunwind) {
  const LeafCapture capture = RunChain(12, false, /*max_depth=*/10);
  EXPECT_EQ(capture.comparison.table.stop, TableWalkStop::kMaxDepth);
  EXPECT_EQ(capture.comparison.table.depth, 10);
  EXPECT_TRUE(capture.comparison.agrees());
}

TEST_F(TableUnwinderMultilib, FallsBackAtAFrameOnlyAnExpressionDescribes) {
  const UnwindVerifyCounts before = ReadUnwindVerifyCounts();
  const LeafCapture capture = RunChain(6, /*realign=*/true);
  const UnwindComparison& c = capture.comparison;
  // The walk gets as far as the realigned frame, and everything up to it is right.
  EXPECT_EQ(c.table.stop, TableWalkStop::kUnexpressible) << TableWalkStopName(c.table.stop);
  EXPECT_FALSE(c.table.complete());
  EXPECT_EQ(c.mismatches, 0);
  EXPECT_GT(c.libunwind_depth, c.table.depth);
  const std::vector<std::string> frames = ChainFrames(capture.pcs, capture.table.depth);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back(), "Realigned");
  // libunwind, which the caller falls back to, sees the whole chain.
  uint64_t pcs[kMaxStackDepth];
  chain::ChainContext context;
  context.realign = true;
  context.arg = pcs;
  context.leaf = [](void* arg) {
    return CaptureStack(static_cast<uint64_t*>(arg), kMaxStackDepth);
  };
  chain::Run(6, &context);
  EXPECT_EQ(ChainFrames(pcs, context.leaf_result), ExpectedChainFrames(6, true));
  const UnwindVerifyCounts after = ReadUnwindVerifyCounts();
  EXPECT_EQ(after.stacks, before.stacks + 1);
  EXPECT_EQ(after.fallbacks, before.fallbacks + 1);
  EXPECT_EQ(after.frames_mismatched, before.frames_mismatched);
  EXPECT_EQ(after.stops[static_cast<int>(TableWalkStop::kUnexpressible)],
            before.stops[static_cast<int>(TableWalkStop::kUnexpressible)] + 1);
}

// The frame-pointer build of the chain, loaded after the tables were built.
using FpRun = int (*)(int, chain_fp::ChainContext*);
FpRun LoadFramePointerChain() {
  // b and c first: each library's calls into the others bind lazily, at first call.
  for (const char* part : {"c", "b", "a"}) {
    const std::string path =
        std::string(GP_UNWIND_CHAIN_DIR) + "/libgp_unwind_chain_" + part + "_fp.so";
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_GLOBAL);
    if (handle == nullptr) return nullptr;
    if (*part == 'a') {
      return reinterpret_cast<FpRun>(dlsym(handle, "_ZN8chain_fp3RunEiPNS_12ChainContextE"));
    }
  }
  return nullptr;
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
