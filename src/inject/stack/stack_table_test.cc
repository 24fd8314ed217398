#include "inject/stack/stack_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

namespace gpuperf {
namespace {

std::vector<uint64_t> MakeStack(uint32_t seed, int depth) {
  std::vector<uint64_t> pcs;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < depth; ++i) pcs.push_back(0x400000 + rng() % 0x100000);
  return pcs;
}

TEST(StackTable, SameStackSameIdDifferentStackDifferentId) {
  StackTable table({.max_stacks = 1024, .max_pcs = 1 << 16});
  ASSERT_TRUE(table.ok());
  std::vector<uint64_t> a = MakeStack(1, 30), b = MakeStack(2, 30);
  bool inserted = false;
  StackId id_a = table.Intern(a.data(), 30, &inserted);
  EXPECT_EQ(id_a, 1u);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(table.Intern(a.data(), 30, &inserted), id_a);
  EXPECT_FALSE(inserted);
  StackId id_b = table.Intern(b.data(), 30);
  EXPECT_EQ(id_b, 2u);
  // A prefix of a stack is a different stack.
  EXPECT_EQ(table.Intern(a.data(), 29), 3u);
  EXPECT_EQ(table.Intern(a.data(), 0), 0u);
  EXPECT_EQ(table.size(), 3u);
}

TEST(StackTable, CopyGivesBackTheInternedPcs) {
  StackTable table({.max_stacks = 16, .max_pcs = 1024});
  std::vector<uint64_t> a = MakeStack(3, 12), b = MakeStack(4, 5);
  StackId id_a = table.Intern(a.data(), 12), id_b = table.Intern(b.data(), 5);
  uint64_t out[16] = {};
  ASSERT_EQ(table.Copy(id_a, out, 16), 12);
  EXPECT_EQ(std::vector<uint64_t>(out, out + 12), a);
  ASSERT_EQ(table.Copy(id_b, out, 16), 5);
  EXPECT_EQ(std::vector<uint64_t>(out, out + 5), b);
  EXPECT_EQ(table.Copy(id_a, out, 4), 4);  // cut at max
  EXPECT_EQ(std::vector<uint64_t>(out, out + 4), std::vector<uint64_t>(a.begin(), a.begin() + 4));
  EXPECT_EQ(table.Copy(0, out, 16), 0);
  EXPECT_EQ(table.Copy(3, out, 16), 0);  // not interned
  // The same PCs in place.
  int depth = 0;
  const uint64_t* words = table.Words(id_b, &depth);
  ASSERT_NE(words, nullptr);
  EXPECT_EQ(std::vector<uint64_t>(words, words + depth), b);
  EXPECT_EQ(table.Words(0, &depth), nullptr);
  EXPECT_EQ(table.Words(3, &depth), nullptr);
}

TEST(StackTable, DrainReturnsEachNewStackOnceWithItsPcs) {
  StackTable table({.max_stacks = 64, .max_pcs = 4096});
  std::vector<uint64_t> a = MakeStack(1, 5), b = MakeStack(2, 7);
  table.Intern(a.data(), 5);
  std::vector<StackRecord> out;
  table.DrainNew(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, 1u);
  EXPECT_EQ(out[0].pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(out[0].pcs, a);
  table.Intern(a.data(), 5);
  table.Intern(b.data(), 7);
  out.clear();
  table.DrainNew(7, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, 2u);
  EXPECT_EQ(out[0].pid, 7u);
  EXPECT_EQ(out[0].pcs, b);
  out.clear();
  table.DrainNew(out);
  EXPECT_TRUE(out.empty());
}

TEST(StackTable, FullTableReturnsZeroAndCountsButKeepsServingKnownStacks) {
  StackTable by_count({.max_stacks = 2, .max_pcs = 1000});
  std::vector<uint64_t> a = MakeStack(1, 4), b = MakeStack(2, 4), c = MakeStack(3, 4);
  EXPECT_EQ(by_count.Intern(a.data(), 4), 1u);
  EXPECT_EQ(by_count.Intern(b.data(), 4), 2u);
  EXPECT_EQ(by_count.Intern(c.data(), 4), 0u);
  EXPECT_EQ(by_count.full_count(), 1u);
  EXPECT_EQ(by_count.Intern(a.data(), 4), 1u);

  StackTable by_pcs({.max_stacks = 100, .max_pcs = 10});
  EXPECT_EQ(by_pcs.Intern(a.data(), 4), 1u);
  EXPECT_EQ(by_pcs.Intern(b.data(), 4), 2u);
  EXPECT_EQ(by_pcs.Intern(c.data(), 4), 0u);  // 12 PCs > 10
  EXPECT_EQ(by_pcs.Intern(c.data(), 2), 3u);  // still fits
  EXPECT_EQ(by_pcs.full_count(), 1u);
}

TEST(StackTable, ManyStacksRoundTripThroughDrain) {
  StackTable table({.max_stacks = 20000, .max_pcs = 1 << 20});
  std::map<StackId, std::vector<uint64_t>> expected;
  for (uint32_t i = 0; i < 20000; ++i) {
    std::vector<uint64_t> pcs = MakeStack(i, 1 + i % 40);
    StackId id = table.Intern(pcs.data(), static_cast<int>(pcs.size()));
    ASSERT_NE(id, 0u);
    expected[id] = pcs;
  }
  EXPECT_EQ(expected.size(), 20000u);  // no two distinct stacks share an id
  std::vector<StackRecord> out;
  table.DrainNew(out);
  ASSERT_EQ(out.size(), 20000u);
  for (const StackRecord& r : out) EXPECT_EQ(r.pcs, expected[r.id]);
}

// Threads intern an overlapping set of stacks concurrently while a drainer collects new
// ones: every thread must agree on every stack's id, and the drain must see each id
// exactly once with the right PCs. Run under -fsanitize=thread to check the memory order.
TEST(StackTable, ConcurrentInternAndDrainAgree) {
  constexpr int kThreads = 8;
  constexpr uint32_t kStacks = 3000;
  StackTable table({.max_stacks = 1 << 14, .max_pcs = 1 << 20});
  std::vector<std::vector<uint64_t>> stacks;
  for (uint32_t i = 0; i < kStacks; ++i) stacks.push_back(MakeStack(i, 8 + i % 30));

  std::vector<std::vector<StackId>> ids(kThreads, std::vector<StackId>(kStacks));
  std::atomic<bool> done{false};
  std::vector<StackRecord> drained;
  std::thread drainer([&] {
    while (!done.load()) table.DrainNew(drained);
    table.DrainNew(drained);
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread walks the stacks in its own order, twice (insert, then look up).
      std::vector<uint32_t> order(kStacks);
      for (uint32_t i = 0; i < kStacks; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));
      for (int round = 0; round < 2; ++round) {
        for (uint32_t i : order) {
          StackId id = table.Intern(stacks[i].data(), static_cast<int>(stacks[i].size()));
          if (round == 0)
            ids[t][i] = id;
          else
            EXPECT_EQ(ids[t][i], id);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  done.store(true);
  drainer.join();

  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(ids[t], ids[0]) << "thread " << t;
  EXPECT_EQ(table.size(), kStacks);
  ASSERT_EQ(drained.size(), kStacks);
  std::set<StackId> seen;
  for (const StackRecord& r : drained) {
    EXPECT_TRUE(seen.insert(r.id).second);
    ASSERT_GE(r.id, 1u);
    ASSERT_LE(r.id, kStacks);
  }
  for (uint32_t i = 0; i < kStacks; ++i) EXPECT_EQ(drained[ids[0][i] - 1].pcs, stacks[i]);
}

}  // namespace
}  // namespace gpuperf
