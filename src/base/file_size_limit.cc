#include "base/file_size_limit.h"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

namespace gpuperf {
namespace {

sigset_t FileSizeSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGXFSZ);
  return set;
}

bool FileSizeSignalPending() {
  sigset_t pending;
  return sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
}

}  // namespace

uint64_t FileSizeLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return limit.rlim_cur;
}

FileSizeSignalGuard::FileSizeSignalGuard() {
  const sigset_t signal = FileSizeSignal();
  pthread_sigmask(SIG_BLOCK, &signal, &old_mask_);
  was_pending_ = FileSizeSignalPending();
}

FileSizeSignalGuard::~FileSizeSignalGuard() {
  const sigset_t signal = FileSizeSignal();
  if (!was_pending_ && FileSizeSignalPending()) {
    // The kernel sent it to this thread for a write of ours: take it before it is unblocked.
    const timespec now = {0, 0};
    sigtimedwait(&signal, nullptr, &now);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace gpuperf
