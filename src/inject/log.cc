#include "inject/log.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "base/file_size_limit.h"

namespace gpuperf::inject {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kNormal)};
std::atomic<int> g_fd{STDERR_FILENO};
// Lines being written now: SetLogFd waits for them, so that a descriptor given up can be
// closed without a late line landing in whatever file the program opens next under its number.
std::atomic<int> g_writing{0};

// Call sites that already printed: a small lock-free set of format-string addresses.
constexpr int kMaxKeys = 64;
std::atomic<const void*> g_printed[kMaxKeys];

bool FirstTime(const void* key) {
  for (auto& slot : g_printed) {
    const void* current = slot.load(std::memory_order_acquire);
    if (current == key) return false;
    if (current == nullptr) {
      const void* expected = nullptr;
      if (slot.compare_exchange_strong(expected, key)) return true;
      if (expected == key) return false;
    }
  }
  return false;  // table full: stay quiet rather than flood the app's stderr
}

void Emit(const char* format, va_list args) {
  char line[512];
  int n = std::snprintf(line, sizeof(line), "gpuperf[%d]: ", static_cast<int>(getpid()));
  if (n < 0) return;
  int m = std::vsnprintf(line + n, sizeof(line) - n - 1, format, args);
  if (m < 0) return;
  size_t len = std::min(sizeof(line) - 2, static_cast<size_t>(n + m));
  line[len] = '\n';
  // One write() so lines from several processes do not interleave. Past the file size limit
  // (stderr sent to a file), the line is lost, not the program.
  FileSizeSignalGuard no_signal;
  // Counted before the descriptor is read (both sequentially consistent): SetLogFd, which
  // replaces it first and counts after, either waits for this line or this line sees the new one.
  g_writing.fetch_add(1);
  const int fd = g_fd.load();
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, line, len + 1);
    (void)ignored;
  }
  g_writing.fetch_sub(1);
}

}  // namespace

void SetLogLevel(LogLevel level) {
  g_level.store(static_cast<int>(level));
}
LogLevel GetLogLevel() {
  return static_cast<LogLevel>(g_level.load());
}
void SetLogFd(int fd) {
  g_fd.store(fd);
  // A line is one write() of at most 512 bytes: bounded anyway, never to hang a window's end.
  for (int spins = 0; g_writing.load() != 0 && spins < 100000; ++spins) sched_yield();
}

void LogOnce(const char* format, ...) {
  if (g_level.load() < static_cast<int>(LogLevel::kNormal) || !FirstTime(format)) return;
  va_list args;
  va_start(args, format);
  Emit(format, args);
  va_end(args);
}

void LogOnceFor(const void* key, const char* format, ...) {
  if (g_level.load() < static_cast<int>(LogLevel::kNormal) || !FirstTime(key)) return;
  va_list args;
  va_start(args, format);
  Emit(format, args);
  va_end(args);
}

void LogVerbose(const char* format, ...) {
  if (g_level.load() < static_cast<int>(LogLevel::kVerbose)) return;
  va_list args;
  va_start(args, format);
  Emit(format, args);
  va_end(args);
}

}  // namespace gpuperf::inject
