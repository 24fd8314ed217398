#include "gpuperf/trace_append.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/file_trace_writer.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

Result<std::unique_ptr<TraceWriter>> AppendToTrace(const std::string& path,
                                                   TraceWriterOptions options) {
  // Learn the file's highest string id: appended strings continue after it (the reader
  // merges equal texts, so a string written again under a new id costs only bytes).
  RecordSink ignore;
  ReadReport report;
  GP_RETURN_IF_ERROR(ReadTrace(path, ignore, &report));
  if (report.files != 1) return Error(StatusCode::kInvalidArgument, path + " is not one file");
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error(StatusCode::kIoError,
                 "cannot open " + path + " to append: " + std::strerror(errno));
  }
  if (::ftruncate(fd, static_cast<off_t>(report.complete_bytes)) != 0 ||
      ::lseek(fd, 0, SEEK_END) < 0) {
    ::close(fd);
    return Error(StatusCode::kIoError, "cannot append to " + path + ": " + std::strerror(errno));
  }
  return format::WriterOnOpenFile(fd, options, report.max_local_string_id + 1);
}

}  // namespace gpuperf
