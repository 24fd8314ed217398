// The launch-stack memo's own checks (stack_memo.h), on this thread's real stack: a hit needs
// the same registers, the same Python frame words (all of them, not only those its set is
// chosen by, compared with the stack's own in the stack table) and an entry of the current
// epoch; a walk that was never committed is no hit; a thread whose lookups find less than
// they fill stops filling.
// The capture path's use of it, with real unwinding, is tests/unwind/stack_capture_unwind_test.cc
// (StackMemo.*) and, with CPython, tests/python/launch_stacks_test.sh.
#include "inject/stack/stack_memo.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "unwind/table_unwinder.h"

namespace gpuperf::inject {
namespace {

struct Probe {
  std::vector<uint64_t> python;
  // On a miss: walk, and keep the entry for a stack of a made-up native frame `commit` and
  // the Python words (0: walk only).
  uint64_t commit = 0;
  bool walk = true;  // false: only look (a walk takes an entry's place)
  StackId found = 0;
  StackId committed = 0;  // the id kept
  int walked = -1;
};

StackTable& Stacks() {
  static StackTable table({.max_stacks = 1u << 14, .max_pcs = 1u << 20});
  return table;
}

// Every probe runs from this one call site, so its registers are the same each time.
__attribute__((noinline)) void AtOnePlace(Probe* probe) {
  StackMemoKey key;
  gpuperf_caller_registers(&key.at);
  key.python = probe->python.data();
  key.python_depth = static_cast<int>(probe->python.size());
  probe->found = FindMemoizedStack(key, Stacks());
  if (probe->found == 0 && probe->walk) {
    uint64_t pcs[256];
    probe->walked = RecordMemoWalk(key, pcs, 256, nullptr);
    if (probe->walked > 0 && probe->commit != 0) {
      std::vector<uint64_t> stack = {0x1000 + probe->commit};
      stack.insert(stack.end(), probe->python.begin(), probe->python.end());
      probe->committed = Stacks().Intern(stack.data(), static_cast<int>(stack.size()));
      CommitMemoizedStack(probe->committed);
    }
  }
  asm volatile("" ::: "memory");  // no tail call
}

// The same, from a frame of another size: other registers.
__attribute__((noinline)) void FromElsewhere(Probe* probe) {
  volatile char room[64] = {};
  AtOnePlace(probe);
  asm volatile("" : : "r"(room) : "memory");
}

std::vector<Probe> RunProbes(std::vector<Probe> probes) {
  for (Probe& probe : probes) AtOnePlace(&probe);
  return probes;
}

TEST(StackMemo, AHitNeedsTheSameRegistersAndEveryPythonWord) {
  ASSERT_TRUE(InitTableUnwinder());
  InvalidateStackMemos();
  const std::vector<uint64_t> p1 = {0x8000000000000101ull, 0x8000000000000202ull};
  std::vector<uint64_t> p2 = p1;
  p2[1] ^= 4;  // the innermost word is the same: the same set, a different stack
  const std::vector<Probe> runs =
      RunProbes({{p1, 7}, {p1}, {p2}, {{p1[0]}}, {{}}, {p2, 8}, {p2}, {p1}});
  EXPECT_EQ(runs[0].found, 0u);
  ASSERT_GT(runs[0].walked, 0) << "the walk from here did not finish";
  ASSERT_NE(runs[0].committed, 0u);
  EXPECT_EQ(runs[1].found, runs[0].committed);
  EXPECT_EQ(runs[2].found, 0u) << "a different outer Python word was taken for the same stack";
  EXPECT_EQ(runs[3].found, 0u);
  EXPECT_EQ(runs[4].found, 0u);
  ASSERT_NE(runs[5].committed, 0u);
  EXPECT_EQ(runs[6].found, runs[5].committed);  // the set's other way
  EXPECT_EQ(runs[7].found, runs[0].committed);
  Probe elsewhere{p1};
  FromElsewhere(&elsewhere);
  EXPECT_EQ(elsewhere.found, 0u);
}

TEST(StackMemo, OnlyCommittedEntriesOfTheCurrentEpochAreHits) {
  ASSERT_TRUE(InitTableUnwinder());
  InvalidateStackMemos();
  const std::vector<uint64_t> p = {0x8000000000000303ull};
  std::vector<Probe> runs = RunProbes({{p, 0}, {p}});  // walked, never committed
  EXPECT_GT(runs[0].walked, 0);
  EXPECT_EQ(runs[1].found, 0u);
  runs = RunProbes({{p, 9}, {p}});
  EXPECT_EQ(runs[1].found, runs[0].committed);
  InvalidateStackMemos();
  runs = RunProbes({{p}});
  EXPECT_EQ(runs[0].found, 0u);
}

// Thousands of stacks: the ring of recorded words comes round (each walk from here records
// ~20 words) and entries are replaced. The newest two are still hits (a two-way set gives up
// its older way, so an entry goes only after two newer ones landed in its set: for any
// other recent entry that happens by chance, the sets being chosen by a hash of the stack
// pointer; "the last 20 all hit" failed 1 run in 192); an older entry is a hit with its own
// id or no hit, never another stack's id.
TEST(StackMemo, OldEntriesGoWhenTheirWordsAreWrittenOver) {
  ASSERT_TRUE(InitTableUnwinder());
  InvalidateStackMemos();
  constexpr int kStacks = 3000;
  // Fills, then looks, in one run: the same call into RunProbes (its return address is one
  // of the recorded words).
  std::vector<Probe> probes;
  for (int i = 0; i < kStacks; ++i) {
    std::vector<uint64_t> python(3, 0x8000000000000000ull | static_cast<uint64_t>(i));
    probes.push_back({python, static_cast<uint64_t>(1000 + i)});
  }
  for (int i = 0; i < kStacks; ++i) probes.push_back({probes[i].python, 0, false});
  probes = RunProbes(probes);
  ASSERT_GT(probes[0].walked, 0);
  const Probe* looks = probes.data() + kStacks;
  int hits = 0;
  for (int i = 0; i < kStacks; ++i) {
    if (looks[i].found == 0) continue;
    ++hits;
    EXPECT_EQ(looks[i].found, probes[i].committed) << i;
  }
  for (int i = kStacks - 2; i < kStacks; ++i) EXPECT_NE(looks[i].found, 0u) << i;
  EXPECT_LT(hits, kStacks / 2);  // most were written over (the sets hold 1,024)
}

// A thread whose stacks never repeat: after a window of 4,096 lookups that filled more
// than they found, the next window makes no entry (no second walk); then it tries again.
TEST(StackMemo, FillsPauseWhileLookupsFindLessThanTheyFill) {
  ASSERT_TRUE(InitTableUnwinder());
  std::vector<Probe> probes;
  auto distinct = [](int i) {
    return std::vector<uint64_t>{0x8000000000000000ull | (0x10000u + static_cast<uint64_t>(i))};
  };
  // A fresh thread's first lookup finds no memo (its first fill makes it), so the first
  // window is lookups 1..4096 of probes 1..4096; the next one ends at probe 8192.
  for (int i = 0; i <= 8192; ++i) {
    const bool look_only = i > 4096 && i < 8192;
    probes.push_back({distinct(i), look_only ? 0u : 1u, !look_only});
  }
  std::thread([&] { probes = RunProbes(probes); }).join();
  EXPECT_GT(probes[4095].walked, 0);
  EXPECT_EQ(probes[4096].walked, -1) << "a window that filled 4,096 and found none";
  EXPECT_GT(probes[8192].walked, 0) << "the next window filled nothing: fills resume";
}

// The Python words are compared where the stack table keeps them, whatever their number (up
// to the walker's 128 frames).
TEST(StackMemo, DeepPythonStacksAreMemoizedToo) {
  ASSERT_TRUE(InitTableUnwinder());
  std::vector<uint64_t> deep(128, 0x8000000000000404ull);
  std::vector<uint64_t> other = deep;
  other[127] ^= 8;  // the outermost frame differs
  std::vector<Probe> runs = {{deep, 10}, {deep}, {other}};
  std::thread([&] { runs = RunProbes(runs); }).join();  // a fresh memo, whatever ran before
  ASSERT_NE(runs[0].committed, 0u);
  EXPECT_EQ(runs[1].found, runs[0].committed);
  EXPECT_EQ(runs[2].found, 0u);
}

}  // namespace
}  // namespace gpuperf::inject
