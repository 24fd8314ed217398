#include "inject/stack/module_table.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <tuple>

namespace gpuperf {
namespace {

std::string SelfExePath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "/proc/self/exe";
  return std::string(buf, static_cast<size_t>(n));
}

size_t AlignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

int CollectModule(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<LoadedModule>*>(data);
  LoadedModule module;
  module.load_bias = info->dlpi_addr;
  uint64_t lowest = UINT64_MAX, highest = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type == PT_LOAD) {
      lowest = std::min<uint64_t>(lowest, info->dlpi_addr + phdr.p_vaddr);
      highest = std::max<uint64_t>(highest, info->dlpi_addr + phdr.p_vaddr + phdr.p_memsz);
    } else if (phdr.p_type == PT_NOTE && module.build_id.empty()) {
      // Notes sit inside a loaded segment, so they can be read in place.
      const void* notes = reinterpret_cast<const void*>(info->dlpi_addr + phdr.p_vaddr);
      module.build_id = BuildIdFromNotes(notes, phdr.p_filesz, phdr.p_align == 8 ? 8 : 4);
    }
  }
  if (lowest >= highest) return 0;  // nothing mapped: not an object we can attribute PCs to
  module.start = lowest;
  module.end = highest;
  const char* name = info->dlpi_name;
  // The loader names the main program "" (and sometimes its first entry so): resolve it.
  module.path = (name == nullptr || name[0] == '\0') ? SelfExePath() : std::string(name);
  out->push_back(std::move(module));
  return 0;
}

bool SameModule(const LoadedModule& a, const LoadedModule& b) {
  return a.start == b.start && a.end == b.end && a.load_bias == b.load_bias && a.path == b.path &&
         a.build_id == b.build_id;
}

bool SameSet(const std::vector<LoadedModule>& a, const std::vector<LoadedModule>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), SameModule);
}

bool StartLess(const LoadedModule& a, const LoadedModule& b) {
  return std::tie(a.start, a.end, a.path) < std::tie(b.start, b.end, b.path);
}

}  // namespace

std::string BuildIdFromNotes(const void* note_data, size_t size, size_t alignment) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(note_data);
  size_t offset = 0;
  while (offset + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) header;
    std::memcpy(&header, bytes + offset, sizeof(header));
    size_t name_at = offset + sizeof(header);
    size_t desc_at = name_at + AlignUp(header.n_namesz, alignment);
    size_t next = desc_at + AlignUp(header.n_descsz, alignment);
    if (desc_at > size || header.n_descsz > size - desc_at || next <= offset) break;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        std::memcmp(bytes + name_at, "GNU", 4) == 0) {
      std::string hex;
      hex.reserve(2 * header.n_descsz);
      for (size_t i = 0; i < header.n_descsz; ++i) {
        unsigned char b = bytes[desc_at + i];
        hex.push_back(kHex[b >> 4]);
        hex.push_back(kHex[b & 15]);
      }
      return hex;
    }
    offset = next;
  }
  return "";
}

std::vector<LoadedModule> EnumerateLoadedModules() {
  std::vector<LoadedModule> modules;
  dl_iterate_phdr(CollectModule, &modules);
  std::sort(modules.begin(), modules.end(), StartLess);
  return modules;
}

const LoadedModule* FindModule(const std::vector<LoadedModule>& sorted, uint64_t pc) {
  auto after =
      std::upper_bound(sorted.begin(), sorted.end(), pc,
                       [](uint64_t value, const LoadedModule& m) { return value < m.start; });
  if (after == sorted.begin()) return nullptr;
  const LoadedModule& candidate = *(after - 1);
  return pc < candidate.end ? &candidate : nullptr;
}

std::vector<ModuleRecord> ToModuleRecords(const std::vector<LoadedModule>& modules, uint32_t pid,
                                          const std::function<StringId(std::string_view)>& intern) {
  std::vector<ModuleRecord> records;
  records.reserve(modules.size());
  for (const LoadedModule& m : modules) {
    ModuleRecord record;
    record.pid = pid;
    record.path = intern(m.path);
    record.build_id = m.build_id.empty() ? 0 : intern(m.build_id);
    record.load_bias = m.load_bias;
    record.start = m.start;
    record.end = m.end;
    records.push_back(record);
  }
  return records;
}

bool ModuleTable::Refresh() {
  // Allocation failure must not escape into the host process: keep the old snapshot.
  try {
    auto fresh = std::make_unique<Snapshot>(EnumerateLoadedModules());
    std::lock_guard<std::mutex> lock(mutex_);
    const Snapshot* old = current_.load(std::memory_order_acquire);
    if (old != nullptr && SameSet(*old, *fresh)) return false;
    snapshots_.push_back(std::move(fresh));
    current_.store(snapshots_.back().get(), std::memory_order_release);
    refreshes_.fetch_add(1, std::memory_order_relaxed);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

const LoadedModule* ModuleTable::Find(uint64_t pc) const {
  const Snapshot* snapshot = current_.load(std::memory_order_acquire);
  return snapshot == nullptr ? nullptr : FindModule(*snapshot, pc);
}

bool ModuleTable::ContainsAll(const uint64_t* pcs, int count) const {
  const Snapshot* snapshot = current_.load(std::memory_order_acquire);
  if (snapshot == nullptr) return count == 0;
  for (int i = 0; i < count; ++i) {
    if (FindModule(*snapshot, pcs[i]) == nullptr) return false;
  }
  return true;
}

const std::vector<LoadedModule>& ModuleTable::modules() const {
  static const Snapshot kEmpty;
  const Snapshot* snapshot = current_.load(std::memory_order_acquire);
  return snapshot == nullptr ? kEmpty : *snapshot;
}

void ModuleTable::DrainNew(std::vector<LoadedModule>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Snapshot* snapshot = current_.load(std::memory_order_acquire);
  if (snapshot == nullptr) return;
  try {
    std::vector<LoadedModule> added;
    for (const LoadedModule& m : *snapshot) {
      auto [first, last] = std::equal_range(drained_.begin(), drained_.end(), m, StartLess);
      bool seen = std::any_of(first, last, [&](const LoadedModule& d) { return SameModule(d, m); });
      if (!seen) added.push_back(m);
    }
    for (const LoadedModule& m : added) {
      out.push_back(m);
      drained_.insert(std::upper_bound(drained_.begin(), drained_.end(), m, StartLess), m);
    }
  } catch (const std::bad_alloc&) {
    // Modules not handed out now are handed out by a later call.
  }
}

}  // namespace gpuperf
