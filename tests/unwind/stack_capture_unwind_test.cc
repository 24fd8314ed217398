// The launch-stack path (src/inject/stack/stack_capture.cc) on stacks through three shared
// libraries built with -O2 -fomit-frame-pointer (chain.h): the table unwinder takes them once
// its tables are built in the background, and every one equals libunwind's stack on every
// frame, whether libunwind checks it (verify mode: no disagreement) or takes the same stack
// itself (the same interned stack id). A frame the tables cannot follow, or a library loaded
// later, falls back to libunwind, counted. The capture code is in
// libgpuperf_inject_unwind_test.so, whose frames are trimmed as the injection library's are.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "inject/stack/stack_capture.h"
#include "inject/stats.h"
#include "unwind/chain.h"  // GP_CHAIN_NS=chain_nofp: linked
#include "unwind/chain_frames.h"
#undef GP_CHAIN_NS
#define GP_CHAIN_NS chain_fp
#include "unwind/chain.h"  // loaded with dlopen by one test
#include "unwind/load_fp_chain.h"

namespace gpuperf::inject {
namespace {

using chain_test::ChainEntry;
using chain_test::ChainFrames;
using chain_test::ExpectedChainFrames;
using chain_test::FpRun;
using chain_test::HasFrameIn;
using chain_test::LoadFramePointerChain;

constexpr uint32_t kDepth = 200;

StackCaptureOptions Options(UnwindMode mode, bool verify) {
  StackCaptureOptions options;
  options.max_depth = kDepth;
  options.unwind = mode;
  options.verify = verify;
  options.python = false;
  return options;
}

// At the bottom of the chain: one capture per mode, all from one call site, so that equal
// stacks get the same id.
struct LeafCaptures {
  std::vector<UnwindMode> modes;
  bool verify = true;
  std::vector<StackId> ids;
  std::vector<StackSource> sources;
};

__attribute__((noinline)) StackId CaptureOnce(StackSource* source) {
  const StackId id = CaptureLaunchStack(source);
  asm volatile("" ::: "memory");  // no tail call
  return id;
}

int Leaf(void* arg) {
  auto* captures = static_cast<LeafCaptures*>(arg);
  for (UnwindMode mode : captures->modes) {
    InitStackCapture(Options(mode, captures->verify));
    StackSource source = StackSource::kNone;
    captures->ids.push_back(CaptureOnce(&source));
    captures->sources.push_back(source);
  }
  return 1;
}

template <class Context, class RunFn>
LeafCaptures RunChain(RunFn run, int levels, ChainEntry entry, std::vector<UnwindMode> modes) {
  LeafCaptures captures;
  captures.modes = std::move(modes);
  Context context;
  context.leaf = Leaf;
  context.arg = &captures;
  context.realign = entry == ChainEntry::kRealigned;
  context.other_register = entry == ChainEntry::kOtherRegister;
  run(levels, &context);
  return captures;
}

LeafCaptures RunChain(int levels, ChainEntry entry, std::vector<UnwindMode> modes) {
  return RunChain<chain_nofp::ChainContext>(chain_nofp::Run, levels, entry, std::move(modes));
}

// Captures in table mode until the table walk takes the stack (its tables are built in the
// background on first need); returns how many captures fell back first, or -1 after 20 s.
template <class Capture>
int CapturesUntilTablesAreReady(Capture capture) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (int fallbacks = 0; std::chrono::steady_clock::now() < deadline; ++fallbacks) {
    if (capture() == StackSource::kTable) return fallbacks;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

int WarmUpTables() {
  return CapturesUntilTablesAreReady(
      [] { return RunChain(3, ChainEntry::kPlain, {UnwindMode::kTable}).sources[0]; });
}

// The stacks drained so far, by id.
std::map<StackId, StackRecord>& Drained() {
  static std::map<StackId, StackRecord> stacks;
  std::vector<StackRecord> fresh;
  DrainNewStacks(fresh, 1);
  for (StackRecord& stack : fresh) stacks[stack.id] = std::move(stack);
  return stacks;
}

std::vector<std::string> FramesOf(StackId id) {
  auto& stacks = Drained();
  auto found = stacks.find(id);
  if (found == stacks.end()) return {};
  const std::vector<uint64_t>& pcs = found->second.pcs;
  return ChainFrames(pcs.data(), static_cast<int>(pcs.size()));
}

TEST(StackCaptureUnwind, TablesAreBuiltInTheBackgroundOnFirstNeed) {
  const int fallbacks = WarmUpTables();
  ASSERT_GE(fallbacks, 1) << "the tables never got built";
  // Until then, each capture fell back to libunwind for want of a table, and asked for it.
  EXPECT_EQ(GetStat(StatId::table_fallback_no_table), static_cast<uint64_t>(fallbacks));
  EXPECT_EQ(GetStat(StatId::table_fallback_rule), 0u);
  EXPECT_EQ(GetStat(StatId::unwind_disagreements), 0u);
  EXPECT_EQ(GetStat(StatId::unwind_verified), 1u);  // the table's stack, checked
}

TEST(StackCaptureUnwind, TableStacksEqualLibunwindsOnEveryFrame) {
  ASSERT_GE(WarmUpTables(), 0);
  const uint64_t verified_before = GetStat(StatId::unwind_verified);
  int table_stacks = 0;
  for (ChainEntry entry : {ChainEntry::kPlain, ChainEntry::kRealigned}) {
    for (int levels = 0; levels < 17; ++levels) {
      SCOPED_TRACE("levels " + std::to_string(levels) +
                   (entry == ChainEntry::kRealigned ? ", realigned" : ""));
      // The same launch: the table walk (checked by libunwind), then libunwind alone.
      const LeafCaptures c = RunChain(levels, entry, {UnwindMode::kTable, UnwindMode::kLibunwind});
      EXPECT_EQ(c.sources[0], StackSource::kTable);
      EXPECT_EQ(c.sources[1], StackSource::kLibunwind);
      ASSERT_NE(c.ids[0], 0u);
      EXPECT_EQ(c.ids[0], c.ids[1]) << "the table walk and libunwind interned different stacks";
      EXPECT_EQ(FramesOf(c.ids[0]), ExpectedChainFrames(levels, entry));
      table_stacks += c.sources[0] == StackSource::kTable;
    }
  }
  // Every stack, checked frame by frame against libunwind's: no disagreement.
  EXPECT_EQ(GetStat(StatId::unwind_verified) - verified_before,
            static_cast<uint64_t>(table_stacks));
  EXPECT_EQ(GetStat(StatId::unwind_disagreements), 0u);
  EXPECT_EQ(GetStat(StatId::table_fallback_rule), 0u);
  // The stacks go through all three libraries and libc, and start at the chain's caller:
  // the capture code's own frames are trimmed.
  const LeafCaptures c = RunChain(5, ChainEntry::kPlain, {UnwindMode::kTable});
  const std::vector<uint64_t>& pcs = Drained()[c.ids[0]].pcs;
  ASSERT_FALSE(pcs.empty());
  for (const char* library :
       {"libgp_unwind_chain_a", "libgp_unwind_chain_b", "libgp_unwind_chain_c", "libc.so"}) {
    EXPECT_TRUE(HasFrameIn(pcs.data(), static_cast<int>(pcs.size()), library)) << library;
  }
  EXPECT_FALSE(HasFrameIn(pcs.data(), 1, "libgpuperf_inject"));
}

TEST(StackCaptureUnwind, DeepStacksAndOtherThreads) {
  ASSERT_GE(WarmUpTables(), 0);
  LeafCaptures deep, threaded;
  deep = RunChain(60, ChainEntry::kPlain, {UnwindMode::kTable, UnwindMode::kLibunwind});
  std::thread([&] {
    // A thread starts in libstdc++, whose table nothing needed so far: built now.
    EXPECT_GE(CapturesUntilTablesAreReady(
                  [] { return RunChain(2, ChainEntry::kPlain, {UnwindMode::kTable}).sources[0]; }),
              0);
    threaded = RunChain(12, ChainEntry::kPlain, {UnwindMode::kTable, UnwindMode::kLibunwind});
  }).join();
  for (const LeafCaptures* c : {&deep, &threaded}) {
    EXPECT_EQ(c->sources[0], StackSource::kTable);
    EXPECT_EQ(c->ids[0], c->ids[1]);
  }
  EXPECT_GT(Drained()[deep.ids[0]].pcs.size(), 100u);
  EXPECT_EQ(FramesOf(threaded.ids[0]), ExpectedChainFrames(12));
  EXPECT_EQ(GetStat(StatId::unwind_disagreements), 0u);
}

TEST(StackCaptureUnwind, AFrameTheTablesCannotFollowFallsBackToLibunwind) {
  ASSERT_GE(WarmUpTables(), 0);
  const uint64_t before = GetStat(StatId::table_fallback_rule);
  const LeafCaptures c =
      RunChain(6, ChainEntry::kOtherRegister, {UnwindMode::kTable, UnwindMode::kLibunwind});
  EXPECT_EQ(c.sources[0], StackSource::kLibunwind);
  EXPECT_EQ(GetStat(StatId::table_fallback_rule), before + 1);
  EXPECT_EQ(c.ids[0], c.ids[1]);
  EXPECT_EQ(FramesOf(c.ids[0]), ExpectedChainFrames(6, ChainEntry::kOtherRegister));
}

TEST(StackCaptureUnwind, AutoTriesFramePointersThenTheTables) {
  ASSERT_GE(WarmUpTables(), 0);
  // Without frame pointers the frame-pointer walk loses frames: libunwind refuses it at
  // first sight (and gives the stack), the tables take it from then on.
  const LeafCaptures c = RunChain(7, ChainEntry::kPlain,
                                  {UnwindMode::kAuto, UnwindMode::kAuto, UnwindMode::kLibunwind});
  EXPECT_EQ(c.sources[0], StackSource::kLibunwind);
  EXPECT_EQ(c.sources[1], StackSource::kTable);
  EXPECT_EQ(c.ids[0], c.ids[2]);
  EXPECT_EQ(c.ids[1], c.ids[2]);
  EXPECT_GE(GetStat(StatId::fp_stacks_rejected), 1u);
  EXPECT_EQ(GetStat(StatId::unwind_disagreements), 0u);
}

TEST(StackCaptureUnwind, ALibraryLoadedLaterGetsItsTable) {
  ASSERT_GE(WarmUpTables(), 0);
  const FpRun run = LoadFramePointerChain();
  ASSERT_NE(run, nullptr) << dlerror();
  const uint64_t before = GetStat(StatId::table_fallback_no_table);
  auto capture = [&] {
    return RunChain<chain_fp::ChainContext>(run, 4, ChainEntry::kPlain, {UnwindMode::kTable})
        .sources[0];
  };
  const int fallbacks = CapturesUntilTablesAreReady(capture);
  ASSERT_GE(fallbacks, 1) << "the new libraries were never walked from tables";
  EXPECT_EQ(GetStat(StatId::table_fallback_no_table), before + fallbacks);
  const LeafCaptures c = RunChain<chain_fp::ChainContext>(
      run, 4, ChainEntry::kPlain, {UnwindMode::kTable, UnwindMode::kLibunwind});
  EXPECT_EQ(c.ids[0], c.ids[1]);
  EXPECT_EQ(FramesOf(c.ids[0]), ExpectedChainFrames(4));
  EXPECT_EQ(GetStat(StatId::unwind_disagreements), 0u);
}

}  // namespace
}  // namespace gpuperf::inject
