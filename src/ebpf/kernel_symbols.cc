#include "ebpf/kernel_symbols.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>

namespace gpuperf::ebpf {

KernelSymbols KernelSymbols::Load() {
  std::ifstream file("/proc/kallsyms");
  return Parse(file);
}

KernelSymbols KernelSymbols::Parse(std::istream& input) {
  const std::string text((std::istreambuf_iterator<char>(input)), std::istreambuf_iterator<char>());
  KernelSymbols out;
  std::map<std::string, uint32_t, std::less<>> modules;
  std::string line;
  // "ffffffff81000000 T _stext" or "ffffffffc0a00000 t nvidia_ioctl\t[nvidia]": split by
  // hand, ~120k lines (istringstream took ~0.3 s).
  for (size_t at = 0; at < text.size();) {
    size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    line.assign(text, at, eol - at);
    at = eol + 1;
    const char* p = line.c_str();
    char* end = nullptr;
    const uint64_t address = std::strtoull(p, &end, 16);
    if (end == p || *end != ' ' || end[1] == '\0' || end[2] != ' ') continue;
    const char kind = end[1];
    // Code only: text symbols, global or local, and weak ones.
    if (kind != 't' && kind != 'T' && kind != 'w' && kind != 'W') continue;
    if (address == 0) continue;  // hidden from us (kptr_restrict)
    std::string_view rest(end + 3);
    const size_t gap = rest.find_first_of(" \t");
    const std::string_view name = rest.substr(0, gap);
    if (name.empty()) continue;
    uint32_t module_at = std::numeric_limits<uint32_t>::max();
    if (gap != std::string_view::npos) {
      std::string_view module = rest.substr(gap);
      module.remove_prefix(std::min(module.find_first_not_of(" \t"), module.size()));
      if (module.size() > 2 && module.front() == '[' && module.back() == ']') {
        module = module.substr(1, module.size() - 2);
        auto it = modules.find(module);
        if (it == modules.end()) {
          it = modules.emplace(std::string(module), static_cast<uint32_t>(out.names_.size())).first;
          out.names_.append(module);
          out.names_ += '\0';
        }
        module_at = it->second;
      }
    }
    out.symbols_.push_back({address, static_cast<uint32_t>(out.names_.size()), module_at});
    out.names_.append(name);
    out.names_ += '\0';
  }
  std::stable_sort(out.symbols_.begin(), out.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return out;
}

std::string_view KernelSymbols::Name(uint32_t at) const {
  if (at >= names_.size()) return {};
  return std::string_view(names_.c_str() + at);
}

KernelSymbols::Lookup KernelSymbols::Find(uint64_t address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](uint64_t value, const Symbol& s) { return value < s.address; });
  if (after == symbols_.begin()) return {};
  const Symbol& symbol = *(after - 1);
  // Past the last symbol of the image or a module is not code we can name.
  if (after == symbols_.end() && address - symbol.address > (1u << 20)) return {};
  return {Name(symbol.name), Name(symbol.module), address - symbol.address};
}

}  // namespace gpuperf::ebpf
