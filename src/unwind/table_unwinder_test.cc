// The table walk on synthetic stacks (each rule kind, each way a walk stops, garbage that
// must never make it read outside the stack), and TableCaptureStack in this process
// against libunwind. The multi-library -fomit-frame-pointer check is
// tests/unwind/table_unwinder_multilib_test.cc.
#include "unwind/table_unwinder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "unwind/eh_frame_test_util.h"
#include "unwind/table_walk.h"
#include "unwind/unwinder.h"
#include "unwind/walk_dependencies.h"

namespace gpuperf {
namespace {

constexpr uint64_t kModule = 0x400000;
// Function A [0x000, 0x100): RSP-based, 32-byte frame, RBP saved at CFA-16 after 0x10.
// Function B [0x100, 0x200): RBP-based frame. C [0x200, 0x300): the thread's first frame.
// D [0x300, 0x310): a PLT. [0x310, 0x400): no FDE. E [0x400, 0x500): unexpressible.
// F [0x500, 0x600): a realigned frame, CFA = *(RBP-8), RBP saved at RBP+0.
ModuleUnwindTable SyntheticModule() {
  ModuleUnwindTable table;
  table.start = kModule;
  table.end = kModule + 0x1000;
  table.status = ModuleTableStatus::kOk;
  UnwindRule plt{11, 0, CfaKind::kPlt, RbpKind::kSame};
  table.row_starts = {0x000, 0x010, 0x100, 0x200, 0x300, 0x310, 0x400, 0x500, 0x600};
  table.rules = {{8, 0, CfaKind::kRsp, RbpKind::kSame},
                 {32, -16, CfaKind::kRsp, RbpKind::kSaved},
                 {16, -16, CfaKind::kRbp, RbpKind::kSaved},
                 {0, 0, CfaKind::kOutermost, RbpKind::kSame},
                 plt,
                 {},
                 {0, 0, CfaKind::kUnexpressible, RbpKind::kSame},
                 {-8, 0, CfaKind::kRbpDeref, RbpKind::kAtRbp}};
  table.row_rules = {0, 1, 2, 3, 4, 5, 6, 7, 5};
  table.bucket_shift = 8;  // one bucket per function
  table.buckets = {0, 2, 3, 4, 6, 7, 8};
  return table;
}

struct SyntheticStack {
  ModuleUnwindTable module = SyntheticModule();
  UnwindSnapshot snapshot;
  std::vector<uint8_t> zeros = std::vector<uint8_t>(64 * 8, 0);
  testing_util::GuardedBytes memory{zeros};
  uint64_t* words = reinterpret_cast<uint64_t*>(memory.data());

  SyntheticStack() { snapshot.modules = {{module.start, module.end, &module}}; }
  uint64_t At(int index) const { return reinterpret_cast<uint64_t>(words + index); }
  StackRange Range() const { return {At(0), At(64)}; }
  TableWalkResult Walk(FrameRegisters start, uint64_t* pcs, int max_depth = 16) const {
    return WalkWithTables(snapshot, start, Range(), pcs, max_depth);
  }
};

TEST(WalkWithTables, FollowsRspAndRbpRulesToTheOutermostFrame) {
  SyntheticStack s;
  // A's frame at words[0..4): RBP saved at CFA-16 (words[2]), return into B at words[3].
  s.words[2] = s.At(10);         // B's RBP
  s.words[3] = kModule + 0x150;  // into B
  // B's frame: CFA = RBP+16 = words[12]; return into C at words[11]; its RBP at words[10].
  s.words[10] = 0x1234;
  s.words[11] = kModule + 0x250;  // into C: outermost
  uint64_t pcs[16];
  const TableWalkResult r = s.Walk({kModule + 0x20, s.At(0), 0xdead}, pcs);
  EXPECT_EQ(r.stop, TableWalkStop::kOutermost);
  ASSERT_EQ(r.depth, 3);
  EXPECT_EQ(pcs[0], kModule + 0x20);
  EXPECT_EQ(pcs[1], kModule + 0x150);
  EXPECT_EQ(pcs[2], kModule + 0x250);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.at_stop.rsp, s.At(12));
  EXPECT_EQ(r.at_stop.rbp, 0x1234u);
  // Cut at the depth asked for.
  EXPECT_EQ(s.Walk({kModule + 0x20, s.At(0), 0xdead}, pcs, 2).stop, TableWalkStop::kMaxDepth);
}

// What the walk tells an observer (the stack memo's recorder, stack_memo.h): every word it
// read, in order, which of them became RBP, and when a rule used the RBP it had.
struct LoggingObserver {
  std::vector<std::string> events;
  uint64_t base = 0;
  void Loaded(uint64_t address, uint64_t value, bool rbp) {
    events.push_back((rbp ? "rbp@" : "word@") + std::to_string((address - base) / 8) + "=" +
                     std::to_string(value & 0xfff));
  }
  void UsedRbp() { events.push_back("used rbp"); }
};

TEST(WalkWithTables, TellsAnObserverWhatItReadAndWhenItUsedRbp) {
  SyntheticStack s;
  s.words[2] = s.At(10);         // A saved B's RBP
  s.words[3] = kModule + 0x150;  // into B, whose CFA is RBP+16
  s.words[10] = 0x1234;
  s.words[11] = kModule + 0x250;  // into C: outermost
  uint64_t pcs[16];
  LoggingObserver observer;
  observer.base = s.At(0);
  const TableWalkResult r =
      WalkStackWithTables<false>(RuntimeRules{s.snapshot}, {kModule + 0x20, s.At(0), 0xdead},
                                 s.Range(), InPlaceStack(), pcs, 16, nullptr, {}, &observer);
  EXPECT_EQ(r.depth, 3);
  const uint64_t at10 = s.At(10) & 0xfff;
  EXPECT_EQ(observer.events,
            (std::vector<std::string>{"rbp@2=" + std::to_string(at10), "word@3=336", "used rbp",
                                      "rbp@10=564", "word@11=592"}));
  // A realigned frame: its CFA slot is read through RBP, then RBP at RBP+0.
  SyntheticStack realigned;
  realigned.words[6] = 0x5678;
  realigned.words[5] = realigned.At(20);
  realigned.words[19] = kModule + 0x250;
  LoggingObserver observer2;
  observer2.base = realigned.At(0);
  WalkStackWithTables<false>(RuntimeRules{realigned.snapshot},
                             {kModule + 0x520, realigned.At(0), realigned.At(6)}, realigned.Range(),
                             InPlaceStack(), pcs, 16, nullptr, {}, &observer2);
  const uint64_t at20 = realigned.At(20) & 0xfff;
  EXPECT_EQ(observer2.events,
            (std::vector<std::string>{"used rbp", "word@5=" + std::to_string(at20), "used rbp",
                                      "rbp@6=" + std::to_string(0x678), "word@19=592"}));
}

// The memo's premise (walk_dependencies.h), on random stacks over the synthetic module:
// whatever the words the walk did not need hold (unread words, saved RBPs no later frame
// used, the starting RBP unless used), the walk gives the same PCs and stops the same way.
TEST(WalkWithTables, OnlyTheWordsItSaysItNeededDecideTheWalk) {
  SyntheticStack s;
  std::mt19937_64 random(20261127);
  // Return addresses into A (before and after its RBP save), B, C, the PLT at both of its
  // rules, F, a gap without FDE, E, and past the module.
  const uint64_t returns[] = {0x05,  0x20,  0x90,  0x150, 0x1f0, 0x250,
                              0x305, 0x30d, 0x520, 0x350, 0x450, 0x2000};
  auto word = [&] {
    switch (random() % 8) {
      case 0:
      case 1:
      case 2:
      case 3:
        return kModule + returns[random() % std::size(returns)];
      case 4:
      case 5:
      case 6:
        return s.At(static_cast<int>(random() % 64));
      default:
        return static_cast<uint64_t>(random());
    }
  };
  int frames = 0, deep = 0, unneeded_rbps = 0;
  for (int round = 0; round < 20000; ++round) {
    for (int i = 0; i < 64; ++i) s.words[i] = word();
    const FrameRegisters start{kModule + returns[random() % 9],
                               s.At(static_cast<int>(random() % 8)), word()};
    WalkDependencies<64> needs;
    uint64_t pcs[16], again[16];
    const TableWalkResult first = WalkStackWithTables<false>(
        RuntimeRules{s.snapshot}, start, s.Range(), InPlaceStack(), pcs, 16, nullptr, {}, &needs);
    ASSERT_FALSE(needs.overflow);
    bool needed[64] = {};
    for (int i = 0; i < needs.count; ++i) {
      if (needs.reads[i].needed) needed[(needs.reads[i].address - s.At(0)) / 8] = true;
      unneeded_rbps += needs.reads[i].needed ? 0 : 1;
    }
    for (int i = 0; i < 64; ++i) {
      if (!needed[i]) s.words[i] = word();
    }
    FrameRegisters changed = start;
    if (!needs.start_rbp_used) changed.rbp = word();
    const TableWalkResult second = s.Walk(changed, again);
    ASSERT_EQ(second.depth, first.depth) << "round " << round;
    ASSERT_EQ(second.stop, first.stop) << "round " << round;
    for (int i = 0; i < first.depth; ++i) ASSERT_EQ(again[i], pcs[i]) << "round " << round;
    frames += first.depth;
    deep += first.depth >= 4 ? 1 : 0;
  }
  // The random stacks went somewhere: many frames, walks of 4 frames and more, and saved
  // RBPs that did not matter.
  EXPECT_GT(frames, 30000);
  EXPECT_GT(deep, 500);
  EXPECT_GT(unneeded_rbps, 1000);
  std::printf("%d frames, %d walks of 4 or more, %d saved RBPs not needed\n", frames, deep,
              unneeded_rbps);
}

TEST(WalkWithTables, StopsAfterTheFirstFrameInTheRangeAskedFor) {
  SyntheticStack s;
  s.words[2] = s.At(10);
  s.words[3] = kModule + 0x150;  // into B
  s.words[10] = 0x1234;
  s.words[11] = kModule + 0x250;  // into C
  uint64_t pcs[16];
  const FrameRegisters start{kModule + 0x20, s.At(0), 0xdead};
  // B's code: the walk ends, complete, with B's frame, and reads nothing of its caller.
  TableWalkResult r = WalkWithTables(s.snapshot, start, s.Range(), pcs, 16, nullptr,
                                     CodeRange{kModule + 0x100, kModule + 0x200});
  EXPECT_EQ(r.stop, TableWalkStop::kStopFrame);
  EXPECT_TRUE(r.complete());
  ASSERT_EQ(r.depth, 2);
  EXPECT_EQ(pcs[1], kModule + 0x150);
  EXPECT_EQ(r.at_stop.rsp, s.At(4));  // B's registers: its rule was never applied
  // A return address just past the range belongs to a call at its last byte: inside.
  s.words[3] = kModule + 0x200;
  r = WalkWithTables(s.snapshot, start, s.Range(), pcs, 16, nullptr,
                     CodeRange{kModule + 0x100, kModule + 0x200});
  EXPECT_EQ(r.stop, TableWalkStop::kStopFrame);
  EXPECT_EQ(r.depth, 2);
  // A range no frame is in, or an empty one, changes nothing.
  s.words[3] = kModule + 0x150;
  for (CodeRange range : {CodeRange{kModule + 0x700, kModule + 0x800}, CodeRange{}}) {
    r = WalkWithTables(s.snapshot, start, s.Range(), pcs, 16, nullptr, range);
    EXPECT_EQ(r.stop, TableWalkStop::kOutermost);
    EXPECT_EQ(r.depth, 3);
  }
}

TEST(WalkWithTables, LooksUpTheInstructionBeforeTheReturnAddress) {
  SyntheticStack s;
  // 0x10 is where A's frame grows, but a return address of 0x10 belongs to the call that
  // ends at 0x0f: the CFA is still RSP+8.
  s.words[0] = 0;  // return address 0: the end
  uint64_t pcs[16];
  const TableWalkResult r = s.Walk({kModule + 0x10, s.At(0), 0}, pcs);
  EXPECT_EQ(r.stop, TableWalkStop::kOutermost);
  EXPECT_EQ(r.depth, 1);
  EXPECT_EQ(r.at_stop.rsp, s.At(1));
}

TEST(WalkWithTables, EvaluatesThePltRule) {
  SyntheticStack s;
  s.words[0] = kModule + 0x250;  // RSP+8 while (RIP & 15) < 11
  s.words[1] = kModule + 0x250;  // RSP+16 from there on
  uint64_t pcs[16];
  EXPECT_EQ(s.Walk({kModule + 0x305, s.At(0), 0}, pcs).at_stop.rsp, s.At(1));
  EXPECT_EQ(s.Walk({kModule + 0x30d, s.At(0), 0}, pcs).at_stop.rsp, s.At(2));
}

TEST(WalkWithTables, ReadsTheCfaOfARealignedFrameFromItsSlot) {
  SyntheticStack s;
  // F's frame record at words[6] (RBP): the caller's RBP there, the CFA in the slot below
  // (words[5]), the return address into C (outermost) right under the CFA.
  s.words[6] = 0x5678;
  s.words[5] = s.At(20);
  s.words[19] = kModule + 0x250;
  uint64_t pcs[16];
  TableWalkResult r = s.Walk({kModule + 0x520, s.At(0), s.At(6)}, pcs);
  EXPECT_EQ(r.stop, TableWalkStop::kOutermost) << TableWalkStopName(r.stop);
  ASSERT_EQ(r.depth, 2);
  EXPECT_EQ(pcs[1], kModule + 0x250);
  EXPECT_EQ(r.at_stop.rsp, s.At(20));
  EXPECT_EQ(r.at_stop.rbp, 0x5678u);
  // The slot below RSP, or past the top of the stack: never read.
  for (uint64_t rbp : {s.At(0), s.At(64), uint64_t{7}}) {
    r = s.Walk({kModule + 0x520, s.At(2), rbp}, pcs);
    EXPECT_EQ(r.stop, TableWalkStop::kBadFrame) << rbp;
  }
  // A slot that holds garbage: a CFA below the frame or outside the stack.
  for (uint64_t cfa : {s.At(1), s.At(70), uint64_t{0}}) {
    s.words[5] = cfa;
    r = s.Walk({kModule + 0x520, s.At(2), s.At(6)}, pcs);
    EXPECT_EQ(r.stop, TableWalkStop::kBadFrame) << cfa;
  }
}

TEST(WalkWithTables, SaysWhyItStopped) {
  SyntheticStack s;
  uint64_t pcs[16];
  struct Case {
    uint64_t rip;
    TableWalkStop stop;
  };
  const Case cases[] = {
      {kModule + 0x320, TableWalkStop::kNoRow},           // no FDE
      {kModule + 0x420, TableWalkStop::kUnexpressible},   // libunwind's
      {kModule + 0x2000, TableWalkStop::kUnknownModule},  // loaded after the tables were built
  };
  for (const Case& test : cases) {
    const TableWalkResult r = s.Walk({test.rip, s.At(0), 0}, pcs);
    EXPECT_EQ(r.stop, test.stop) << TableWalkStopName(r.stop);
    EXPECT_EQ(r.depth, 1);  // the frame it could not unwind is written
    EXPECT_EQ(pcs[0], test.rip);
    EXPECT_FALSE(r.complete());
  }
  ModuleUnwindTable without = SyntheticModule();
  without.status = ModuleTableStatus::kNoEhFrame;
  UnwindSnapshot snapshot;
  snapshot.modules = {{without.start, without.end, &without}};
  EXPECT_EQ(WalkWithTables(snapshot, {kModule + 0x20, s.At(0), 0}, s.Range(), pcs, 16).stop,
            TableWalkStop::kNoEhFrame);
  without.status = ModuleTableStatus::kPending;  // listed, not compiled yet
  EXPECT_EQ(WalkWithTables(snapshot, {kModule + 0x20, s.At(0), 0}, s.Range(), pcs, 16).stop,
            TableWalkStop::kPending);
}

TEST(WalkWithTables, NeverLeavesTheStack) {
  SyntheticStack s;
  uint64_t pcs[16];
  // RSP outside the stack (another stack: a coroutine, a signal stack).
  TableWalkResult r = s.Walk({kModule + 0x20, s.At(64), 0}, pcs);
  EXPECT_EQ(r.stop, TableWalkStop::kBadFrame);
  EXPECT_EQ(r.depth, 0);
  // A CFA past the top: A's 32-byte frame starting 3 words below the top.
  r = s.Walk({kModule + 0x20, s.At(61), 0}, pcs);
  EXPECT_EQ(r.stop, TableWalkStop::kBadFrame);
  // An RBP-based CFA below RSP (garbage RBP) and far above.
  for (uint64_t rbp : {s.At(0), s.At(200), uint64_t{0}, ~uint64_t{0} - 8}) {
    r = s.Walk({kModule + 0x150, s.At(4), rbp}, pcs);
    EXPECT_EQ(r.stop, TableWalkStop::kBadFrame) << rbp;
  }
}

// Fills the stack with words that point into the module's functions, into the stack (and
// a little past it) or anywhere, at random, and returns registers to start a walk from.
FrameRegisters FillAtRandom(SyntheticStack& s, std::mt19937_64& random) {
  for (int i = 0; i < 64; ++i) {
    switch (random() % 3) {
      case 0:
        s.words[i] = kModule + random() % 0x600;
        break;
      case 1:
        s.words[i] = s.At(static_cast<int>(random() % 70));
        break;
      default:
        s.words[i] = random();
        break;
    }
  }
  return {kModule + random() % 0x600, s.At(static_cast<int>(random() % 64)),
          s.At(static_cast<int>(random() % 64))};
}

TEST(WalkWithTables, GarbageStacksEndWithoutAFault) {
  // Words that point into the module's functions and into the stack, at random: the walk
  // must end (any reason) after reading only inside the stack, which ends at a guard page.
  SyntheticStack s;
  std::mt19937_64 random(99);
  uint64_t pcs[64];
  for (int round = 0; round < 20000; ++round) {
    const FrameRegisters start = FillAtRandom(s, random);
    const TableWalkResult r = s.Walk(start, pcs, 64);
    ASSERT_LE(r.depth, 64);
    ASSERT_GE(r.depth, 1);
  }
}

// The stack's words copied elsewhere, at the end of a mapping (a guard page after it), read
// by the walk as if they were at the original addresses: what the CPU profiler's recorder
// does with the copies its BPF program takes.
struct StackCopy {
  testing_util::GuardedBytes bytes;
  CopiedStack reader;
  explicit StackCopy(const SyntheticStack& s, size_t words = 64, bool more_above = false)
      : bytes(reinterpret_cast<const uint8_t*>(s.words), words * 8) {
    reader.bytes = bytes.data();
    reader.base = s.At(0);
    reader.more_above = more_above;
  }
  template <bool kFirstInterrupted = false>
  TableWalkResult Walk(const SyntheticStack& s, FrameRegisters start, uint64_t* pcs,
                       int max_depth = 16, size_t words = 64) const {
    return WalkStackWithTables<kFirstInterrupted>(RuntimeRules{s.snapshot}, start,
                                                  {s.At(0), s.At(static_cast<int>(words))}, reader,
                                                  pcs, max_depth, nullptr);
  }
};

void ExpectSameWalk(const TableWalkResult& a, const uint64_t* a_pcs, const TableWalkResult& b,
                    const uint64_t* b_pcs) {
  ASSERT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.stop, b.stop);
  EXPECT_EQ(a.at_stop.rip, b.at_stop.rip);
  EXPECT_EQ(a.at_stop.rsp, b.at_stop.rsp);
  EXPECT_EQ(a.at_stop.rbp, b.at_stop.rbp);
  for (int i = 0; i < a.depth; ++i) EXPECT_EQ(a_pcs[i], b_pcs[i]) << i;
}

TEST(WalkStackWithTables, ACopyElsewhereUnwindsAsTheStackInPlace) {
  SyntheticStack s;
  s.words[2] = s.At(10);
  s.words[3] = kModule + 0x150;
  s.words[10] = 0x1234;
  s.words[11] = kModule + 0x250;
  const StackCopy copy(s);
  ASSERT_NE(reinterpret_cast<uint64_t>(copy.reader.bytes), s.At(0));
  uint64_t in_place[16], copied[16];
  const TableWalkResult a = s.Walk({kModule + 0x20, s.At(0), 0xdead}, in_place);
  const TableWalkResult b = copy.Walk(s, {kModule + 0x20, s.At(0), 0xdead}, copied);
  EXPECT_EQ(b.stop, TableWalkStop::kOutermost);
  EXPECT_EQ(b.depth, 3);
  ExpectSameWalk(a, in_place, b, copied);
  // The original's words changed after the copy: the copy's walk does not see them.
  s.words[3] = kModule + 0x320;
  EXPECT_EQ(copy.Walk(s, {kModule + 0x20, s.At(0), 0xdead}, copied).stop,
            TableWalkStop::kOutermost);
}

TEST(WalkStackWithTables, RandomStacksWalkTheSameInACopy) {
  // Garbage and half-sensible stacks alike: the copy's walk gives the in-place walk's PCs,
  // stop and registers, and reads nothing past the copy's end (a guard page follows it).
  SyntheticStack s;
  std::mt19937_64 random(7);
  uint64_t in_place[64], copied[64];
  for (int round = 0; round < 5000; ++round) {
    const FrameRegisters start = FillAtRandom(s, random);
    const StackCopy copy(s);
    const TableWalkResult a = s.Walk(start, in_place, 64);
    const TableWalkResult b = copy.Walk(s, start, copied, 64);
    ExpectSameWalk(a, in_place, b, copied);
    if (testing::Test::HasFailure()) return;
  }
}

TEST(WalkStackWithTables, LooksUpAnInterruptedInstructionItself) {
  SyntheticStack s;
  // Interrupted at B's first instruction (0x100): B's rule (CFA = RBP+16), not the rule of
  // the instruction before it (A's, CFA = RSP+32), which a return address there would get.
  s.words[10] = 0x1234;
  s.words[11] = kModule + 0x250;  // into C: outermost
  s.words[3] = kModule + 0x250;
  const StackCopy copy(s);
  uint64_t pcs[16];
  TableWalkResult r = copy.Walk<true>(s, {kModule + 0x100, s.At(0), s.At(10)}, pcs);
  EXPECT_EQ(r.stop, TableWalkStop::kOutermost) << TableWalkStopName(r.stop);
  ASSERT_EQ(r.depth, 2);
  EXPECT_EQ(r.at_stop.rsp, s.At(12));  // through B's frame
  r = copy.Walk<false>(s, {kModule + 0x100, s.At(0), s.At(10)}, pcs);
  ASSERT_EQ(r.depth, 2);
  EXPECT_EQ(r.at_stop.rsp, s.At(4));  // through A's 32-byte frame
}

TEST(WalkStackWithTables, ACopyCutShortEndsAtItsEnd) {
  SyntheticStack s;
  s.words[2] = s.At(10);
  s.words[3] = kModule + 0x150;
  s.words[11] = kModule + 0x250;
  uint64_t pcs[16];
  // Only the first 8 words copied: B's frame (CFA words[12]) lies beyond.
  const StackCopy cut(s, 8, /*more_above=*/true);
  TableWalkResult r = cut.Walk(s, {kModule + 0x20, s.At(0), 0}, pcs, 16, 8);
  EXPECT_EQ(r.stop, TableWalkStop::kEndOfCopy) << TableWalkStopName(r.stop);
  EXPECT_EQ(r.depth, 2);
  EXPECT_EQ(pcs[1], kModule + 0x150);
  // The same where the stack itself ended there: the frame is wrong.
  const StackCopy ended(s, 8, /*more_above=*/false);
  r = ended.Walk(s, {kModule + 0x20, s.At(0), 0}, pcs, 16, 8);
  EXPECT_EQ(r.stop, TableWalkStop::kBadFrame) << TableWalkStopName(r.stop);
}

volatile int g_sink = 0;

__attribute__((noinline)) UnwindComparison Nested(int levels) {
  if (levels == 0) return CompareWithLibunwind(kMaxCapturedFrames);
  UnwindComparison c = Nested(levels - 1);
  g_sink = g_sink + 1;
  return c;
}

TEST(TableCaptureStack, MatchesLibunwindInThisProcess) {
  if (InitUnwinder() != UnwinderKind::kLibunwind) GTEST_SKIP() << "no libunwind here";
  ASSERT_TRUE(InitTableUnwinder());
  const UnwindComparison c = Nested(5);
  EXPECT_TRUE(c.agrees()) << "first mismatch at " << c.first_mismatch << ", stop "
                          << TableWalkStopName(c.table.stop);
  EXPECT_EQ(c.table.stop, TableWalkStop::kOutermost);
  EXPECT_GT(c.compared, 8);
}

__attribute__((noinline)) int CaptureNested(int levels, uint64_t* pcs, TableWalkResult* result,
                                            const CodeRange* stop_after) {
  if (levels == 0) return TableCaptureStack(pcs, 32, result, stop_after);
  const int depth = CaptureNested(levels - 1, pcs, result, stop_after);
  g_sink = g_sink + 1;
  return depth;
}

// One call site for both captures of the test below, so that their stacks are the same.
__attribute__((noinline)) int CaptureFromOneSite(uint64_t* pcs, TableWalkResult* result,
                                                 const CodeRange* stop_after) {
  const int depth = CaptureNested(3, pcs, result, stop_after);
  g_sink = g_sink + 1;
  return depth;
}

TEST(TableCaptureStack, StopsAfterTheFrameAskedFor) {
  ASSERT_TRUE(InitTableUnwinder());
  uint64_t pcs[2][32];
  TableWalkResult result[2];
  int depth[2] = {0, 0};
  CodeRange range;
  int cut_at = -1;
  // Both captures from one call instruction, so that their stacks are the same.
  for (int pass = 0; pass < 2; ++pass) {
    depth[pass] = CaptureFromOneSite(pcs[pass], &result[pass], pass == 0 ? nullptr : &range);
    if (pass > 0) break;
    ASSERT_TRUE(result[0].complete());
    // The first return address that appears once, past the recursion: the walk, given its
    // call instruction through the assembly entry's stack argument, must end right after it.
    for (int i = 3; i < depth[0] && cut_at < 0; ++i) {
      if (std::count(pcs[0], pcs[0] + depth[0], pcs[0][i]) == 1) cut_at = i;
    }
    ASSERT_GE(cut_at, 0);
    ASSERT_LT(cut_at + 1, depth[0]);
    range = {pcs[0][cut_at] - 1, pcs[0][cut_at]};
  }
  EXPECT_EQ(result[1].stop, TableWalkStop::kStopFrame);
  EXPECT_TRUE(result[1].complete());
  ASSERT_EQ(depth[1], cut_at + 1);
  for (int i = 0; i <= cut_at; ++i) EXPECT_EQ(pcs[1][i], pcs[0][i]) << i;
}

TEST(TableCaptureStack, StartsAtTheCallersReturnAddress) {
  ASSERT_TRUE(InitTableUnwinder());
  uint64_t pcs[8];
  TableWalkResult result;
  const int depth = TableCaptureStack(pcs, 8, &result);
  ASSERT_GE(depth, 1);
  // pcs[0] returns into this test body: it lies in the same module as the test function.
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  EXPECT_EQ(snapshot->Find(pcs[0]), snapshot->Find(reinterpret_cast<uint64_t>(&Nested)));
  EXPECT_EQ(TableCaptureStack(pcs, 0, &result), 0);
}

}  // namespace
}  // namespace gpuperf
