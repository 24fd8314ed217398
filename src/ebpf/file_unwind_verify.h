// The recorder's lazy unwind rules of a file (file_unwind_rules.h) against the whole table
// compiled from the same file (BuildFileUnwindTable): the answer a walk gets must be the
// same at every row start of the whole table and the byte before it, and in every FDE the
// header lists at its first two bytes, a random one and the last before the next FDE.
// For the unit test on the CI machine's libraries and `sample_unwinder_bench --verify` on
// any file (PyTorch's, on the GPU machine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "unwind/unwind_table.h"

namespace gpuperf::ebpf {

class FileUnwindRules;

// Where the answers of the whole table and the lazy rules at `address` differ (a line for
// a test's failure), or "" when they agree.
std::string RulesDiffer(const ModuleUnwindTable& whole, FileUnwindRules& lazy, uint64_t address);

struct FileRulesComparison {
  ModuleTableStatus whole_status = ModuleTableStatus::kUnreadable;
  ModuleTableStatus lazy_status = ModuleTableStatus::kUnreadable;
  bool lazy_compiled_whole = false;  // the header had no usable table: nothing lazy to check
  uint64_t addresses = 0;            // looked up in both
  uint64_t mismatches = 0;
  uint64_t rows = 0;                          // of the whole table
  uint64_t fdes = 0;                          // the header lists
  uint64_t fdes_compiled = 0;                 // by the lazy rules, after every address
  std::vector<std::string> first_mismatches;  // at most 5, "at 0x...: whole ..., lazy ..."

  // Both built, the lazy side lazily, and every address agreed.
  bool agrees() const {
    return whole_status == ModuleTableStatus::kOk && lazy_status == ModuleTableStatus::kOk &&
           !lazy_compiled_whole && mismatches == 0;
  }
};

// Looks the addresses above up in both, in a random order (`seed`): FDEs compiled in any
// order must give the same rules.
FileRulesComparison CompareFileRules(const std::string& path, uint64_t seed);

}  // namespace gpuperf::ebpf
