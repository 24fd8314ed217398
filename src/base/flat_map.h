// A hash map for the offline analyses' hot aggregations (GPU work per launch site, per
// flame graph key): a few thousand small plain keys looked up once per record of a
// trace of millions. Open addressing with linear probing in one array, so a lookup is a
// hash and a short scan of adjacent slots instead of std::map's ~14 comparisons down a
// tree or std::unordered_map's node chasing (each measured at 3x to 5x slower here).
//
// Entries are never erased. Growing moves every entry: a pointer to a value stays valid
// only until the next insertion. Iteration follows the slots: callers that print sort.
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
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash{}(key)&mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        // At most half full, so that runs of used slots stay short.
        if (2 * (size_ + 1) > slots_.size()) {
          Grow();
          return Insert(key, inserted);
        }
        slot.used = true;
        slot.key = key;
        ++size_;
        if (inserted) *inserted = true;
        return &slot.value;
      }
      if (slot.key == key) {
        if (inserted) *inserted = false;
        return &slot.value;
      }
    }
  }

  // The value of `key`, or nullptr when it was never inserted.
  const Value* Find(const Key& key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = Hash{}(key)&mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }
  Value* Find(const Key& key) {
    return const_cast<Value*>(static_cast<const FlatMap&>(*this).Find(key));
  }

  // In the slots' order, which is neither the keys' nor the insertion order.
  template <class Fn>
  void ForEach(Fn fn) const {
    for (const Slot& slot : slots_) {
      if (slot.used) fn(slot.key, slot.value);
    }
  }
  template <class Fn>
  void ForEachMutable(Fn fn) {
    for (Slot& slot : slots_) {
      if (slot.used) fn(slot.key, slot.value);
    }
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  // Key and value in the slot: a lookup that finds its key mostly costs one cache miss
  // (keeping the entries apart, behind 8-byte slots, measured slower: two misses).
  struct Slot {
    Key key{};
    Value value{};
    bool used = false;
  };

  static size_t RoundUp(size_t n) {
    size_t size = 2;
    while (size < n) size *= 2;
    return size;
  }

  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    size_ = 0;
    for (Slot& slot : old) {
      if (slot.used) *Insert(slot.key, nullptr) = std::move(slot.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace gpuperf
