#include "attach/elf_image.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "symbolize/dynamic_symbols.h"

namespace gpuperf::attach {
namespace {

constexpr uint64_t kPage = 4096;

uint64_t PageDown(uint64_t value) {
  return value & ~(kPage - 1);
}

void ReadDynamicSymbols(Elf* elf, ElfImage& image) {
  ForEachDefinedDynamicSymbol(elf, [&image](const char* name, const GElf_Sym& symbol) {
    if (symbol.st_value == 0) return;
    // Several versions of one name (memcpy@GLIBC_2.2.5, memcpy@@GLIBC_2.14): the first seen
    // is kept; each is a whole function, which is all the safe-point check needs.
    ElfSymbol& kept = image.dynamic_symbols[name];
    if (kept.value == 0) kept = {symbol.st_value, symbol.st_size};
  });
}

}  // namespace

std::optional<uint16_t> ElfMachine(const std::string& path, bool* wide) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  unsigned char ident[20] = {};
  const ssize_t n = pread(fd, ident, sizeof(ident), 0);
  close(fd);
  if (n != static_cast<ssize_t>(sizeof(ident)) || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return std::nullopt;
  }
  if (wide != nullptr) *wide = ident[EI_CLASS] == ELFCLASS64;
  const bool little = ident[EI_DATA] == ELFDATA2LSB;
  return static_cast<uint16_t>(little ? ident[18] | ident[19] << 8 : ident[18] << 8 | ident[19]);
}

Result<ElfImage> ReadElfImage(const std::string& path, bool symbols) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(StatusCode::kIoError, "cannot open " + path + ": " + std::strerror(errno));
  }
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  GElf_Ehdr header;
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &header) == nullptr) {
    if (elf != nullptr) elf_end(elf);
    close(fd);
    return Error(StatusCode::kIoError, path + " is not an ELF file");
  }
  ElfImage image;
  image.machine = header.e_machine;
  image.wide = gelf_getclass(elf) == ELFCLASS64;
  size_t count = 0;
  if (elf_getphdrnum(elf, &count) == 0) {
    for (size_t i = 0; i < count; ++i) {
      GElf_Phdr program;
      if (gelf_getphdr(elf, static_cast<int>(i), &program) == nullptr ||
          program.p_type != PT_LOAD) {
        continue;
      }
      image.loads.push_back({program.p_vaddr, program.p_offset, program.p_filesz, program.p_memsz,
                             (program.p_flags & PF_X) != 0});
    }
  }
  if (symbols) ReadDynamicSymbols(elf, image);
  elf_end(elf);
  close(fd);
  return image;
}

std::optional<uint64_t> LoadBias(const ElfImage& image, const std::vector<Mapping>& file_mappings) {
  if (image.loads.empty()) return std::nullopt;
  for (const Mapping& m : file_mappings) {
    if (m.offset == 0) return m.start - PageDown(image.loads.front().vaddr);
  }
  return std::nullopt;
}

Padding ExecutablePadding(const ElfImage& image, uint64_t bias, const Mapping& m) {
  for (const LoadSegment& load : image.loads) {
    if (!load.executable || PageDown(load.offset) != m.offset) continue;
    if (bias + PageDown(load.vaddr) != m.start) continue;  // another load of the same offset
    const uint64_t used_end = bias + load.vaddr + load.file_bytes;
    const uint64_t begin = (used_end + 15) & ~uint64_t{15};
    if (load.memory_bytes != load.file_bytes || begin >= m.end) return {};
    return {begin, m.end};
  }
  return {};
}

}  // namespace gpuperf::attach
