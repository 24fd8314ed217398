// Loads the injection library into a running process and calls its attach entry point, from
// one of the process's own threads (docs/attach.md, "How it works"):
//
//  1. The attach lock: an exclusive flock on /proc/PID/mem, so no two gpuperf attach
//     write into one process at once.
//  2. A thread waiting in a restartable system call, outside the loader, the allocator and
//     CUDA (safe_point.h), is seized and interrupted; no other thread is stopped.
//  3. The stub (remote_stub.h) is written into unused padding at the end of a library's code;
//     the thread's registers point at it; it runs. From here on the thread needs nothing of
//     gpuperf: the stub puts it back by itself, wherever gpuperf stops.
//  4. gpuperf follows the thread's system calls to the stub's marker, reads the results there
//     and lets the thread go.
//
// Abandoned at any step (an error, gpuperf killed), the thread resumes as it was: before step
// 3 the kernel restarts its system call when ptrace lets go; after it, the stub does.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "attach/target.h"
#include "gpuperf/status.h"

namespace gpuperf::attach {

struct InjectOptions {
  std::string library;   // the path the target dlopens
  std::string settings;  // gpuperf_attach_start's argument
  uint64_t safe_point_timeout_ms = 5000;
  uint64_t call_timeout_ms = 60000;  // dlopen and the entry point together
};

struct InjectOutcome {
  // gpuperf_attach_start's answer (gpuperf/attach_protocol.h), or kNoLibrary (dlopen failed:
  // `load_error` says why) or kNoEntryPoint.
  int start_result = 0;
  std::string load_error;
  pid_t thread = 0;  // the thread that was borrowed
  std::string how;   // where it was: "waiting in system call 202", "running"
  // How long the thread was away from the program's own work: from its stop to its release
  // at the marker, the library's loading and gpuperf_attach_start included.
  uint64_t stopped_us = 0;
};
inline constexpr int kNoLibrary = -1;
// gpuperf built for another architecture: why attach is refused there.
inline constexpr char kOnlyOnX86_64[] =
    "gpuperf attach runs on x86-64 Linux only: its loader is x86-64 code, and this gpuperf "
    "was built for another architecture (use gpuperf record there)";
inline constexpr int kNoEntryPoint = -2;

// kNotFound: the process exited meanwhile. Any other error is one line of what stopped it.
Result<InjectOutcome> LoadAndStart(const Target& target, const InjectOptions& options);

}  // namespace gpuperf::attach
