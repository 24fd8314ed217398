// The launch-stack path (src/inject/stack/stack_capture.cc) on stacks through three shared
// libraries built with -O2 -fomit-frame-pointer (chain.h): the table unwinder takes them once
// its tables are built in the background, and every one equals libunwind's stack on every
// frame, whether libunwind checks it (verify mode: no disagreement) or takes the same stack
// itself (the same interned stack id). A frame the tables cannot follow, or a library loaded
// later, falls back to libunwind, counted. Launches repeated from the same place reuse
// their stack from the thread's memo (stack_memo.h), and only then. The capture code is in
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

// --- The stack memo (stack_memo.h) ---------------------------------------------------------

// Captures repeated at the bottom of the chain under the settings in force, from one or two
// call sites at the same depth; then, with `reference`, the same sites' stacks from
// libunwind alone (the memo is off without the tables), through the same calls.
struct MemoCaptures {
  int repeats = 4;
  bool two_sites = false;  // alternate SiteA and SiteB
  bool reference = true;
  std::vector<StackId> ids;
  std::vector<bool> hits;
  std::vector<StackSource> sources;
  std::vector<StackId> reference_ids;    // SiteA's, then SiteB's
  const volatile int* mark_a = nullptr;  // where each site's frame lies
  const volatile int* mark_b = nullptr;
};

__attribute__((noinline)) StackId CaptureWithMemo(StackSource* source, bool* hit) {
  const StackId id = CaptureLaunchStack(source, hit);
  asm volatile("" ::: "memory");  // no tail call
  return id;
}

// Two callers with the same frame: the capture runs at the same stack pointer under either,
// and only the return address into each tells them apart.
__attribute__((noinline, noipa)) StackId SiteA(StackSource* source, bool* hit,
                                               const volatile int** mark) {
  volatile int here = 1;
  *mark = &here;
  return CaptureWithMemo(source, hit) + static_cast<StackId>(here - 1);
}
__attribute__((noinline, noipa)) StackId SiteB(StackSource* source, bool* hit,
                                               const volatile int** mark) {
  volatile int here = 2;
  *mark = &here;
  return CaptureWithMemo(source, hit) + static_cast<StackId>(here - 2);
}

int MemoLeaf(void* arg) {
  auto* c = static_cast<MemoCaptures*>(arg);
  const int references = c->reference ? (c->two_sites ? 2 : 1) : 0;
  for (int i = 0; i < c->repeats + references; ++i) {
    if (i == c->repeats) InitStackCapture(Options(UnwindMode::kLibunwind, false));
    StackSource source = StackSource::kNone;
    bool hit = false;
    const bool b = c->two_sites && (i - (i >= c->repeats ? c->repeats : 0)) % 2 == 1;
    const StackId id = b ? SiteB(&source, &hit, &c->mark_b) : SiteA(&source, &hit, &c->mark_a);
    if (i >= c->repeats) {
      c->reference_ids.push_back(id);
      continue;
    }
    c->ids.push_back(id);
    c->hits.push_back(hit);
    c->sources.push_back(source);
  }
  return 1;
}

MemoCaptures RunMemoChain(int levels, ChainEntry entry, int repeats, bool two_sites = false,
                          bool reference = true) {
  MemoCaptures captures;
  captures.repeats = repeats;
  captures.two_sites = two_sites;
  captures.reference = reference;
  chain_nofp::ChainContext context;
  context.leaf = MemoLeaf;
  context.arg = &captures;
  context.realign = entry == ChainEntry::kRealigned;
  chain_nofp::Run(levels, &context);
  return captures;
}

TEST(StackMemo, RepeatedLaunchesReuseTheStackOnEveryKindOfFrame) {
  ASSERT_GE(WarmUpTables(), 0);
  for (ChainEntry entry : {ChainEntry::kPlain, ChainEntry::kRealigned}) {
    for (int levels = 0; levels < 17; ++levels) {
      SCOPED_TRACE("levels " + std::to_string(levels) +
                   (entry == ChainEntry::kRealigned ? ", realigned" : ""));
      InitStackCapture(Options(UnwindMode::kTable, false));
      const uint64_t entries_before = GetStat(StatId::stack_memo_entries);
      const MemoCaptures c = RunMemoChain(levels, entry, 3);
      EXPECT_EQ(c.sources, std::vector<StackSource>(3, StackSource::kTable));
      EXPECT_EQ(c.hits, (std::vector<bool>{false, true, true}));
      EXPECT_EQ(GetStat(StatId::stack_memo_entries), entries_before + 1);
      ASSERT_NE(c.ids[0], 0u);
      EXPECT_EQ(c.ids[1], c.ids[0]);
      EXPECT_EQ(c.ids[2], c.ids[0]);
      EXPECT_EQ(c.reference_ids, std::vector<StackId>{c.ids[0]});
      EXPECT_EQ(FramesOf(c.ids[0]), ExpectedChainFrames(levels, entry));
    }
  }
}

TEST(StackMemo, AnotherCallerAtTheSameDepthIsNotAHit) {
  ASSERT_GE(WarmUpTables(), 0);
  InitStackCapture(Options(UnwindMode::kTable, false));
  const MemoCaptures c = RunMemoChain(5, ChainEntry::kPlain, 6, /*two_sites=*/true);
  // The same stack pointer under both callers: the memo's key matches, its words do not.
  ASSERT_EQ(c.mark_a, c.mark_b) << "the two sites' frames differ; the test needs them alike";
  EXPECT_EQ(c.hits, (std::vector<bool>{false, false, true, true, true, true}));
  EXPECT_NE(c.ids[0], c.ids[1]);
  for (int i = 2; i < 6; ++i) EXPECT_EQ(c.ids[i], c.ids[i & 1]) << i;
  EXPECT_EQ(c.reference_ids, (std::vector<StackId>{c.ids[0], c.ids[1]}));
}

TEST(StackMemo, VerifyModeUnwindsEveryHitAgain) {
  ASSERT_GE(WarmUpTables(), 0);
  InitStackCapture(Options(UnwindMode::kTable, true));
  const uint64_t checked = GetStat(StatId::stack_memo_checked);
  const MemoCaptures c = RunMemoChain(9, ChainEntry::kPlain, 4, false, false);
  EXPECT_EQ(c.hits, std::vector<bool>(4, false));  // each stack came from the unwinders
  EXPECT_EQ(GetStat(StatId::stack_memo_checked), checked + 3);
  EXPECT_EQ(GetStat(StatId::stack_memo_disagreements), 0u);
  EXPECT_EQ(c.ids, std::vector<StackId>(4, c.ids[0]));
}

TEST(StackMemo, ANewSettingOrAnotherThreadStartsEmpty) {
  ASSERT_GE(WarmUpTables(), 0);
  // Twice through the same calls, each after (re)initializing: e.g. another depth, forget.
  MemoCaptures rounds[2];
  for (MemoCaptures& round : rounds) {
    InitStackCapture(Options(UnwindMode::kTable, false));
    round = RunMemoChain(4, ChainEntry::kPlain, 2, false, false);
  }
  for (const MemoCaptures& round : rounds) {
    EXPECT_EQ(round.hits, (std::vector<bool>{false, true}));
  }
  EXPECT_EQ(rounds[1].ids[0], rounds[0].ids[0]);
  MemoCaptures threaded;
  std::thread([&] {
    // The thread's start code may need its tables first (see DeepStacksAndOtherThreads).
    EXPECT_GE(CapturesUntilTablesAreReady(
                  [] { return RunMemoChain(4, ChainEntry::kPlain, 1, false, false).sources[0]; }),
              0);
    threaded = RunMemoChain(4, ChainEntry::kPlain, 2, false, false);
  }).join();
  EXPECT_EQ(threaded.hits, (std::vector<bool>{false, true}));
  // Off, every launch is unwound: the same stacks, from the tables each time.
  StackCaptureOptions off = Options(UnwindMode::kTable, false);
  off.memo = false;
  InitStackCapture(off);
  const MemoCaptures unmemoized = RunMemoChain(4, ChainEntry::kPlain, 3);
  EXPECT_EQ(unmemoized.hits, std::vector<bool>(3, false));
  EXPECT_EQ(unmemoized.sources, std::vector<StackSource>(3, StackSource::kTable));
  EXPECT_EQ(unmemoized.ids, std::vector<StackId>(3, unmemoized.reference_ids[0]));
}

}  // namespace
}  // namespace gpuperf::inject
