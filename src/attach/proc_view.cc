#include "attach/proc_view.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace gpuperf::attach {
namespace {

std::string ProcPath(pid_t pid, pid_t tid, const char* file) {
  std::string path = "/proc/" + std::to_string(pid);
  if (tid != 0) path += "/task/" + std::to_string(tid);
  return path + "/" + file;
}

// The whole file, or nothing when it cannot be opened (errno says why).
std::optional<std::string> ReadWhole(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) return std::nullopt;
  std::string text;
  char chunk[4096];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0) text.append(chunk, n);
  std::fclose(file);
  return text;
}

Status Unreadable(pid_t pid, const std::string& path) {
  if (errno == ENOENT || errno == ESRCH) {
    return Error(StatusCode::kNotFound, "no process " + std::to_string(pid) + " is running");
  }
  return Error(StatusCode::kIoError, "cannot read " + path + ": " + std::strerror(errno));
}

uint64_t Hex(std::string_view text) {
  return std::strtoull(std::string(text).c_str(), nullptr, 16);
}

}  // namespace

std::vector<Mapping> ParseMappings(std::string_view maps_text) {
  std::vector<Mapping> mappings;
  std::istringstream lines{std::string(maps_text)};
  std::string line;
  while (std::getline(lines, line)) {
    // start-end perms offset dev inode [path]
    char perms[8] = {};
    unsigned long long start = 0, end = 0, offset = 0, inode = 0;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %llu %n", &start, &end, perms, &offset,
                    &inode, &path_at) < 5) {
      continue;
    }
    Mapping m;
    m.start = start;
    m.end = end;
    m.offset = offset;
    m.readable = perms[0] == 'r';
    m.writable = perms[1] == 'w';
    m.executable = perms[2] == 'x';
    m.is_private = perms[3] == 'p';
    if (path_at > 0 && static_cast<size_t>(path_at) < line.size()) m.path = line.substr(path_at);
    mappings.push_back(std::move(m));
  }
  return mappings;
}

Result<std::vector<Mapping>> ReadMappings(pid_t pid) {
  const std::string path = ProcPath(pid, 0, "maps");
  std::optional<std::string> text = ReadWhole(path);
  if (!text) return Unreadable(pid, path);
  return ParseMappings(*text);
}

const Mapping* MappingAt(const std::vector<Mapping>& mappings, uint64_t address) {
  for (const Mapping& m : mappings) {
    if (address >= m.start && address < m.end) return &m;
  }
  return nullptr;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

TaskStatus ParseTaskStatus(std::string_view status_text) {
  TaskStatus status;
  std::istringstream lines{std::string(status_text)};
  std::string line;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (key == "Name") {
      status.name = value;
    } else if (key == "State") {
      status.state = value.empty() ? '?' : value[0];
    } else if (key == "Uid") {
      std::sscanf(value.c_str(), "%u %u %u %u", &status.uid[0], &status.uid[1], &status.uid[2],
                  &status.uid[3]);
    } else if (key == "Gid") {
      std::sscanf(value.c_str(), "%u %u %u %u", &status.gid[0], &status.gid[1], &status.gid[2],
                  &status.gid[3]);
    } else if (key == "TracerPid") {
      status.tracer = static_cast<pid_t>(std::atoi(value.c_str()));
    } else if (key == "SigBlk") {
      status.blocked_signals = Hex(value);
    } else if (key == "CapEff") {
      status.effective_caps = Hex(value);
    }
  }
  return status;
}

Result<TaskStatus> ReadTaskStatus(pid_t pid, pid_t tid) {
  const std::string path = ProcPath(pid, tid, "status");
  std::optional<std::string> text = ReadWhole(path);
  if (!text) return Unreadable(pid, path);
  return ParseTaskStatus(*text);
}

bool ProcessRunning(pid_t pid) {
  Result<TaskStatus> status = ReadTaskStatus(pid);
  return status.ok() && status->state != 'Z' && status->state != 'X';
}

std::vector<pid_t> ListThreads(pid_t pid) {
  std::vector<pid_t> threads;
  const std::string path = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return threads;
  while (const dirent* entry = readdir(dir)) {
    const long tid = std::strtol(entry->d_name, nullptr, 10);
    if (tid > 0) threads.push_back(static_cast<pid_t>(tid));
  }
  closedir(dir);
  std::sort(threads.begin(), threads.end(),
            [pid](pid_t a, pid_t b) { return (a == pid) != (b == pid) ? a == pid : a < b; });
  return threads;
}

std::optional<SyscallState> ParseSyscallState(std::string_view text) {
  SyscallState state;
  if (text.rfind("running", 0) == 0) {
    state.running = true;
    return state;
  }
  std::istringstream in{std::string(text)};
  std::vector<std::string> words{std::istream_iterator<std::string>(in),
                                 std::istream_iterator<std::string>()};
  if (words.empty()) return std::nullopt;
  state.nr = std::strtoll(words[0].c_str(), nullptr, 10);
  // "-1 SP PC" outside a system call; "NR A1..A6 SP PC" inside one.
  if (state.nr < 0) {
    if (words.size() < 3) return std::nullopt;
    state.sp = Hex(words[1]);
    state.pc = Hex(words[2]);
    return state;
  }
  if (words.size() < 9) return std::nullopt;
  state.in_syscall = true;
  for (int i = 0; i < 6; ++i) state.args[i] = Hex(words[1 + i]);
  state.sp = Hex(words[7]);
  state.pc = Hex(words[8]);
  return state;
}

std::optional<SyscallState> ReadSyscallState(pid_t pid, pid_t tid) {
  std::optional<std::string> text = ReadWhole(ProcPath(pid, tid, "syscall"));
  if (!text) return std::nullopt;
  return ParseSyscallState(*text);
}

std::optional<std::string> EnvironmentValue(pid_t pid, std::string_view name) {
  std::optional<std::string> text = ReadWhole(ProcPath(pid, 0, "environ"));
  if (!text) return std::nullopt;
  const std::string prefix = std::string(name) + "=";
  for (size_t at = 0; at < text->size();) {
    const size_t end = text->find('\0', at);
    const std::string_view entry(text->data() + at,
                                 (end == std::string::npos ? text->size() : end) - at);
    if (entry.substr(0, prefix.size()) == prefix) return std::string(entry.substr(prefix.size()));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return std::nullopt;
}

std::string DescriptorTarget(pid_t pid, uint64_t fd) {
  char target[PATH_MAX];
  const std::string link = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
  if (n <= 0) return "";
  const std::string path(target, static_cast<size_t>(n));
  // A named pipe reads as its path; it waits (and restarts) as an unnamed one does.
  struct stat object;
  if (path.rfind("pipe:", 0) != 0 && stat(link.c_str(), &object) == 0 && S_ISFIFO(object.st_mode)) {
    return "pipe:" + path;
  }
  return path;
}

int YamaPtraceScope() {
  std::optional<std::string> text = ReadWhole("/proc/sys/kernel/yama/ptrace_scope");
  return text ? std::atoi(text->c_str()) : -1;
}

bool ReadProcessMemory(pid_t pid, uint64_t address, void* out, size_t bytes) {
  iovec local = {out, bytes};
  iovec remote = {reinterpret_cast<void*>(address), bytes};
  return process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
}

}  // namespace gpuperf::attach
