#include "inject/modules.h"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>

#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

struct Found {
  std::string path;
  std::string build_id;
  uint64_t bias, start, end;
};

std::string HexBuildId(const ElfW(Nhdr) * note) {
  static const char kHex[] = "0123456789abcdef";
  const auto* desc =
      reinterpret_cast<const uint8_t*>(note) + sizeof(ElfW(Nhdr)) + ((note->n_namesz + 3) & ~3u);
  std::string hex;
  for (uint32_t i = 0; i < note->n_descsz; ++i) {
    hex += kHex[desc[i] >> 4];
    hex += kHex[desc[i] & 15];
  }
  return hex;
}

int Collect(struct dl_phdr_info* info, size_t, void* arg) {
  auto* found = static_cast<std::vector<Found>*>(arg);
  Found module;
  module.path = info->dlpi_name ? info->dlpi_name : "";
  if (module.path.empty()) {
    // The main program: dl_iterate_phdr names it "".
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    module.path = n > 0 ? std::string(exe, n) : "[main]";
  }
  if (module.path.starts_with("linux-vdso")) return 0;
  module.bias = info->dlpi_addr;
  module.start = UINT64_MAX;
  module.end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD) {
      module.start = std::min<uint64_t>(module.start, info->dlpi_addr + ph.p_vaddr);
      module.end = std::max<uint64_t>(module.end, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
    } else if (ph.p_type == PT_NOTE && module.build_id.empty()) {
      const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
      const char* end = p + ph.p_memsz;
      while (p + sizeof(ElfW(Nhdr)) <= end) {
        const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
        if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4) {
          module.build_id = HexBuildId(note);
          break;
        }
        p += sizeof(ElfW(Nhdr)) + ((note->n_namesz + 3) & ~3u) + ((note->n_descsz + 3) & ~3u);
      }
    }
  }
  if (module.end > module.start) found->push_back(std::move(module));
  return 0;
}

}  // namespace

void ModuleTracker::Refresh(uint32_t pid, NameTable& names, std::vector<ModuleRecord>& out) {
  std::vector<Found> found;
  dl_iterate_phdr(Collect, &found);
  for (const Found& m : found) {
    auto it = std::lower_bound(known_.begin(), known_.end(), m.start,
                               [](const Known& k, uint64_t start) { return k.start < start; });
    if (it != known_.end() && it->start == m.start && it->end == m.end) continue;
    known_.insert(it, Known{m.start, m.end});
    out.push_back(
        ModuleRecord{pid, names.Intern(m.path), names.Intern(m.build_id), m.bias, m.start, m.end});
  }
  CountStat(StatId::module_refreshes);
}

bool ModuleTracker::NeedsRefresh(const std::vector<StackRecord>& stacks) const {
  for (const StackRecord& stack : stacks) {
    for (uint64_t pc : stack.pcs) {
      auto it = std::upper_bound(known_.begin(), known_.end(), pc,
                                 [](uint64_t value, const Known& k) { return value < k.start; });
      if (it == known_.begin() || pc >= (it - 1)->end) return true;
    }
  }
  return false;
}

}  // namespace gpuperf::inject
