#include "cli/command_lookup.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace gpuperf::cli {
namespace {

enum class Found { kRunnable, kDirectory, kNotExecutable, kNoAccess, kMissing };

// What exec would make of `path`.
Found LookUpPath(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno == EACCES ? Found::kNoAccess : Found::kMissing;
  if (S_ISDIR(st.st_mode)) return Found::kDirectory;
  if (S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0) return Found::kRunnable;
  return Found::kNotExecutable;
}

struct Located {
  Found found = Found::kMissing;
  std::string path;  // where; empty when nowhere
};

// execvp's search: the first runnable file on PATH, else the first thing found there (its
// error is the one exec would give).
Located Locate(const std::string& command) {
  if (command.find('/') != std::string::npos) return {LookUpPath(command), command};
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/bin:/bin";
  Located best;
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t colon = dirs.find(':', start);
    if (colon == std::string::npos) colon = dirs.size();
    // An empty entry is the current directory.
    const std::string dir = colon > start ? dirs.substr(start, colon - start) : std::string(".");
    const std::string candidate = dir + "/" + command;
    const Found found = LookUpPath(candidate);
    if (found == Found::kRunnable) return {found, candidate};
    // A directory on PATH named like the command is skipped by execvp, as one we cannot search.
    if (found == Found::kNotExecutable && best.path.empty()) best = {found, candidate};
    start = colon + 1;
  }
  return best;
}

// The interpreter named by a script's "#!" line; nullopt when the file is not a script.
std::optional<std::string> ScriptInterpreter(int fd) {
  char head[256];
  const ssize_t n = pread(fd, head, sizeof(head) - 1, 0);
  if (n < 2 || head[0] != '#' || head[1] != '!') return std::nullopt;
  const std::string line(head + 2, static_cast<size_t>(n) - 2);
  const size_t begin = line.find_first_not_of(" \t");
  if (begin == std::string::npos || line[begin] == '\n') return std::string();
  const size_t end = line.find_first_of(" \t\n", begin);
  return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The dynamic loader an ELF program names (PT_INTERP); nullopt for any other file, and for
// static programs.
std::optional<std::string> ElfInterpreter(int fd) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr) return std::nullopt;
  std::optional<std::string> interpreter;
  size_t count = 0;
  if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &count) == 0) {
    size_t file_size = 0;
    const char* image = elf_rawfile(elf, &file_size);
    for (size_t i = 0; i < count && !interpreter; ++i) {
      GElf_Phdr header;
      if (gelf_getphdr(elf, static_cast<int>(i), &header) == nullptr ||
          header.p_type != PT_INTERP || image == nullptr || header.p_offset >= file_size) {
        continue;
      }
      const size_t length = std::min<size_t>(header.p_filesz, file_size - header.p_offset);
      interpreter = std::string(image + header.p_offset, strnlen(image + header.p_offset, length));
    }
  }
  elf_end(elf);
  return interpreter;
}

// exec of a file found runnable fails with ENOENT when what runs it is missing.
std::optional<std::string> MissingInterpreter(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // execute-only: exec will tell
  std::optional<std::string> interpreter = ScriptInterpreter(fd);
  if (!interpreter) interpreter = ElfInterpreter(fd);
  close(fd);
  // "#!" alone: exec refuses it (ENOEXEC) and execvp hands the file to /bin/sh.
  if (!interpreter || interpreter->empty() || access(interpreter->c_str(), X_OK) == 0) {
    return std::nullopt;
  }
  return interpreter;
}

}  // namespace

CommandCheck CheckCommand(const std::string& command) {
  const Located located = Locate(command);
  const std::string& path = located.path;
  switch (located.found) {
    case Found::kRunnable:
      break;
    case Found::kMissing:
      return {127, "command not found: " + command};
    case Found::kNoAccess:
      return {126, "cannot reach " + command + ": permission denied on a directory of its path"};
    case Found::kDirectory:
      return {126, command + " is a directory, not a program"};
    case Found::kNotExecutable:
      return {126, path + " is not executable (not a file with execute permission)"};
  }
  if (std::optional<std::string> interpreter = MissingInterpreter(path)) {
    return {126, "interpreter " + *interpreter + " of " + command + " not found"};
  }
  return {};
}

}  // namespace gpuperf::cli
