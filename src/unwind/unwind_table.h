// Per-module unwind tables compiled from `.eh_frame`, and the process-wide set of them that
// the table unwinder (table_unwinder.h) reads on every stack capture.
//
// A module's table is two parallel sorted arrays: the start of each row as a 32-bit offset
// from the module's lowest address, and a 16-bit index into the module's distinct
// UnwindRules (eh_frame_parser.h), plus a bucket index over the offsets: about 8 bytes a
// row. The rows cover each FDE's range; a kNoInfo row marks where an FDE ends and no other
// begins. Rows with equal rules in a row are merged. A lookup reads the row's bucket and
// searches the two or three rows it holds.
//
// Building has two steps. A rescan lists the loaded modules (dl_iterate_phdr, under the
// loader's lock, quick) and gives each new one a *pending* table: where its segments and
// `.eh_frame_hdr` are, no rows. Compiling then reads the module's `.eh_frame_hdr` and
// `.eh_frame` in place (PT_GNU_EH_FRAME gives the header; no file I/O) outside the loader's
// lock, which a large library would otherwise hold for a tenth of a second, stalling every
// thread that loads a library, looks up a symbol or unwinds with libunwind meanwhile. While
// it reads, the module is pinned (dlopen RTLD_NOLOAD) so that it cannot be unloaded
// half-read. Both steps allocate: never on the capture path. The walk itself reads only
// these tables and the thread's stack, never the modules' memory, so a module unloaded
// after its table was built cannot make it fault.
//
// Snapshots are immutable and published through an atomic pointer; an old snapshot and
// every table it names stay alive until the UnwindTables object is destroyed (a process
// loads libraries a handful of times), so a reader never holds a dangling pointer. A table
// never changes once published: compiling a pending table publishes a new snapshot that
// names the compiled one instead. The only thing a reader writes is a pending table's
// `wanted` mark.
//
// x86-64 only.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "unwind/eh_frame_parser.h"

namespace gpuperf {

enum class ModuleTableStatus : uint8_t {
  kOk = 0,
  kNoEhFrame = 1,   // no PT_GNU_EH_FRAME (or an empty one): the walk falls back
  kUnreadable = 2,  // the header or the section lies outside the module's segments, or is damaged
  kTooLarge = 3,    // the module spans 4 GiB or more: offsets would not fit in 32 bits
  kOutOfMemory = 4,
  kPending = 5,   // listed, not compiled yet (UnwindTables::CompilePending)
  kUnloaded = 6,  // unloaded before it could be compiled
};

const char* ModuleTableStatusName(ModuleTableStatus status);

// The last element of items[0, count) whose key is <= value, or items[0] when none is
// (count > 0; keys ascending). Branch-free steps (conditional moves): a table search must
// not pay a mispredicted branch per step.
template <class T, class KeyFn, class V>
const T* LastAtOrBelow(const T* items, size_t count, V value, KeyFn key) {
  while (count > 1) {
    const size_t half = count / 2;
    items = key(items[half]) <= value ? items + half : items;
    count -= half;
  }
  return items;
}

// One module's rows. Immutable once built.
struct ModuleUnwindTable {
  uint64_t start = 0, end = 0;       // runtime address range of the module's PT_LOAD segments
  std::vector<uint32_t> row_starts;  // ascending offsets from `start`
  std::vector<uint16_t> row_rules;   // rules[row_rules[i]] holds from row_starts[i] to [i + 1]
  std::vector<UnwindRule> rules;     // the module's distinct rules (a few hundred, typically)
  uint32_t rules_over_limit = 0;     // rows made kUnexpressible: more than 65536 distinct rules
  ModuleTableStatus status = ModuleTableStatus::kNoEhFrame;
  EhFrameStats stats;
  uint32_t dropped_fdes = 0;  // FDEs outside the module or hidden by a later overlapping one
  std::string name;           // the loader's name for it ("" for the main program)
  uint64_t load_bias = 0;     // with start, end, name and eh_frame_hdr: who this table is for
  uint64_t eh_frame_hdr = 0;  // runtime address of .eh_frame_hdr (0: none)
  uint64_t eh_frame_hdr_size = 0;

  // Where the module's readable PT_LOAD segments lie, [begin, end): what compiling may read.
  struct Segment {
    uint64_t begin = 0, end = 0;
  };
  std::vector<Segment> readable;

  // A pending table that a walk needed: the builder compiles wanted tables first. Written
  // by any thread (atomically), so mutable in a published table.
  mutable uint8_t wanted = 0;
  void MarkWanted() const { std::atomic_ref<uint8_t>(wanted).store(1, std::memory_order_relaxed); }
  bool IsWanted() const {
    return std::atomic_ref<uint8_t>(wanted).load(std::memory_order_relaxed) != 0;
  }

  // buckets[b]: the row that covers offset row_starts[0] + (b << bucket_shift). The row for
  // an offset in bucket b lies in [buckets[b], buckets[b + 1]].
  std::vector<uint32_t> buckets;
  uint8_t bucket_shift = 0;

  // The rule that covers `pc`, or nullptr when none does (before the first FDE).
  const UnwindRule* Find(uint64_t pc) const {
    if (pc < start || pc >= end || row_starts.empty()) return nullptr;
    const auto offset = static_cast<uint32_t>(pc - start);
    if (offset < row_starts.front()) return nullptr;
    if (offset >= row_starts.back()) return &rules[row_rules.back()];
    const size_t bucket = (offset - row_starts.front()) >> bucket_shift;
    size_t row = buckets[bucket];
    const size_t last = buckets[bucket + 1];
    while (row < last && row_starts[row + 1] <= offset) ++row;
    return &rules[row_rules[row]];
  }
};

// Builds the rows of a module spanning [start, end) from the parser's output. Spans are
// sorted by start; where two overlap, the later one wins from its start on (what a lookup
// through .eh_frame_hdr's sorted table finds). Spans not inside the module are dropped.
// Returns false (status kTooLarge) when the module is too large for 32-bit offsets.
bool BuildModuleTable(uint64_t start, uint64_t end, const std::vector<CfiRow>& rows,
                      std::vector<FdeSpan> spans, ModuleUnwindTable* out);

// One entry of a snapshot: where a module lies and its table.
struct UnwindModule {
  uint64_t start = 0, end = 0;
  const ModuleUnwindTable* table = nullptr;  // never null; status says whether it has rows
};

// The modules known at one Refresh, sorted by start.
struct UnwindSnapshot {
  std::vector<UnwindModule> modules;
  // Changes only when a module left (unloaded, or replaced at its addresses): a walk made
  // under an earlier snapshot of the same layout walks alike under this one, whose tables
  // differ only in those compiled since (the launch-stack memo, stack_memo.h, relies on it).
  uint64_t layout = 0;

  const ModuleUnwindTable* Find(uint64_t pc) const {
    if (modules.empty()) return nullptr;
    const UnwindModule* candidate = LastAtOrBelow(modules.data(), modules.size(), pc,
                                                  [](const UnwindModule& m) { return m.start; });
    return pc >= candidate->start && pc < candidate->end ? candidate->table : nullptr;
  }
};

// The tables of the modules loaded in this process.
class UnwindTables {
 public:
  UnwindTables() = default;
  UnwindTables(const UnwindTables&) = delete;
  UnwindTables& operator=(const UnwindTables&) = delete;

  // Rescan, then compile every pending table: all at once (tests, benchmarks, and small
  // processes). Returns how many tables it compiled; a failed compile still yields a
  // table whose status says why. Never throws. Every method is serialized by a mutex that
  // readers never take.
  int Refresh();

  // Re-reads the list of loaded modules when the loader's counts of loads and unloads
  // moved since the last rescan (or always, with `force`): modules not seen before get a
  // pending table, unloaded ones leave the snapshot. Returns true when it published a new
  // snapshot. Cheap when nothing changed: one step of dl_iterate_phdr.
  bool Rescan(bool force = false);

  // Compiles the pending tables of the current snapshot, those marked wanted only or all,
  // and publishes them. Returns how many it compiled. `on_compiled`, when given, hears of
  // each table and how long it took (ns).
  using CompiledFn = void (*)(const ModuleUnwindTable& table, uint64_t ns);
  int CompilePending(bool only_wanted, CompiledFn on_compiled = nullptr);

  // The current snapshot (null before the first Refresh). Lock-free.
  const UnwindSnapshot* snapshot() const { return current_.load(std::memory_order_acquire); }

 private:
  void Publish(std::vector<UnwindModule> modules, uint64_t layout);

  std::mutex mutex_;
  std::vector<std::unique_ptr<ModuleUnwindTable>> tables_;  // every table ever made
  uint64_t loader_adds_ = 0, loader_subs_ = 0;              // at the last rescan
  std::vector<std::unique_ptr<UnwindSnapshot>> snapshots_;  // every snapshot ever published
  std::atomic<const UnwindSnapshot*> current_{nullptr};
};

// The process-wide set the table unwinder uses (never destroyed, so that threads still
// capturing at exit do not read freed tables).
UnwindTables& ProcessUnwindTables();

}  // namespace gpuperf
