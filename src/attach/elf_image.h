// The parts of a library's ELF file gpuperf attach needs to act in another process: where
// its segments go, so that the bias of a mapping is known, and its dynamic symbols (dlopen,
// malloc, ...) with their sizes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attach/proc_view.h"
#include "gpuperf/status.h"

namespace gpuperf::attach {

struct LoadSegment {
  uint64_t vaddr = 0;
  uint64_t offset = 0;
  uint64_t file_bytes = 0;
  uint64_t memory_bytes = 0;
  bool executable = false;
};

struct ElfSymbol {
  uint64_t value = 0;  // link-time address: add the bias
  uint64_t size = 0;
};

struct ElfImage {
  uint16_t machine = 0;  // EM_X86_64, ...
  bool wide = false;     // ELFCLASS64
  std::vector<LoadSegment> loads;
  std::map<std::string, ElfSymbol> dynamic_symbols;  // defined ones, by name (unversioned)
};

// Reads `path` (for another process's files: /proc/PID/root/... so a container's files are
// found). Only the header when `symbols` is false.
Result<ElfImage> ReadElfImage(const std::string& path, bool symbols = true);

// The ELF machine of `path`'s header (its e_machine), or nothing for a non-ELF file.
std::optional<uint16_t> ElfMachine(const std::string& path, bool* wide = nullptr);

// The load bias of `image` in the process whose mappings of that file are `file_mappings`
// (the one at file offset 0 fixes it); nothing when none is at offset 0.
std::optional<uint64_t> LoadBias(const ElfImage& image, const std::vector<Mapping>& file_mappings);

// The unused bytes at the end of executable mapping `m` of `image` loaded with `bias`: past
// the end of the segment's file contents, up to the mapping's end. [begin, end), begin 16-byte
// aligned; begin == end when there are none.
struct Padding {
  uint64_t begin = 0;
  uint64_t end = 0;
};
Padding ExecutablePadding(const ElfImage& image, uint64_t bias, const Mapping& m);

}  // namespace gpuperf::attach
