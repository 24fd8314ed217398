// Interning of call stacks (of this process) to small StackIds, shared by all threads.
//
// A launch-heavy program repeats a few hundred distinct stacks millions of times, so the
// path that finds an existing stack is lock-free: a hash of the PCs picks a slot of an
// open-addressing table of atomic words (hash tag + id); the PCs are compared against an
// append-only arena. Inserting a new stack takes a mutex (rare after warm-up) and
// publishes the slot last, with release order, so a reader that sees the id also sees the
// PCs. Capacity is fixed at construction; memory is reserved with mmap(MAP_NORESERVE) and
// only the pages that are used cost memory. When full, Intern returns 0 and the caller
// counts stack_table_full.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf {

struct StackTableOptions {
  uint32_t max_stacks = 1u << 20;        // distinct stacks
  uint64_t max_pcs = (64ull << 20) / 8;  // PCs over all stacks: 64 MiB
};

class StackTable {
 public:
  explicit StackTable(StackTableOptions options = {});
  ~StackTable();
  StackTable(const StackTable&) = delete;
  StackTable& operator=(const StackTable&) = delete;

  // The id of this stack (PCs innermost first), adding it on first sight. Returns 0 for
  // an empty stack or when the table is full. `*inserted` (optional) tells whether this
  // call added the stack: the caller then checks its PCs against the module table.
  StackId Intern(const uint64_t* pcs, int depth, bool* inserted = nullptr);

  // Copies the PCs of stack `id` (an id this table returned) into out[0..max); returns
  // how many, 0 for an unknown id. Lock-free: the id's entry was published with it.
  int Copy(StackId id, uint64_t* out, int max) const;
  // The PCs of stack `id` where the table keeps them (valid for the table's life), and
  // their number in `*depth`; null for an unknown id. Lock-free, like Copy.
  const uint64_t* Words(StackId id, int* depth) const;

  // Appends, as records of process `pid`, the stacks added since the previous call, in id
  // order. For the writer thread; takes the insert mutex.
  void DrainNew(uint32_t pid, std::vector<StackRecord>& out);
  // Same, with pid = getpid().
  void DrainNew(std::vector<StackRecord>& out);
  // The next DrainNew starts again from the first stack (a new trace needs them all).
  void RewindDrain();

  // Stacks interned so far.
  uint32_t size() const;
  // Intern calls that failed because the table was full.
  uint64_t full_count() const;
  bool ok() const { return slots_ != nullptr; }  // false when memory could not be reserved

  // The 64-bit hash Intern uses (exposed for tests of collisions).
  static uint64_t Hash(const uint64_t* pcs, int depth);

 private:
  struct Entry {
    uint64_t offset;  // first PC in the arena
    uint32_t depth;
  };

  StackId Find(const uint64_t* pcs, int depth, uint64_t hash, size_t* free_slot) const;
  bool Matches(uint64_t slot_value, uint64_t hash, const uint64_t* pcs, int depth) const;

  StackTableOptions options_;
  size_t slot_mask_ = 0;
  uint64_t* slots_ = nullptr;  // (hash tag << 32 | id), 0 = empty; accessed via atomic_ref
  Entry* entries_ = nullptr;   // indexed by id; written before the slot is published
  uint64_t* arena_ = nullptr;  // PCs
  size_t slots_bytes_ = 0, entries_bytes_ = 0, arena_bytes_ = 0;

  std::mutex insert_mutex_;         // serializes inserts, drains and the writes above
  std::atomic<uint32_t> count_{0};  // ids 1..count_ are in use
  uint64_t arena_used_ = 0;
  uint32_t drained_ = 0;
  std::atomic<uint64_t> full_{0};
};

}  // namespace gpuperf
