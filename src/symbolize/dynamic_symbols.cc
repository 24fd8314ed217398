#include "symbolize/dynamic_symbols.h"

namespace gpuperf {

void ForEachDefinedDynamicSymbol(
    Elf* elf, const std::function<void(const char* name, const GElf_Sym&)>& visit) {
  Elf_Scn* section = nullptr;
  while ((section = elf_nextscn(elf, section)) != nullptr) {
    GElf_Shdr header;
    if (gelf_getshdr(section, &header) == nullptr || header.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(section, nullptr);
    const size_t count = header.sh_entsize != 0 ? header.sh_size / header.sh_entsize : 0;
    for (size_t i = 0; data != nullptr && i < count; ++i) {
      GElf_Sym symbol;
      if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr ||
          symbol.st_shndx == SHN_UNDEF) {
        continue;
      }
      const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
      if (name != nullptr && *name != '\0') visit(name, symbol);
    }
  }
}

}  // namespace gpuperf
