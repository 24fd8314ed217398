#include "inject/python/python_code_table.h"

#include <sched.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cpython/python_objects.h"

namespace gpuperf::inject {
namespace {

uint64_t LoadAcquire(const uint64_t& word) {
  return std::atomic_ref<const uint64_t>(word).load(std::memory_order_acquire);
}

// An insert that finds the lock taken spins a little, then yields (the holder may have
// been preempted: on a small machine it needs our core), and gives up after a bounded
// number of rounds: about a millisecond, once per code object, in the worst case.
constexpr int kLockSpinsBeforeYield = 1 << 10;
constexpr int kMaxLockYields = 64;

std::atomic<uint64_t> g_next_table_serial{1};

// Where the key's fields are in a code object, copied out of the layout once per call (in
// locals, the stores to ids[] cannot alias them and force reloads).
struct KeyOffsets {
  int32_t name, first_line, version;
  const PyLayout* layout;  // for the fingerprint (no co_version)
};

KeyOffsets KeyOffsetsOf(const PyLayout& l) {
  return {l.code_qualname >= 0 ? l.code_qualname : l.code_name, l.code_first_line, l.code_version,
          &l};
}

// `size` bytes at `data` in one word: the length and the first and last 8 bytes. Objects'
// blocks always have 8 readable bytes past the header (CPython allocates in 16-byte steps
// and ends str and bytes with a NUL), so a short value is read whole and masked.
uint64_t FoldContents(uint64_t data, uint64_t size) {
  uint64_t head = PyLoad<uint64_t>(data, 0), tail = 0;
  if (size < 8) {
    head &= (uint64_t{1} << (8 * size)) - 1;
  } else {
    tail = PyLoad<uint64_t>(data + size - 8, 0);
  }
  return (size * 0x9e3779b97f4a7c15ull) ^ head ^ std::rotl(tail, 29);
}

// A str object's characters, folded: its cached hash when CPython computed it (names are
// interned, and interning hashes), which is in the header the length is in; else its
// characters. Lengths are bounded, so that memory that is not what we think is never read
// far.
uint64_t FoldString(const PyLayout& l, uint64_t str) {
  const int64_t hash = PyLoad<int64_t>(str, l.unicode_hash);
  if (hash != -1) return (PyLoad<uint64_t>(str, l.unicode_length) * 0x9e3779b97f4a7c15ull) ^ hash;
  const uint32_t state = PyLoad<uint32_t>(str, l.unicode_state);
  const uint64_t kind = (state >> 2) & 7;  // bytes per character
  const uint64_t data = str + ((state >> 6) & 1 ? l.unicode_ascii_data : l.unicode_compact_data);
  uint64_t length = PyLoad<uint64_t>(str, l.unicode_length);
  if (length > kMaxSanePyStringLength || kind > 4) length = 0;
  return FoldContents(data, length * kind);
}

// Before 3.12 (no co_version), the identity of a code object: what its name, file name and
// line table objects hold, in part (python_code_table.h says why). The three folds are
// independent, so their loads overlap.
uint32_t ContentsFingerprint(const PyLayout& l, uint64_t code, uint64_t name) {
  const uint64_t filename = PyLoad<uint64_t>(code, l.code_filename);
  const uint64_t table = PyLoad<uint64_t>(code, l.code_line_table);
  uint64_t hash = name != 0 ? FoldString(l, name) : 0;
  if (filename != 0) hash ^= std::rotl(FoldString(l, filename), 21);
  if (table != 0) {
    int64_t size = PyLoad<int64_t>(table, l.var_size);
    if (size < 0 || uint64_t(size) > kMaxSanePyBytesLength) size = 0;
    hash ^= std::rotl(FoldContents(table + l.bytes_data, uint64_t(size)), 42);
  }
  return uint32_t(hash ^ (hash >> 32));
}

inline PyCodeKey ReadKey(const KeyOffsets& at, uint64_t code) {
  PyCodeKey key{};
  key.code = code;
  key.name = PyLoad<uint64_t>(code, at.name);
  key.first_line = PyLoad<int32_t>(code, at.first_line);
  key.identity = at.version >= 0 ? PyLoad<uint32_t>(code, at.version) : 0;
  // No co_version (before 3.12, or its counter ran out): the contents decide.
  if (key.identity == 0) key.identity = ContentsFingerprint(*at.layout, code, key.name);
  return key;
}

// The cache set of a code object: its address's bits above the 16-byte alignment, hashed.
inline PyCodeCache::Entry* CacheSetOf(PyCodeCache& cache, uint64_t code) {
  const uint64_t set = ((code >> 4) * 0x9e3779b97f4a7c15ull) >> (64 - PyCodeCache::kSetBits);
  return &cache.entries[PyCodeCache::kWays * set];
}

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

PyCodeTable::PyCodeTable(PyCodeTableOptions options)
    : options_(options), serial_(g_next_table_serial.fetch_add(1, std::memory_order_relaxed)) {
  if (options_.max_codes == 0 || options_.arena_bytes == 0) return;
  // At most half full, so probes stay short and always end at an empty slot.
  size_t slot_count = 2;
  slot_shift_ = 63;
  while (slot_count < 2 * size_t{options_.max_codes}) {
    slot_count *= 2;
    --slot_shift_;
  }
  // calloc of this size maps fresh zero pages: untouched memory costs nothing.
  slots_ = static_cast<Slot*>(std::calloc(slot_count, sizeof(Slot)));
  entries_ = static_cast<Entry*>(std::calloc(size_t{options_.max_codes} + 1, sizeof(Entry)));
  arena_ = static_cast<char*>(std::calloc(options_.arena_bytes, 1));
  if (slots_ == nullptr || entries_ == nullptr || arena_ == nullptr) {
    std::free(slots_);
    std::free(entries_);
    std::free(arena_);
    slots_ = nullptr;
    entries_ = nullptr;
    arena_ = nullptr;
    return;
  }
  slot_mask_ = slot_count - 1;
}

PyCodeTable::~PyCodeTable() {
  std::free(slots_);
  std::free(entries_);
  std::free(arena_);
}

// Fibonacci hashing of the address (objects are 16-byte aligned: the low bits say nothing).
inline size_t PyCodeTable::FirstSlot(uint64_t code) const {
  return size_t(((code >> 4) * 0x9e3779b97f4a7c15ull) >> slot_shift_);
}

inline uint32_t PyCodeTable::Find(const Key& key, size_t* free_slot) const {
  for (size_t i = FirstSlot(key.code);; i = (i + 1) & slot_mask_) {
    const Slot& slot = slots_[i];
    if (LoadAcquire(slot.key.code) == 0) {
      if (free_slot != nullptr) *free_slot = i;
      return 0;
    }
    // A reused address with another key is another code object: probing goes on past it.
    if (slot.key == key) return slot.id;
  }
}

int PyCodeTable::InternAll(const PyRuntimeView& rt, const PyFrameSample* frames, int n,
                           uint32_t* ids, PyCodeCache& cache) {
  if (slots_ == nullptr) {
    for (int i = 0; i < n; ++i) ids[i] = 0;
    return n;
  }
  if (cache.table_serial != serial_) {
    for (PyCodeCache::Entry& entry : cache.entries) entry = {};
    cache.table_serial = serial_;
  }
  const KeyOffsets at = KeyOffsetsOf(rt.layout);
  int failed = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t code = frames[i].code;
    if (code == 0) {
      ids[i] = 0;
      ++failed;
      continue;
    }
    PyCodeCache::Entry* set = CacheSetOf(cache, code);
    // The whole key, as the table compares it: a reused address never hits.
    const Key key = ReadKey(at, code);
    uint32_t id = 0;
    for (int way = 0; way < PyCodeCache::kWays; ++way) {
      if (set[way].key == key) {
        id = set[way].id;
        break;
      }
    }
    if (id == 0) id = InternMiss(rt, code, set);
    failed += id == 0;
    ids[i] = id;
  }
  return failed;
}

// Out of line, so the hit path keeps the key in registers. The new entry goes first in its
// set, the others move down one way, and the last is forgotten.
uint32_t PyCodeTable::InternMiss(const PyRuntimeView& rt, uint64_t code, PyCodeCache::Entry* set) {
  cache_misses_.fetch_add(1, std::memory_order_relaxed);
  const Key key = ReadKey(KeyOffsetsOf(rt.layout), code);
  const uint32_t id = InternKey(rt, key);
  if (id != 0) {
    for (int way = PyCodeCache::kWays - 1; way > 0; --way) set[way] = set[way - 1];
    set[0] = PyCodeCache::Entry{key, id};
  }
  return id;
}

uint32_t PyCodeTable::Intern(const PyRuntimeView& rt, uint64_t code) {
  if (slots_ == nullptr || code == 0) return 0;
  return InternKey(rt, ReadKey(KeyOffsetsOf(rt.layout), code));
}

uint32_t PyCodeTable::InternKey(const PyRuntimeView& rt, const Key& key) {
  if (uint32_t id = Find(key, nullptr)) return id;
  if (!TryLock()) {
    failed_.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  uint32_t id = Insert(rt, key);
  Unlock();
  if (id == 0) failed_.fetch_add(1, std::memory_order_relaxed);
  return id;
}

bool PyCodeTable::TryLock() {
  for (int round = 0; round <= kMaxLockYields; ++round) {
    for (int spins = 0; spins < kLockSpinsBeforeYield; ++spins) {
      if (!insert_lock_.load(std::memory_order_relaxed) &&
          !insert_lock_.exchange(true, std::memory_order_acquire)) {
        return true;
      }
      CpuRelax();
    }
    sched_yield();
  }
  return false;
}

// Under the insert lock.
uint32_t PyCodeTable::Insert(const PyRuntimeView& rt, const Key& key) {
  size_t free_slot = 0;
  // Another thread may have added it since the lock-free look.
  if (uint32_t id = Find(key, &free_slot)) return id;
  uint32_t count = count_.load(std::memory_order_relaxed);
  const PyLayout& l = rt.layout;
  const uint8_t* table = nullptr;
  uint64_t table_size = 0;
  bool has_table =
      PyBytesContents(rt, PyLoad<uint64_t>(key.code, l.code_line_table), &table, &table_size);
  if (table_size > kMaxPyLineTableBytes) table_size = kMaxPyLineTableBytes;
  uint64_t need = kMaxPyNameBytes + kMaxPyFilenameBytes + table_size;
  if (count >= options_.max_codes || options_.arena_bytes - arena_used_ < need) return 0;

  Entry entry;
  entry.first_line = key.first_line;
  entry.text = arena_used_;
  char* text = arena_ + arena_used_;
  int name_size = CopyPyString(rt, key.name, text, kMaxPyNameBytes);
  int filename_size = CopyPyString(rt, PyLoad<uint64_t>(key.code, l.code_filename),
                                   text + (name_size > 0 ? name_size : 0), kMaxPyFilenameBytes);
  if (name_size < 0 || filename_size < 0) unreadable_.fetch_add(1, std::memory_order_relaxed);
  entry.name_size = name_size > 0 ? uint32_t(name_size) : 0;
  entry.filename_size = filename_size > 0 ? uint32_t(filename_size) : 0;
  if (has_table) {
    std::memcpy(text + entry.name_size + entry.filename_size, table, table_size);
    entry.line_table_size = uint32_t(table_size);
    entry.line_format = l.line_format;
  }
  if (l.instr_is_pointer) {
    // 3.11+: a code object is a variable-size object of its code units.
    int64_t units = PyLoad<int64_t>(key.code, l.var_size);
    entry.code_units = units > 0 && units < int64_t{kPyNoInstruction} ? uint32_t(units) : 0;
    // For the reader's incomplete-frame check (the walker records raw offsets).
    const int32_t first_traceable = PyLoad<int32_t>(key.code, l.code_first_traceable);
    entry.first_traceable = first_traceable > 0 ? uint32_t(first_traceable) : 0;
  } else {
    const uint8_t* bytecode = nullptr;
    uint64_t bytecode_size = 0;
    if (PyBytesContents(rt, PyLoad<uint64_t>(key.code, l.code_bytecode), &bytecode,
                        &bytecode_size)) {
      entry.code_units = uint32_t(bytecode_size / 2);
    }
  }
  entry.python_version = l.version;
  arena_used_ += entry.name_size + entry.filename_size + entry.line_table_size;

  uint32_t id = count + 1;
  entries_[id] = entry;
  count_.store(id, std::memory_order_release);
  Slot& slot = slots_[free_slot];
  slot.key.name = key.name;
  slot.key.first_line = key.first_line;
  slot.key.identity = key.identity;
  slot.id = id;
  // Published last: a reader that loads this address (acquire) sees the rest of the slot.
  std::atomic_ref<uint64_t>(slot.key.code).store(key.code, std::memory_order_release);
  return id;
}

void PyCodeTable::RewindDrain() {
  std::lock_guard<std::mutex> lock(drain_mutex_);
  drained_ = 0;
}

void PyCodeTable::DrainNew(std::vector<PyCodeInfo>& out) {
  std::lock_guard<std::mutex> lock(drain_mutex_);
  uint32_t count = count_.load(std::memory_order_acquire);
  try {
    while (drained_ < count) {
      uint32_t id = drained_ + 1;
      const Entry& entry = entries_[id];
      const char* text = arena_ + entry.text;
      PyCodeInfo info;
      info.id = id;
      info.name.assign(text, entry.name_size);
      info.filename.assign(text + entry.name_size, entry.filename_size);
      info.line_table.assign(text + entry.name_size + entry.filename_size, entry.line_table_size);
      info.first_line = entry.first_line;
      info.python_version = entry.python_version;
      info.code_units = entry.code_units;
      info.first_traceable = entry.first_traceable;
      info.line_format = entry.line_format;
      out.push_back(std::move(info));
      drained_ = id;
    }
  } catch (const std::bad_alloc&) {
    // The rest goes out with the next call.
  }
}

}  // namespace gpuperf::inject
