#include "ebpf/kernel_symbols.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

namespace gpuperf::ebpf {

KernelSymbols KernelSymbols::Load() {
  std::ifstream file("/proc/kallsyms");
  return Parse(file);
}

KernelSymbols KernelSymbols::Parse(std::istream& text) {
  KernelSymbols out;
  std::map<std::string, uint32_t> modules;
  std::string line;
  while (std::getline(text, line)) {
    std::istringstream fields(line);
    std::string address_text, type, name, module;
    if (!(fields >> address_text >> type >> name)) continue;
    fields >> module;
    // Code only: text symbols, global or local, and weak ones.
    const char kind = type.empty() ? '?' : type[0];
    if (kind != 't' && kind != 'T' && kind != 'w' && kind != 'W') continue;
    uint64_t address = 0;
    try {
      address = std::stoull(address_text, nullptr, 16);
    } catch (...) {
      continue;
    }
    if (address == 0) continue;  // hidden from us (kptr_restrict)
    uint32_t module_at = std::numeric_limits<uint32_t>::max();
    if (module.size() > 2 && module.front() == '[' && module.back() == ']') {
      module = module.substr(1, module.size() - 2);
      auto [it, added] = modules.emplace(module, static_cast<uint32_t>(out.names_.size()));
      if (added) {
        out.names_ += module;
        out.names_ += '\0';
      }
      module_at = it->second;
    }
    out.symbols_.push_back({address, static_cast<uint32_t>(out.names_.size()), module_at});
    out.names_ += name;
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
