#include "base/flat_map.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace gpuperf {
namespace {

struct Pair {
  uint32_t a = 0, b = 0;
  bool operator==(const Pair&) const = default;
};

// Every key in one of four buckets: lookups must walk past other keys' slots.
struct CollidingHash {
  size_t operator()(const Pair& p) const { return (p.a % 4) * 0x100000001ull; }
};

struct MixedHash {
  size_t operator()(const Pair& p) const { return MixHash(0, uint64_t{p.a} << 32 | p.b); }
};

template <class Hash>
void ExpectSameAsStdMap(size_t initial_slots) {
  FlatMap<Pair, uint64_t, Hash> flat(initial_slots);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> reference;
  for (uint32_t i = 0; i < 3000; ++i) {
    const Pair key{i * 7919 % 613, i % 5};
    bool inserted = false;
    *flat.Insert(key, &inserted) += i;
    EXPECT_EQ(inserted, !reference.contains({key.a, key.b}));
    reference[{key.a, key.b}] += i;
  }
  ASSERT_EQ(flat.size(), reference.size());
  for (const auto& [key, value] : reference) {
    const uint64_t* found = flat.Find(Pair{key.first, key.second});
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, value);
  }
  EXPECT_EQ(flat.Find(Pair{1000, 0}), nullptr);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> seen;
  flat.ForEach([&seen](const Pair& key, uint64_t value) { seen[{key.a, key.b}] = value; });
  EXPECT_EQ(seen, reference) << "iteration visits every entry once";
}

TEST(FlatMap, AgreesWithStdMapThroughGrowth) {
  ExpectSameAsStdMap<MixedHash>(2);
}

TEST(FlatMap, AgreesWithStdMapWhenEveryKeyCollides) {
  ExpectSameAsStdMap<CollidingHash>(16);
}

TEST(FlatMap, OperatorBracketValueInitializes) {
  FlatMap<Pair, uint64_t, MixedHash> flat;
  EXPECT_TRUE(flat.empty());
  const Pair key{1, 2};
  EXPECT_EQ(flat[key], 0u);
  flat[key] = 5;
  ++flat[key];
  EXPECT_EQ(flat[key], 6u);
  EXPECT_EQ(flat.size(), 1u);
}

}  // namespace
}  // namespace gpuperf
