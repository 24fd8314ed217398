// The symbols an ELF file defines in its dynamic symbol table (.dynsym): what another
// program can look up in it once loaded. `gpuperf record` checks the injection library's
// entry points with them (src/cli/injection_library.cc), `gpuperf attach` finds dlopen and
// libc's allocator in the target's libraries (src/attach/elf_image.cc).
#pragma once

#include <gelf.h>

#include <functional>

namespace gpuperf {

// Calls `visit` with the name and entry of every defined dynamic symbol of `elf` (undefined
// ones and those without a name left out), in table order.
void ForEachDefinedDynamicSymbol(
    Elf* elf, const std::function<void(const char* name, const GElf_Sym&)>& visit);

}  // namespace gpuperf
