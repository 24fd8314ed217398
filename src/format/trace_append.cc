#include "gpuperf/trace_append.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/file_format.h"
#include "format/file_trace_writer.h"
#include "format/mapped_file.h"
#include "gpuperf/trace_lock.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {
namespace {

// The pid in the process record of a trace file someone writes (its name holds none).
uint32_t WriterOfTrace(const std::string& path) {
  constexpr uint16_t kProcessChunk = format::kProcessChunk;
  RecordSink ignore;
  ReadReport report;
  ReadTraceChunks(path, {&kProcessChunk, 1}, ignore, &report);
  return report.being_recorded.empty() ? 0 : report.being_recorded.front().pid;
}

}  // namespace

Result<std::unique_ptr<TraceWriter>> AppendToTrace(const std::string& path,
                                                   TraceWriterOptions options) {
  // Non-blocking: a FIFO is refused by the mapping, not waited on.
  int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return Error(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
                 "cannot open " + path + " to append: " + std::strerror(errno));
  }
  // Locked before it is read: from here until the writer closes, nobody else writes it,
  // and what is read is what the new chunks follow.
  Status locked = LockTraceFile(fd, path);
  if (!locked.ok()) {
    ::close(fd);
    if (locked.code() == StatusCode::kBusy && PidInTraceName(path) == 0) {
      return StillBeingRecorded(path, WriterOfTrace(path));
    }
    return locked;
  }
  // Learn the file's highest string id: appended strings continue after it (the reader
  // merges equal texts, so a string written again under a new id costs only bytes); and
  // where its last whole chunk ends. Only the strings are read for that: the other chunks
  // are walked past (after a run, `record` appends its symbols to a trace of millions of
  // records).
  RecordSink ignore;
  ReadReport report;
  Status read;
  {
    format::MappedFile file;
    read = file.Map(fd, path);
    constexpr uint16_t kStrings = format::kChunkStrings;
    ReadOptions strings_only;
    strings_only.chunk_types = {&kStrings, 1};
    if (read.ok()) read = ReadTraceBytes(file.bytes(), path, ignore, &report, strings_only);
  }
  if (!read.ok()) {
    ::close(fd);
    return read;
  }
  if (::ftruncate(fd, static_cast<off_t>(report.complete_bytes)) != 0 ||
      ::lseek(fd, 0, SEEK_END) < 0) {
    const int error = errno;
    ::close(fd);
    return Error(StatusCode::kIoError, "cannot append to " + path + ": " + std::strerror(error));
  }
  return format::WriterOnOpenFile(fd, options, report.max_local_string_id + 1);
}

}  // namespace gpuperf
