// What /proc says about a process and its threads, read without touching them: the
// mappings, each thread's state and blocked system call, the owner, a tracer, the environment.
// The parsers take the files' text so that tests can feed them their own.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf::attach {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;
  bool readable = false;
  bool writable = false;
  bool executable = false;
  bool is_private = false;
  std::string path;  // a file, "[stack]", "[vdso]", ... or empty (anonymous)
};

std::vector<Mapping> ParseMappings(std::string_view maps_text);
// /proc/PID/maps; kNotFound when the process is gone.
Result<std::vector<Mapping>> ReadMappings(pid_t pid);
// The mapping holding `address`, or null.
const Mapping* MappingAt(const std::vector<Mapping>& mappings, uint64_t address);
// The file's name without its directories ("libcuda.so.1").
std::string BaseName(const std::string& path);

struct TaskStatus {
  std::string name;
  char state = '?';   // R, S, D, T, t, Z, X
  uid_t uid[4] = {};  // real, effective, saved, filesystem
  gid_t gid[4] = {};
  pid_t tracer = 0;
  uint64_t blocked_signals = 0;
  uint64_t effective_caps = 0;
};

TaskStatus ParseTaskStatus(std::string_view status_text);
// /proc/PID/task/TID/status (TID 0: /proc/PID/status).
Result<TaskStatus> ReadTaskStatus(pid_t pid, pid_t tid = 0);

// Whether process `pid` still runs: it exists and is not a zombie (a process that exited
// stays one until its parent reaps it, and still answers kill(pid, 0)).
bool ProcessRunning(pid_t pid);

// The process's threads, the main thread first.
std::vector<pid_t> ListThreads(pid_t pid);

// /proc/PID/task/TID/syscall: where a thread is.
struct SyscallState {
  bool running = false;     // on a CPU ("running"): its registers are moving
  bool in_syscall = false;  // blocked in system call `nr` (else blocked outside one: -1)
  int64_t nr = -1;
  uint64_t args[6] = {};
  uint64_t sp = 0;
  uint64_t pc = 0;
};
std::optional<SyscallState> ParseSyscallState(std::string_view text);
std::optional<SyscallState> ReadSyscallState(pid_t pid, pid_t tid);

// A variable of /proc/PID/environ (the environment the process started with), or nothing.
std::optional<std::string> EnvironmentValue(pid_t pid, std::string_view name);

// The target of /proc/PID/fd/FD ("pipe:[123]", "/dev/pts/3", "socket:[9]"; a named pipe as
// "pipe:PATH"), or empty.
std::string DescriptorTarget(pid_t pid, uint64_t fd);

// kernel.yama.ptrace_scope: 0 to 3, or -1 where Yama is not built in.
int YamaPtraceScope();

// `bytes` bytes of the process's memory at `address` (process_vm_readv); false if any is
// unreadable.
bool ReadProcessMemory(pid_t pid, uint64_t address, void* out, size_t bytes);

}  // namespace gpuperf::attach
