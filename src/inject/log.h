// Logging from inside someone else's process: one line per event kind at most, to
// stderr, prefixed "gpuperf:". GPUPERF_LOG=quiet silences it, =verbose adds detail.
#pragma once

namespace gpuperf::inject {

enum class LogLevel { kQuiet = 0, kNormal = 1, kVerbose = 2 };

void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Where the lines go (stderr by default). An attach window sends them to a file that
// `gpuperf attach` prints, so the program's own stderr stays as it was.
// Returns once no line is being written to the descriptor it replaces (it may be closed then).
void SetLogFd(int fd);

// printf-style; prints at most once per call site key (the format string's address).
void LogOnce(const char* format, ...) __attribute__((format(printf, 1, 2)));
// As LogOnce, once per `key` rather than per format (many messages, one format).
void LogOnceFor(const void* key, const char* format, ...) __attribute__((format(printf, 2, 3)));
// printf-style; only with GPUPERF_LOG=verbose.
void LogVerbose(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace gpuperf::inject
