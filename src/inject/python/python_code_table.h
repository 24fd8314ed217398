// Interning of CPython code objects to small ids, with a copy of what names them.
//
// A frame is recorded as (code object, instruction offset), but the code object may be
// freed as soon as the frame returns, and its address reused by another (pytorch#121219
// held names without a reference and printed garbage). So on first sight the table copies
// into its own arena the qualified name, the file name, the first line and the raw line
// table; nothing it keeps points into Python's memory. An entry is keyed by what the code
// object holds at each look: its address, name object and first line, and an identity:
// co_version on 3.12+, a number a per-interpreter counter gives each code object as it is
// made, so a new code object at a reused address always gets an entry of its own (after
// 2^32 code objects the counter stays at 0, and the identity is then as before 3.12).
// 3.10 and 3.11 have no such number, and addresses alone say little there: CPython's allocator
// hands a freed block straight back, so code made after other code was freed (a
// regenerated function, an edited cell) gets the old code object's address, and its name,
// file name and line table objects get the old ones' (check_frames.py provokes it). Their
// identity is a fingerprint of what those three objects hold: each one's length and first
// and last 8 bytes, or for a str whose hash CPython has computed (interned names), its
// length and that hash. Only a name, file name or line table equal to the old one in
// length and in those 16 bytes but not between them could then keep the old text. (A str
// hashed after its code object was first seen changes the fingerprint once: that code
// object then gets a second id, with the same contents.)
//
// Finding a known code object is lock-free: the code object's address picks a slot of an
// open-addressing table whose slots hold the whole key and the id; a slot's address word
// is published last, with release order, so a reader that sees it sees the rest. Adding
// one takes a spinlock that is given up after a bounded wait (the code is then counted as
// not interned, never waited for). Capacity is fixed; memory comes from calloc (fresh
// zero pages: only what is touched costs memory).
//
// In front of it, each thread keeps a PyCodeCache: a small 4-way set-associative copy of
// the keys and ids it looked up last, so a launch whose frames were all seen before costs a few
// loads per frame from memory the thread alone touches (the shared table is megabytes,
// and its slots miss the CPU caches). A cache entry holds the whole key and is compared
// in full on every hit, exactly as the table compares it: the cache never answers for a
// code object the table would not.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cpython/python_lines.h"
#include "cpython/python_objects.h"
#include "cpython/python_runtime.h"
#include "inject/python/python_walk.h"

namespace gpuperf::inject {

struct PyCodeTableOptions {
  uint32_t max_codes = 1u << 16;
  uint64_t arena_bytes = 64ull << 20;  // names, file names and line tables
};

// The key of a code object: its address and what names it, read from it at each look.
// Trivial (no initializers), so a zero-filled thread_local PyCodeCache needs no constructor.
struct PyCodeKey {
  uint64_t code, name;
  int32_t first_line;
  uint32_t identity;  // co_version (3.12+), else the contents' fingerprint

  bool operator==(const PyCodeKey&) const = default;
};

// One thread's cache in front of a PyCodeTable (see above). Zero-initialized memory is an
// empty cache; it belongs to one table at a time (a look through another table empties it).
struct PyCodeCache {
  static constexpr int kSetBits = 7;
  static constexpr int kWays = 4;
  struct Entry {
    PyCodeKey key;  // code 0: empty
    uint32_t id;
  };
  uint64_t table_serial;  // PyCodeTable::serial() of the ids below; 0: none yet
  // Set s is entries[4s .. 4s + 3], the most recently added first: 512 entries, 16 KiB.
  Entry entries[kWays << kSetBits];
};

class PyCodeTable {
 public:
  explicit PyCodeTable(PyCodeTableOptions options = {});
  ~PyCodeTable();
  PyCodeTable(const PyCodeTable&) = delete;
  PyCodeTable& operator=(const PyCodeTable&) = delete;

  // The id (1-based) of the code object at `code`, which must be a live code object (the
  // walker checked its type), copying it on first sight. 0 when it could not be added
  // (table or arena full, or the insert lock stayed busy): counted in failed().
  uint32_t Intern(const PyRuntimeView& rt, uint64_t code);
  // ids[i] = Intern(rt, frames[i].code), looked up in `cache` (the calling thread's own)
  // first; returns how many ids were left at 0.
  int InternAll(const PyRuntimeView& rt, const PyFrameSample* frames, int n, uint32_t* ids,
                PyCodeCache& cache);

  // Appends the code objects added since the previous call, in id order. For one
  // consumer thread at a time (the writer thread); never blocks an Intern.
  void DrainNew(std::vector<PyCodeInfo>& out);
  // The next DrainNew starts again from the first code object (a new trace needs them all).
  void RewindDrain();

  uint32_t size() const { return count_.load(std::memory_order_acquire); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }
  // Names or file names that were not readable str objects (kept empty).
  uint64_t unreadable() const { return unreadable_.load(std::memory_order_relaxed); }
  // Looks that missed the thread caches (first sights included).
  uint64_t cache_misses() const { return cache_misses_.load(std::memory_order_relaxed); }
  // Unique to this table among all tables of the process (never 0).
  uint64_t serial() const { return serial_; }
  bool ok() const { return slots_ != nullptr; }

 private:
  using Key = PyCodeKey;
  // key.code is written last (release) and read first (acquire).
  struct Slot {
    Key key;
    uint32_t id;
  };
  // What DrainNew needs, by id.
  struct Entry {
    int32_t first_line = 0;
    uint64_t text = 0;  // arena offset: name, then file name, then line table
    uint32_t name_size = 0, filename_size = 0, line_table_size = 0;
    uint32_t code_units = 0;
    uint32_t first_traceable = 0;
    uint32_t python_version = 0;
    PyLineTableFormat line_format = PyLineTableFormat::kNone;
  };

  size_t FirstSlot(uint64_t code) const;
  // Inlined into the lookups: the key stays in registers.
  __attribute__((always_inline)) uint32_t Find(const Key& key, size_t* free_slot) const;
  uint32_t InternKey(const PyRuntimeView& rt, const Key& key);
  [[gnu::noinline]] uint32_t InternMiss(const PyRuntimeView& rt, uint64_t code,
                                        PyCodeCache::Entry* set);
  uint32_t Insert(const PyRuntimeView& rt, const Key& key);
  bool TryLock();
  void Unlock() { insert_lock_.store(false, std::memory_order_release); }

  PyCodeTableOptions options_;
  uint64_t serial_ = 0;
  size_t slot_mask_ = 0;
  int slot_shift_ = 64;  // 64 - log2(slot count)
  Slot* slots_ = nullptr;
  Entry* entries_ = nullptr;  // indexed by id, written before the slot is published
  char* arena_ = nullptr;

  std::atomic<bool> insert_lock_{false};  // guards arena_used_ and new entries
  uint64_t arena_used_ = 0;
  std::atomic<uint32_t> count_{0};  // ids 1..count_ are complete
  std::mutex drain_mutex_;          // consumers only
  uint32_t drained_ = 0;
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> unreadable_{0};
  std::atomic<uint64_t> cache_misses_{0};
};

}  // namespace gpuperf::inject
