#include "inject/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "base/file_size_limit.h"

namespace gpuperf::inject {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kNormal)};

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
  ssize_t ignored = ::write(STDERR_FILENO, line, len + 1);
  (void)ignored;
}

}  // namespace

void SetLogLevel(LogLevel level) {
  g_level.store(static_cast<int>(level));
}
LogLevel GetLogLevel() {
  return static_cast<LogLevel>(g_level.load());
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
