// The ELF objects loaded into this process (executable, shared libraries, vdso), read with
// dl_iterate_phdr: what the symbolizer needs to turn a raw PC into file + offset later, on
// the recording host, keyed by build-id so that a rebuilt binary is noticed.
//
// Used inside someone else's process (the injection library): nothing here throws out,
// aborts or prints. Refresh() allocates and takes the loader's lock, so call it at start-up
// and when a new stack holds a PC outside every known module (a library was dlopen'ed),
// never on every launch.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf {

struct LoadedModule {
  std::string path;      // absolute where the loader knew it; the main program's is /proc/self/exe
  std::string build_id;  // lowercase hex of NT_GNU_BUILD_ID; empty when the object has none
  uint64_t load_bias = 0;  // runtime address minus ELF virtual address
  uint64_t start = 0;      // lowest runtime address of its PT_LOAD segments
  uint64_t end = 0;        // one past the highest
};

// Every loaded object with at least one PT_LOAD segment, sorted by start.
std::vector<LoadedModule> EnumerateLoadedModules();

// Lowercase hex of the GNU build-id found in the PT_NOTE segments of a mapped object,
// or "" when it has none. Exposed for tests.
std::string BuildIdFromNotes(const void* note_data, size_t size, size_t alignment);

// The module containing `pc` in a list sorted by start, or nullptr.
const LoadedModule* FindModule(const std::vector<LoadedModule>& sorted, uint64_t pc);

// Turns modules into trace records; `intern` maps a string to the trace's StringId.
std::vector<ModuleRecord> ToModuleRecords(const std::vector<LoadedModule>& modules, uint32_t pid,
                                          const std::function<StringId(std::string_view)>& intern);

// A module table that many threads read while one refreshes it.
//
// Lookups are lock-free: they read an immutable snapshot published through an atomic
// pointer. Old snapshots stay alive until the table is destroyed (a process loads
// libraries a handful of times), so a pointer returned by Find() never dangles.
class ModuleTable {
 public:
  ModuleTable() = default;
  ModuleTable(const ModuleTable&) = delete;
  ModuleTable& operator=(const ModuleTable&) = delete;

  // Re-reads the loaded objects. Returns true when the set changed. Serialized by a
  // mutex that lookups never take.
  bool Refresh();

  // The module that contains `pc`, or nullptr (unknown: maybe loaded since the last
  // Refresh). Lock-free; a binary search over the current snapshot.
  const LoadedModule* Find(uint64_t pc) const;
  bool Contains(uint64_t pc) const { return Find(pc) != nullptr; }
  // True when every PC lies in a known module; false means Refresh() is due.
  bool ContainsAll(const uint64_t* pcs, int count) const;

  // The current snapshot, sorted by start (empty before the first Refresh).
  const std::vector<LoadedModule>& modules() const;

  // Appends the modules that appeared since the last call (all of them the first time),
  // for the writer thread to store as ModuleRecords. A module counts as new when its
  // (path, start, load bias, build-id) was not handed out before.
  void DrainNew(std::vector<LoadedModule>& out);

  // How many times Refresh() found a changed set (for the module_refreshes stat).
  uint64_t refreshes() const { return refreshes_.load(std::memory_order_relaxed); }

 private:
  using Snapshot = std::vector<LoadedModule>;

  mutable std::mutex mutex_;  // serializes Refresh and DrainNew, never taken by lookups
  std::vector<std::unique_ptr<Snapshot>> snapshots_;  // every snapshot ever published
  std::atomic<const Snapshot*> current_{nullptr};
  std::vector<LoadedModule> drained_;  // what DrainNew handed out, sorted by start
  std::atomic<uint64_t> refreshes_{0};
};

}  // namespace gpuperf
