// Append-only writer of one trace file (one per recorded process).
//
// Records are buffered per type and written as typed, length-prefixed, checksummed,
// zstd-compressed chunks. Strings and stacks are interned: the chunk that defines an
// id is always written before any chunk that uses it, so a reader can stream. A file
// cut off at any point still holds every chunk written before the cut. A chunk is written
// whole or not at all (format/trace_room.h): on a full disk the file still reads, the chunks
// left out are counted (TraceWriterStats), and room is kept for the trace's end.
//
// Not thread-safe: feed it from one thread (the injection library's writer thread).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "gpuperf/records.h"
#include "gpuperf/stats.h"
#include "gpuperf/status.h"

namespace gpuperf {

struct TraceWriterOptions {
  // Records of one type buffered before a chunk is written.
  uint32_t records_per_chunk = 32768;
  // zstd level: 1 is fast enough for the injection library's writer thread.
  int compression_level = 1;
};

struct TraceWriterStats {
  uint64_t chunks_written = 0;
  uint64_t bytes_written = 0;
  uint64_t records_written = 0;
  // Chunks not written (a full disk, the file size limit, an I/O error) and the records in
  // them by chunk type (records.h, format/file_format.h). Counter snapshots (stats chunks)
  // are not counted: the next one holds every value.
  uint64_t write_errors = 0;
  std::array<uint64_t, kNotWrittenKinds> records_not_written = {};
};

class TraceWriter {
 public:
  // Creates (truncates) the file and writes the header. The writer holds the file's lock
  // (gpuperf/trace_lock.h) until Close: a file that another process still writes is
  // neither truncated nor written (kBusy).
  static Result<std::unique_ptr<TraceWriter>> Create(const std::string& path,
                                                     TraceWriterOptions options = {});
  // Adding to an existing trace needs its reader: AppendToTrace (gpuperf/trace_append.h).
  virtual ~TraceWriter() = default;

  // Returns the id of this string, adding it on first sight. Id 0 is the empty string.
  virtual StringId InternString(std::string_view text) = 0;

  // Defines a string under an id the caller chose (the injection library interns names
  // on CUPTI's thread). Ids must be unique and non-zero; do not mix with InternString.
  virtual void AddString(StringId id, std::string_view text) = 0;

  // Adds a stack under the id the caller chose (the injection library interns stacks
  // itself). Ids must be unique within the file and non-zero.
  virtual void AddStack(const StackRecord& stack) = 0;
  virtual void AddSymbol(const SymbolRecord& symbol) = 0;
  // Code ids are the caller's (the injection library's code table), unique per pid.
  virtual void AddPythonCode(const PythonCodeRecord& code) = 0;
  // PC sampling (chunk type 35): samples, the cubins they point into, and their lines.
  virtual void AddPcSample(const PcSampleRecord& sample) = 0;
  virtual void AddCubin(const CubinRecord& cubin) = 0;
  virtual void AddSassLine(const SassLineRecord& line) = 0;

#define GPUPERF_WRITER_ADD(Type, name, plural, number) \
  virtual void Add(const Type##Record& record) = 0;
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_WRITER_ADD)
#undef GPUPERF_WRITER_ADD

  // Writes a record chunk that format::FrameChunk framed, as it is, after the definitions
  // added so far (the flight recorder keeps its records as such chunks). The strings and
  // stacks it names must be this file's.
  virtual void AddChunk(std::string_view chunk) = 0;

  // Writes every buffered record. Safe to call often: empty buffers write nothing.
  virtual Status Flush() = 0;
  // Flushes and closes. The writer is unusable afterwards.
  virtual Status Close() = 0;

  virtual const TraceWriterStats& stats() const = 0;
};

}  // namespace gpuperf
