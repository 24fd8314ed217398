// SASS offsets to source lines, from a cubin's own line table: the DWARF .debug_line section
// that nvcc -lineinfo (or -G) writes. Each function's sequence starts at a DW_LNE_set_address
// relocated against the function's symbol, so an address is an offset from the function's
// start, as CUPTI's PC samples give it. Versions 2 to 5 of the line program are read; the
// cubin may be relocatable or executable (both keep .rela.debug_line).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf {

struct SassLine {
  uint64_t offset = 0;  // from the function's start
  std::string file;     // directory and name as the compiler recorded them
  uint32_t line = 0;
};

class CubinLineTable {
 public:
  // Parses `cubin`. A cubin without a line table is no error: HasLines() says false.
  static Result<CubinLineTable> Parse(std::span<const uint8_t> cubin);

  bool HasLines() const { return !functions_.empty(); }
  bool HasFunction(const std::string& function) const { return functions_.count(function) != 0; }
  // The line of the instruction at `offset` in `function`; nullptr when unknown.
  const SassLine* Find(const std::string& function, uint64_t offset) const;
  // Every row of a function, by offset (empty when unknown).
  std::span<const SassLine> Rows(const std::string& function) const;

 private:
  struct FunctionRows {
    std::vector<SassLine> rows;  // sorted by offset
    uint64_t end = 0;            // the sequence's end address
  };
  std::unordered_map<std::string, FunctionRows> functions_;
  friend class LineProgramReader;
};

}  // namespace gpuperf
