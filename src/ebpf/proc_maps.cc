#include "ebpf/proc_maps.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpuperf::ebpf {
namespace {

bool ReadAt(std::ifstream& file, uint64_t offset, void* out, size_t size) {
  file.seekg(static_cast<std::streamoff>(offset));
  file.read(static_cast<char*>(out), static_cast<std::streamsize>(size));
  return static_cast<size_t>(file.gcount()) == size;
}

std::string Hex(const unsigned char* bytes, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 15];
  }
  return out;
}

// The GNU build-id in a PT_NOTE segment, if it has one.
std::string BuildIdInNotes(std::ifstream& file, uint64_t offset, uint64_t size) {
  if (size > (1 << 16)) return {};
  std::vector<unsigned char> notes(size);
  if (!ReadAt(file, offset, notes.data(), notes.size())) return {};
  size_t at = 0;
  while (at + sizeof(Elf64_Nhdr) <= notes.size()) {
    Elf64_Nhdr header;
    std::memcpy(&header, &notes[at], sizeof(header));
    at += sizeof(header);
    const size_t name_size = (header.n_namesz + 3) & ~size_t{3};
    const size_t desc_size = (header.n_descsz + 3) & ~size_t{3};
    if (at + name_size + header.n_descsz > notes.size()) break;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        std::memcmp(&notes[at], "GNU", 4) == 0) {
      return Hex(&notes[at + name_size], header.n_descsz);
    }
    at += name_size + desc_size;
  }
  return {};
}

}  // namespace

bool ParseMapsLine(std::string_view line, MapsLine* out) {
  // "start-end perms offset dev inode   path"
  unsigned long long start = 0, end = 0, offset = 0, inode = 0;
  char perms[8] = {};
  char dev[32] = {};
  int path_at = 0;
  const std::string text(line);
  if (std::sscanf(text.c_str(), "%llx-%llx %7s %llx %31s %llu %n", &start, &end, perms, &offset,
                  dev, &inode, &path_at) < 6) {
    return false;
  }
  out->start = start;
  out->end = end;
  out->offset = offset;
  out->executable = std::strlen(perms) >= 3 && perms[2] == 'x';
  out->path = path_at > 0 && static_cast<size_t>(path_at) <= text.size() ? text.substr(path_at)
                                                                         : std::string();
  while (!out->path.empty() && (out->path.back() == '\n' || out->path.back() == ' ')) {
    out->path.pop_back();
  }
  return true;
}

ElfLayout ReadElfLayout(const std::string& path) {
  ElfLayout layout;
  std::ifstream file(path, std::ios::binary);
  Elf64_Ehdr header;
  if (!file || !ReadAt(file, 0, &header, sizeof(header))) return layout;
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum > 256) {
    return layout;
  }
  layout.is_elf = true;
  for (uint16_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr ph;
    if (!ReadAt(file, header.e_phoff + uint64_t{i} * sizeof(ph), &ph, sizeof(ph))) break;
    if (ph.p_type == PT_LOAD) layout.loads.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
    if (ph.p_type == PT_NOTE && layout.build_id.empty()) {
      layout.build_id = BuildIdInNotes(file, ph.p_offset, ph.p_filesz);
    }
  }
  return layout;
}

bool LoadBias(const ElfLayout& layout, uint64_t start, uint64_t offset, uint64_t* bias) {
  // The mapping puts file offset `offset` at `start`; a segment wants file offset
  // load.offset at load.vaddr (plus the bias). A mapping starts at the page of its
  // segment's file offset, which may also lie inside the segment before: that match first.
  auto from = [&](const ElfLayout::Load& load) {
    *bias = start + (load.offset - offset) - load.vaddr;
    return true;
  };
  for (const ElfLayout::Load& load : layout.loads) {
    if ((load.offset & ~uint64_t{0xfff}) == offset) return from(load);
  }
  for (const ElfLayout::Load& load : layout.loads) {
    if (offset >= load.offset && offset < load.offset + load.file_size) return from(load);
  }
  return false;
}

std::string ReadSmallFile(const std::string& path) {
  std::string text;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

std::vector<MappedModule> ReadProcessModules(uint32_t pid,
                                             std::map<std::string, ElfLayout>& cache) {
  std::vector<MappedModule> modules;
  std::istringstream maps(ReadSmallFile("/proc/" + std::to_string(pid) + "/maps"));
  std::string line;
  std::map<std::string, size_t> index;  // path -> modules entry
  while (std::getline(maps, line)) {
    MapsLine m;
    if (!ParseMapsLine(line, &m) || m.path.empty()) continue;
    if (m.path == "[vdso]") {
      // In memory only: named by module and offset ("[vdso]+0x...").
      modules.push_back({m.path, "", m.start, m.start, m.end, m.start, m.end});
      continue;
    }
    if (m.path[0] != '/') continue;  // [heap], [stack], ...
    auto [it, added] = index.emplace(m.path, modules.size());
    if (added) {
      auto layout = cache.find(m.path);
      if (layout == cache.end()) layout = cache.emplace(m.path, ReadElfLayout(m.path)).first;
      uint64_t bias = 0;
      if (!layout->second.is_elf || !LoadBias(layout->second, m.start, m.offset, &bias)) {
        index.erase(it);
        continue;
      }
      modules.push_back({m.path, layout->second.build_id, bias, m.start, m.end});
      if (m.executable) {
        modules.back().code_start = m.start;
        modules.back().code_end = m.end;
      }
      continue;
    }
    MappedModule& module = modules[it->second];
    module.start = std::min(module.start, m.start);
    module.end = std::max(module.end, m.end);
    if (m.executable) {
      module.code_start = module.code_end == 0 ? m.start : std::min(module.code_start, m.start);
      module.code_end = std::max(module.code_end, m.end);
    }
  }
  return modules;
}

}  // namespace gpuperf::ebpf
