// The ELF files a running process has mapped, read from /proc/PID/maps and the files'
// program headers: what the symbolizer needs to name the user PCs of CPU samples (the
// injection library gets the same from dl_iterate_phdr inside the process; a sampler
// outside it reads them from /proc).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf::ebpf {

struct MappedModule {
  std::string path;      // as /proc/PID/maps shows it ("[vdso]" for the vDSO)
  std::string build_id;  // hex; empty when the file has none
  uint64_t load_bias = 0;
  uint64_t start = 0;  // lowest mapped address
  uint64_t end = 0;    // one past the highest
  // The span of its executable mappings (0, 0: none seen): where return addresses into it lie.
  uint64_t code_start = 0, code_end = 0;
};

// One line of /proc/PID/maps.
struct MapsLine {
  uint64_t start = 0;
  uint64_t end = 0;
  bool executable = false;
  uint64_t offset = 0;
  std::string path;  // empty for anonymous memory
};

// Parses one line; false when it is not a maps line.
bool ParseMapsLine(std::string_view line, MapsLine* out);

// What an ELF file says about where its segments go, read once per file.
struct ElfLayout {
  bool is_elf = false;
  std::string build_id;
  struct Load {
    uint64_t offset, vaddr, file_size;
  };
  std::vector<Load> loads;  // PT_LOAD segments
};

// Reads the program headers (and the GNU build-id note) of an ELF file.
ElfLayout ReadElfLayout(const std::string& path);

// The load bias of a file mapped at `start` from file offset `offset`: the PT_LOAD that
// holds the offset says which virtual address the file meant for it.
bool LoadBias(const ElfLayout& layout, uint64_t start, uint64_t offset, uint64_t* bias);

// The whole of a small file (a /proc file: maps, cmdline, stat), or "" when it cannot be
// read. Never throws: std::ifstream does when read(2) fails, as it does for the /proc files
// of a process that is exiting.
std::string ReadSmallFile(const std::string& path);

// Reads /proc/PID/maps into one MappedModule per mapped ELF file (and the vDSO); files are
// read once and kept in `cache` (keyed by path), which may be shared by many calls.
// Empty when the process is gone.
std::vector<MappedModule> ReadProcessModules(uint32_t pid, std::map<std::string, ElfLayout>& cache);

}  // namespace gpuperf::ebpf
