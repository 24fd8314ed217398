#include "cli/unwritten_trace.h"

#include <sys/statvfs.h>

#include <cstdint>

#include "base/file_size_limit.h"
#include "base/units.h"
#include "gpuperf/records.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::cli {
namespace {

// Below this, the limit or the free space is the likely reason: a trace's first chunks and
// its end take a few KiB.
constexpr uint64_t kTooSmall = 1 << 20;

}  // namespace

bool TraceFilesHoldNothing(const std::string& dir) {
  // The process records only: every other chunk is skipped unread.
  constexpr uint16_t kProcessChunk[] = {1};
  RecordSink ignore;
  ReadReport report;
  const Status status = ReadTraceChunks(dir, kProcessChunk, ignore, &report);
  if (!status.ok()) {
    // Empty files, or files cut inside their header; other errors are the summary's to say.
    return status.code() == StatusCode::kNotATrace || status.code() == StatusCode::kCorrupt;
  }
  return report.files_without_chunks == report.files;
}

std::string FullFileSystem(const std::string& dir) {
  struct statvfs fs;
  if (statvfs(dir.c_str(), &fs) != 0) return "";
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes < kTooSmall) {
    return "the file system of " + dir + " is full (" + FormatBytes(free_bytes) + " free)";
  }
  if (fs.f_files != 0 && fs.f_favail == 0)
    return "the file system of " + dir + " has no free inodes";
  return "";
}

std::string DescribeUnwrittenTrace(const std::string& dir) {
  std::string why = FullFileSystem(dir);
  const uint64_t limit = FileSizeLimit();
  if (why.empty() && limit < kTooSmall) {
    why = "the file size limit (ulimit -f) is " + FormatBytes(limit);
  }
  if (why.empty()) why = "its files in " + dir + " hold no records";
  return "gpuperf: the trace could not be written: " + why +
         " (the program's gpuperf line says what failed)\n";
}

}  // namespace gpuperf::cli
