// The loaded ELF objects of this process as ModuleRecords, written at start and again
// when a stack holds a PC outside every known module (a library loaded later).
#pragma once

#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"
#include "inject/stack/module_table.h"

namespace gpuperf::inject {

class ModuleTracker {
 public:
  // Re-reads the module list; appends modules not reported before to `out`.
  void Refresh(uint32_t pid, NameTable& names, std::vector<ModuleRecord>& out);
  // True when some PC of these stacks lies outside all known modules.
  bool NeedsRefresh(const std::vector<StackRecord>& stacks) const;

 private:
  ModuleTable table_;
};

}  // namespace gpuperf::inject
