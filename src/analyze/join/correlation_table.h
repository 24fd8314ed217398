// The one container for data kept per (process, correlation id): launch links in the
// Correlator, the timeline's per-launch slots, the report's per-launch GPU time.
//
// CUPTI numbers correlation ids densely from 1 in each process, so the values live in
// pages of 2^kPageBits consecutive ids, allocated on first use: no hashing and no node per
// id, four bytes per id for a four-byte T, and nothing for id ranges a process never used
// (a damaged or merged trace with ids spread over 2^32 costs a page per cluster). Pick
// kPageBits for pages of about 100-250 KiB: smaller ones interleave with the reader's
// transient buffers on the heap and raise peak memory (measured: +3 MiB on the 10 M
// kernel timeline export with 16 KiB pages).
//
// Entries are value-initialized (zero for plain structs); "never written" and "written as
// T{}" read the same, so a T that needs to tell them apart carries its own marker.
// Not thread-safe; const lookups do not touch the cache and may run alongside each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace gpuperf {

template <class T, uint32_t kPageBits = 12>
class CorrelationTable {
 public:
  static constexpr uint32_t kPageSize = 1u << kPageBits;

  // The entry of (pid, correlation id), made on first use of its page.
  T& At(uint32_t pid, uint32_t correlation_id) {
    const uint64_t key = PageKey(pid, correlation_id);
    if (key != last_key_ || last_page_ == nullptr) {
      std::unique_ptr<T[]>& page = pages_[key];
      if (!page) page = std::make_unique<T[]>(kPageSize);
      last_key_ = key;
      last_page_ = page.get();
    }
    return last_page_[correlation_id & (kPageSize - 1)];
  }

  // The entry, or nullptr when no id of its page was ever written.
  T* Find(uint32_t pid, uint32_t correlation_id) {
    const uint64_t key = PageKey(pid, correlation_id);
    if (key != last_key_ || last_page_ == nullptr) {
      auto it = pages_.find(key);
      if (it == pages_.end()) return nullptr;
      last_key_ = key;
      last_page_ = it->second.get();
    }
    return &last_page_[correlation_id & (kPageSize - 1)];
  }
  const T* Find(uint32_t pid, uint32_t correlation_id) const {
    const uint64_t key = PageKey(pid, correlation_id);
    if (key == last_key_ && last_page_ != nullptr) {
      return &last_page_[correlation_id & (kPageSize - 1)];
    }
    auto it = pages_.find(key);
    return it == pages_.end() ? nullptr : &it->second[correlation_id & (kPageSize - 1)];
  }

  // Memory held by the pages.
  size_t bytes() const { return pages_.size() * kPageSize * sizeof(T); }

 private:
  static uint64_t PageKey(uint32_t pid, uint32_t correlation_id) {
    return (static_cast<uint64_t>(pid) << 32) | (correlation_id >> kPageBits);
  }

  std::unordered_map<uint64_t, std::unique_ptr<T[]>> pages_;
  // The page used last: ids arrive mostly in runs, so most lookups skip the hash map.
  uint64_t last_key_ = 0;
  T* last_page_ = nullptr;
};

}  // namespace gpuperf
