#include "cli/injection_library.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "symbolize/dynamic_symbols.h"

namespace gpuperf::cli {
namespace {

namespace fs = std::filesystem;

// What libgpuperf_inject.so exports (src/inject/exports.map): CUDA's entry point for injected
// tools, and a symbol no other library has.
constexpr std::string_view kEntryPoint = "InitializeInjection";
constexpr std::string_view kMarker = "gpuperf_launch_marker";

#if defined(__x86_64__)
constexpr int kOurMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kOurMachine = EM_AARCH64;
#else
constexpr int kOurMachine = EM_NONE;  // not checked
#endif

std::string MachineName(int machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86-64";
    case EM_386:
      return "x86 (32-bit)";
    case EM_AARCH64:
      return "aarch64";
    case EM_ARM:
      return "arm (32-bit)";
    case EM_PPC64:
      return "ppc64";
    case EM_RISCV:
      return "riscv";
    default:
      return "machine " + std::to_string(machine);
  }
}

std::string ExecutableDir() {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return ".";
  return fs::path(std::string(path, n)).parent_path().string();
}

// The names of the symbols `elf` defines in its dynamic symbol table.
std::vector<std::string> DefinedDynamicSymbols(Elf* elf) {
  std::vector<std::string> names;
  ForEachDefinedDynamicSymbol(
      elf, [&names](const char* name, const GElf_Sym&) { names.emplace_back(name); });
  return names;
}

// What is wrong with the file's ELF header (read here, not by libelf, which refuses a header
// whose class does not match the rest); empty when it could be our library.
std::string JudgeHeader(int fd) {
  unsigned char ident[20] = {};  // e_ident, then e_type and e_machine: the same in both classes
  if (pread(fd, ident, sizeof(ident), 0) != static_cast<ssize_t>(sizeof(ident)) ||
      std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return "is not a shared library (not an ELF file)";
  }
  const bool little = ident[EI_DATA] == ELFDATA2LSB;
  const int type = little ? ident[16] | ident[17] << 8 : ident[16] << 8 | ident[17];
  const int machine = little ? ident[18] | ident[19] << 8 : ident[18] << 8 | ident[19];
  const bool wide = ident[EI_CLASS] == ELFCLASS64;
  if (kOurMachine != EM_NONE && (machine != kOurMachine || !wide || !little)) {
    std::string built = MachineName(machine);
    if (!wide && built.find("32-bit") == std::string::npos) built += " (32-bit)";
    if (!little) built += " (big-endian)";
    return "is built for " + built + ", not for " + MachineName(kOurMachine);
  }
  if (type != ET_DYN) {
    return type == ET_EXEC  ? "is a program, not a shared library"
           : type == ET_REL ? "is an object file, not a shared library"
                            : "is not a shared library";
  }
  return "";
}

// What is missing from the library's dynamic symbols; empty when it is our library.
std::string JudgeSymbols(Elf* elf) {
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) return "is a damaged ELF file";
  const std::vector<std::string> symbols = DefinedDynamicSymbols(elf);
  auto defines = [&](std::string_view name) {
    for (const std::string& symbol : symbols) {
      if (symbol == name) return true;
    }
    return false;
  };
  if (!defines(kEntryPoint)) {
    return "is not gpuperf's injection library: it exports no " + std::string(kEntryPoint) +
           " (pass the libgpuperf_inject.so built with this gpuperf)";
  }
  if (!defines(kMarker)) {
    return "is another CUDA tool's injection library, not gpuperf's (it exports no " +
           std::string(kMarker) + ")";
  }
  return "";
}

}  // namespace

Status CheckInjectionLibrary(const std::string& path, const std::string& name) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(StatusCode::kIoError, name + ": cannot open: " + std::strerror(errno));
  }
  std::string problem = JudgeHeader(fd);
  if (problem.empty()) {
    elf_version(EV_CURRENT);
    Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
    problem = JudgeSymbols(elf);
    if (elf != nullptr) elf_end(elf);
  }
  close(fd);
  if (problem.empty()) return Status::Ok();
  return Error(StatusCode::kInvalidArgument, name + " " + problem);
}

Result<std::string> FindInjectionLibrary(const std::string& explicit_path) {
  std::error_code ec;
  std::string chosen, name;
  if (!explicit_path.empty()) {
    chosen = explicit_path;
    name = "--inject-lib " + explicit_path;
  } else if (const char* env = std::getenv("GPUPERF_INJECT_LIB"); env && *env) {
    chosen = env;
    name = std::string("GPUPERF_INJECT_LIB=") + env;
  }
  if (!chosen.empty()) {
    if (fs::is_directory(chosen, ec)) {
      return Error(StatusCode::kInvalidArgument, name + " is a directory, not a library");
    }
    if (!fs::exists(chosen, ec)) return Error(StatusCode::kNotFound, name + ": no such file");
  } else {
    const std::string dir = ExecutableDir();
    for (const char* relative :
         {"/libgpuperf_inject.so", "/../lib/libgpuperf_inject.so",
          "/src/inject/libgpuperf_inject.so", "/../lib/gpuperf/libgpuperf_inject.so"}) {
      if (fs::is_regular_file(dir + relative, ec)) {
        chosen = dir + relative;
        break;
      }
    }
    if (chosen.empty()) {
      return Error(StatusCode::kNotFound,
                   "injection library libgpuperf_inject.so not found next to the gpuperf binary "
                   "(in " +
                       dir + "); pass --inject-lib PATH");
    }
    name = chosen;
  }
  GP_RETURN_IF_ERROR(CheckInjectionLibrary(chosen, name));
  return fs::canonical(chosen, ec).string();
}

}  // namespace gpuperf::cli
