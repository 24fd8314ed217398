// The checks gpuperf attach makes before it touches a process (docs/attach.md,
// "Refusals"): each failure is one line saying what stands in the way and what fixes it, and
// the process has not been touched.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "attach/elf_image.h"
#include "attach/proc_view.h"
#include "gpuperf/status.h"

namespace gpuperf::attach {

// How to call dlopen in the target.
struct DlopenEntry {
  uint64_t dlopen = 0;
  uint64_t dlsym = 0;
  uint64_t dlerror = 0;  // 0 where unknown
  uint32_t mode = 0;
  std::string from;  // the library that has them
};

struct Target {
  pid_t pid = 0;
  std::string name;  // its command name
  TaskStatus status;
  std::vector<Mapping> mappings;
  DlopenEntry dlopen;
  // libc's image and bias, for the safe-point checks (the allocator's functions).
  ElfImage libc;
  uint64_t libc_bias = 0;
  bool has_libc = false;
  // The injection library already loaded by an earlier attach (its path as mapped), or empty.
  std::string loaded_library;
};

// Whether gpuperf may attach to `pid`, in the order a person would fix things: it exists,
// may be traced by us (owner, Yama's ptrace_scope, CAP_SYS_PTRACE in a container, a tracer
// already there), is an x86-64 program, is not recorded by `gpuperf record` or injected with
// another CUDA tool, has loaded libcuda, and has a dlopen to call. kNotFound: not running.
Result<Target> InspectTarget(pid_t pid);

// Why a program of ELF machine `machine` (64-bit: `wide`) is not one this gpuperf attaches
// to ("a 32-bit x86 program: gpuperf attach works with x86-64 programs"), or empty.
std::string ForeignProgram(uint16_t machine, bool wide);

// The path files of the target are read through (its own root: a container's files).
std::string TargetFile(pid_t pid, const std::string& path);

// The processes of user `uid` on this host that have loaded libcuda, but `except`.
std::vector<pid_t> CudaProcessesOf(uid_t uid, pid_t except);

}  // namespace gpuperf::attach
