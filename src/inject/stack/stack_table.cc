#include "inject/stack/stack_table.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <new>

namespace gpuperf {
namespace {

// Zero-filled memory that costs nothing until touched.
void* Reserve(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void Release(void* p, size_t bytes) {
  if (p != nullptr) munmap(p, bytes);
}

uint64_t LoadSlot(const uint64_t& slot) {
  return std::atomic_ref<const uint64_t>(slot).load(std::memory_order_acquire);
}

}  // namespace

StackTable::StackTable(StackTableOptions options) : options_(options) {
  if (options_.max_stacks == 0 || options_.max_pcs == 0) return;
  // At most half full, so probes stay short and always end at an empty slot.
  size_t slot_count = 2;
  while (slot_count < 2 * static_cast<size_t>(options_.max_stacks)) slot_count *= 2;
  slots_bytes_ = slot_count * sizeof(uint64_t);
  entries_bytes_ = (static_cast<size_t>(options_.max_stacks) + 1) * sizeof(Entry);
  arena_bytes_ = options_.max_pcs * sizeof(uint64_t);
  slots_ = static_cast<uint64_t*>(Reserve(slots_bytes_));
  entries_ = static_cast<Entry*>(Reserve(entries_bytes_));
  arena_ = static_cast<uint64_t*>(Reserve(arena_bytes_));
  if (slots_ == nullptr || entries_ == nullptr || arena_ == nullptr) {
    Release(slots_, slots_bytes_);
    Release(entries_, entries_bytes_);
    Release(arena_, arena_bytes_);
    slots_ = nullptr;
    entries_ = nullptr;
    arena_ = nullptr;
    return;
  }
  slot_mask_ = slot_count - 1;
}

StackTable::~StackTable() {
  Release(slots_, slots_bytes_);
  Release(entries_, entries_bytes_);
  Release(arena_, arena_bytes_);
}

uint64_t StackTable::Hash(const uint64_t* pcs, int depth) {
  // Two independent lanes halve the multiply latency chain of a deep stack.
  uint64_t a = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(depth);
  uint64_t b = 0xc2b2ae3d27d4eb4full;
  int i = 0;
  for (; i + 1 < depth; i += 2) {
    a = (a ^ pcs[i]) * 0xff51afd7ed558ccdull;
    b = (b ^ pcs[i + 1]) * 0xc4ceb9fe1a85ec53ull;
    a ^= a >> 32;
    b ^= b >> 29;
  }
  if (i < depth) a = (a ^ pcs[i]) * 0xff51afd7ed558ccdull;
  uint64_t h = a ^ (b * 0x9e3779b97f4a7c15ull);
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

bool StackTable::Matches(uint64_t slot_value, uint64_t hash, const uint64_t* pcs, int depth) const {
  if ((slot_value >> 32) != (hash >> 32)) return false;
  const Entry& entry = entries_[static_cast<uint32_t>(slot_value)];
  return entry.depth == static_cast<uint32_t>(depth) &&
         std::memcmp(arena_ + entry.offset, pcs, sizeof(uint64_t) * entry.depth) == 0;
}

StackId StackTable::Find(const uint64_t* pcs, int depth, uint64_t hash, size_t* free_slot) const {
  for (size_t i = hash & slot_mask_;; i = (i + 1) & slot_mask_) {
    uint64_t value = LoadSlot(slots_[i]);
    if (value == 0) {
      if (free_slot != nullptr) *free_slot = i;
      return 0;
    }
    if (Matches(value, hash, pcs, depth)) return static_cast<StackId>(value);
  }
}

StackId StackTable::Intern(const uint64_t* pcs, int depth, bool* inserted) {
  if (inserted != nullptr) *inserted = false;
  if (depth <= 0 || slots_ == nullptr) return 0;
  uint64_t hash = Hash(pcs, depth);
  if (StackId id = Find(pcs, depth, hash, nullptr)) return id;

  std::lock_guard<std::mutex> lock(insert_mutex_);
  size_t free_slot = 0;
  // Another thread may have added the same stack since the lock-free look.
  if (StackId id = Find(pcs, depth, hash, &free_slot)) return id;
  uint32_t count = count_.load(std::memory_order_relaxed);
  if (count >= options_.max_stacks ||
      options_.max_pcs - arena_used_ < static_cast<uint64_t>(depth)) {
    full_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  StackId id = count + 1;
  std::memcpy(arena_ + arena_used_, pcs, sizeof(uint64_t) * static_cast<size_t>(depth));
  entries_[id] = Entry{arena_used_, static_cast<uint32_t>(depth)};
  arena_used_ += static_cast<uint64_t>(depth);
  count_.store(id, std::memory_order_relaxed);
  // Published last: a reader that loads this slot (acquire) sees the entry and the PCs.
  std::atomic_ref<uint64_t>(slots_[free_slot])
      .store((hash >> 32) << 32 | id, std::memory_order_release);
  if (inserted != nullptr) *inserted = true;
  return id;
}

int StackTable::Copy(StackId id, uint64_t* out, int max) const {
  int depth = 0;
  const uint64_t* words = Words(id, &depth);
  if (words == nullptr || max <= 0) return 0;
  if (depth > max) depth = max;
  std::memcpy(out, words, sizeof(uint64_t) * static_cast<size_t>(depth));
  return depth;
}

const uint64_t* StackTable::Words(StackId id, int* depth) const {
  if (id == 0 || id > count_.load(std::memory_order_acquire)) return nullptr;
  const Entry& entry = entries_[id];
  *depth = static_cast<int>(entry.depth);
  return arena_ + entry.offset;
}

void StackTable::DrainNew(uint32_t pid, std::vector<StackRecord>& out) {
  std::lock_guard<std::mutex> lock(insert_mutex_);
  uint32_t count = count_.load(std::memory_order_relaxed);
  try {
    while (drained_ < count) {
      StackId id = drained_ + 1;
      const Entry& entry = entries_[id];
      StackRecord record;
      record.pid = pid;
      record.id = id;
      record.pcs.assign(arena_ + entry.offset, arena_ + entry.offset + entry.depth);
      out.push_back(std::move(record));
      drained_ = id;
    }
  } catch (const std::bad_alloc&) {
    // The rest goes out with the next call.
  }
}

void StackTable::DrainNew(std::vector<StackRecord>& out) {
  DrainNew(static_cast<uint32_t>(getpid()), out);
}

void StackTable::RewindDrain() {
  std::lock_guard<std::mutex> lock(insert_mutex_);
  drained_ = 0;
}

uint32_t StackTable::size() const {
  return count_.load(std::memory_order_relaxed);
}

uint64_t StackTable::full_count() const {
  return full_.load(std::memory_order_relaxed);
}

}  // namespace gpuperf
