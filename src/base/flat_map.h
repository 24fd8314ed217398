// A hash map for the offline analyses' hot aggregations (GPU work per launch site, per
// flame graph key): a few thousand small plain keys looked up once per record of a
// trace of millions. Open addressing with linear probing in one array, so a lookup is a
// hash and a short scan of adjacent slots instead of std::map's ~14 comparisons down a
// tree or std::unordered_map's node chasing (each measured at 3x to 5x slower here).
//
// Entries are never erased and are kept in the order of their insertion (a vector, so a
// pointer to a value stays valid only until the next insertion). Up to 2^32 - 1 entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpuperf {

// One 64-bit word mixed into a running hash (multiply-xorshift): cheap, and spreads the
// small dense ids of trace keys over the table well enough for linear probing.
inline uint64_t MixHash(uint64_t hash, uint64_t word) {
  hash = (hash ^ word) * 0x9E3779B97F4A7C15ull;
  return hash ^ (hash >> 32);
}

// Hash: a functor from const Key& to size_t. Key needs ==; Key and Value need a
// default constructor.
template <class Key, class Value, class Hash>
class FlatMap {
 public:
  explicit FlatMap(size_t initial_slots = 1024) : slots_(RoundUp(initial_slots)) {}

  // The value of `key`, value-initialized when the key is new; `inserted` (when given)
  // says whether it was.
  Value& operator[](const Key& key) { return *Insert(key, nullptr); }
  Value* Insert(const Key& key, bool* inserted) {
    const uint64_t hash = Hash{}(key);
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == 0) {
        // At most half full, so that runs of used slots stay short.
        if (2 * (entries_.size() + 1) > slots_.size()) {
          Grow();
          return Insert(key, inserted);
        }
        entries_.emplace_back(key, Value{});
        slots_[i] = Slot(hash, entries_.size());
        if (inserted) *inserted = true;
        return &entries_.back().second;
      }
      if (SameHash(slot, hash) && entries_[Index(slot)].first == key) {
        if (inserted) *inserted = false;
        return &entries_[Index(slot)].second;
      }
    }
  }

  // The value of `key`, or nullptr when it was never inserted.
  const Value* Find(const Key& key) const {
    const uint64_t hash = Hash{}(key);
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const uint64_t slot = slots_[i];
      if (slot == 0) return nullptr;
      if (SameHash(slot, hash) && entries_[Index(slot)].first == key) {
        return &entries_[Index(slot)].second;
      }
    }
  }
  Value* Find(const Key& key) {
    return const_cast<Value*>(static_cast<const FlatMap&>(*this).Find(key));
  }

  // In the order of insertion.
  template <class Fn>
  void ForEach(Fn fn) const {
    for (const auto& [key, value] : entries_) fn(key, value);
  }
  template <class Fn>
  void ForEachMutable(Fn fn) {
    for (auto& [key, value] : entries_) fn(key, value);
  }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  // A slot is 0 when free, else the entry's index + 1 in its low 32 bits and the top of
  // its key's hash in the high 32: the probe compares keys only when those agree, and
  // the slots (8 bytes each) stay in the cache while the entries are elsewhere.
  static uint64_t Slot(uint64_t hash, size_t index_plus_one) {
    return (hash & 0xFFFFFFFF00000000ull) | index_plus_one;
  }
  static bool SameHash(uint64_t slot, uint64_t hash) { return ((slot ^ hash) >> 32) == 0; }
  static size_t Index(uint64_t slot) { return (slot & 0xFFFFFFFFu) - 1; }

  static size_t RoundUp(size_t n) {
    size_t size = 2;
    while (size < n) size *= 2;
    return size;
  }

  void Grow() {
    std::vector<uint64_t> slots(slots_.size() * 2, 0);
    const size_t mask = slots.size() - 1;
    for (size_t e = 0; e < entries_.size(); ++e) {
      const uint64_t hash = Hash{}(entries_[e].first);
      size_t i = hash & mask;
      while (slots[i] != 0) i = (i + 1) & mask;
      slots[i] = Slot(hash, e + 1);
    }
    slots_.swap(slots);
  }

  std::vector<uint64_t> slots_;
  std::vector<std::pair<Key, Value>> entries_;
};

}  // namespace gpuperf
