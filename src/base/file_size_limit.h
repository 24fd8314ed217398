// The file size limit (RLIMIT_FSIZE, the shell's `ulimit -f`) and its signal. A write or
// ftruncate past the limit fails with EFBIG and also raises SIGXFSZ, whose default action ends
// the process: gpuperf's own files must never be what ends a program that runs fine alone.
#pragma once

#include <signal.h>

#include <cstdint>

namespace gpuperf {

// The calling process's soft limit in bytes; UINT64_MAX when there is none.
uint64_t FileSizeLimit();

// While one lives, a write past the limit on this thread only fails (EFBIG): SIGXFSZ is
// blocked, and one that such a write raised is taken back before the old mask returns.
// Async-signal-safe (the injection library logs from signal handlers).
class FileSizeSignalGuard {
 public:
  FileSizeSignalGuard();
  ~FileSizeSignalGuard();
  FileSizeSignalGuard(const FileSizeSignalGuard&) = delete;
  FileSizeSignalGuard& operator=(const FileSizeSignalGuard&) = delete;

 private:
  sigset_t old_mask_;
  bool was_pending_ = false;  // someone else's SIGXFSZ, left as it was
};

}  // namespace gpuperf
