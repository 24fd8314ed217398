// Names of kernel code addresses, from /proc/kallsyms, for the kernel frames of CPU
// samples. Reading the addresses needs root or CAP_SYSLOG (kptr_restrict); without them
// every address reads 0 and frames stay unnamed ("[kernel]+0x...").
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf::ebpf {

class KernelSymbols {
 public:
  // Reads /proc/kallsyms.
  static KernelSymbols Load();
  // Reads kallsyms-formatted text ("ffffffff81000000 T _stext [module]").
  static KernelSymbols Parse(std::istream& text);

  struct Lookup {
    std::string_view function;  // empty: no symbol covers the address
    std::string_view module;    // "" for the kernel image, else the module's name
    uint64_t offset = 0;        // from the symbol's start
  };
  Lookup Find(uint64_t address) const;
  bool empty() const { return symbols_.empty(); }
  size_t size() const { return symbols_.size(); }

 private:
  struct Symbol {
    uint64_t address;
    uint32_t name;    // offset into names_
    uint32_t module;  // offset into names_, or UINT32_MAX for the kernel image
  };
  std::string_view Name(uint32_t at) const;
  std::vector<Symbol> symbols_;  // sorted by address
  std::string names_;            // NUL-separated
};

}  // namespace gpuperf::ebpf
