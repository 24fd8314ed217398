// Streaming reader of a trace file, or of a directory of per-process trace files read
// as one trace.
//
// Ids are remapped while reading so that they are unique across all files of a
// directory: the sink sees every string and stack (with its global id) before any
// record that uses it. Damage is survived, not fatal: a chunk that fails its checksum
// is skipped and counted, a file cut off mid-chunk yields every complete chunk and a
// warning. Only input that is not a trace at all, or of a format version we cannot
// read, is an error. A file that a process still writes (gpuperf/trace_lock.h) is read as
// far as it is written and said to be still being recorded; nothing of it counts as lost.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/records.h"
#include "gpuperf/status.h"

namespace gpuperf {

// Receives batches of records in file order. Override what you need.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void OnString(StringId id, std::string_view text) {}
  virtual void OnStack(const StackRecord& stack) {}
  virtual void OnSymbol(const SymbolRecord& symbol) {}
  virtual void OnPythonCode(const PythonCodeRecord& code) {}
  virtual void OnPcSample(const PcSampleRecord& sample) {}
  virtual void OnCubin(const CubinRecord& cubin) {}
  virtual void OnSassLine(const SassLineRecord& line) {}
#define GPUPERF_SINK_ON(Type, name, plural, number) \
  virtual void On##Type(std::span<const Type##Record> records) {}
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_SINK_ON)
#undef GPUPERF_SINK_ON
};

// What the reader saw, including every recoverable problem.
struct ReadReport {
  uint32_t files = 0;
  uint32_t format_version = 0;
  uint64_t chunks_read = 0;
  uint64_t chunks_corrupt = 0;   // failed checksum or decoding: skipped
  uint64_t chunks_unknown = 0;   // types from a newer gpuperf: skipped
  uint64_t bytes_truncated = 0;  // bytes at the end of a file that were not a whole chunk
  uint64_t records_read = 0;
  uint32_t files_skipped = 0;         // files of a directory that could not be read at all
  uint32_t files_without_chunks = 0;  // files with a header but no complete chunk
  uint32_t files_duplicate = 0;  // files of a directory left out: a link to or a copy of another
  uint64_t chunks_repeated = 0;  // byte-for-byte repeats of an earlier chunk of the file: left out
  uint32_t max_local_string_id = 0;   // highest string id a file defined (for appending)
  uint64_t complete_bytes = 0;        // bytes of the last file up to its last whole chunk
  std::vector<std::string> warnings;  // one line each, for humans
  // Files that a process still writes: read up to their last complete chunk. `pid` is that
  // of the file's process record, else the one its name holds (0: unknown).
  struct BeingRecorded {
    std::string path;
    uint32_t pid = 0;
    bool operator==(const BeingRecorded&) const = default;
  };
  std::vector<BeingRecorded> being_recorded;
  bool StillRecording(uint32_t pid) const {
    for (const BeingRecorded& file : being_recorded) {
      if (file.pid == pid) return true;
    }
    return false;
  }
  bool operator==(const ReadReport&) const = default;
};

// How a trace is read.
struct ReadOptions {
  // Only the chunks of these types (record type numbers of records.h, or format chunk
  // types) and the strings they name; empty: every chunk. Other chunks are skipped unread
  // and unchecked.
  std::span<const uint16_t> chunk_types;
  // Threads that check, decompress and decode chunks, the calling thread included. 0: one
  // per processor this process may run on, or GPUPERF_READ_THREADS when set. Whatever the
  // number, the sink is called on the calling thread only, in file order, with the same
  // records: every output is the same with 1 thread or 64.
  unsigned threads = 0;
  // Of a directory, only the files whose first process record has this pid (and those with
  // none): one process of a run read without the others' files. Each process writes a
  // file of its own, so nothing of the process is missed; what the other files hold,
  // their damage included, is not read at all. Unset: every file.
  std::optional<uint32_t> only_process;
};

// The reading threads ReadOptions{.threads = 0} stands for.
unsigned DefaultReadThreads();

// Reads FILE or every *.gpt file in DIR (sorted by name) into the sink. Of a directory, each
// file and each process's trace is read once (format/trace_directory.h says which are left
// out, with a warning).
Status ReadTrace(const std::string& path, RecordSink& sink, ReadReport* report);

// Reads FILE or DIR like ReadTrace, but only the chunks of `chunk_types` (record type
// numbers of records.h, or format chunk types) and the strings they name: a quick look at
// the small record kinds (processes, ranks, clocks) of a large trace. Other chunks are
// skipped unread and unchecked.
Status ReadTraceChunks(const std::string& path, std::span<const uint16_t> chunk_types,
                       RecordSink& sink, ReadReport* report);

// ReadTrace and ReadTraceChunks with every option.
Status ReadTraceWith(const std::string& path, const ReadOptions& options, RecordSink& sink,
                     ReadReport* report);

// How many records the whole chunks of FILE or DIR hold, by chunk type (record type numbers
// of records.h, or format chunk types), as their headers say: a walk over the headers
// alone, nothing decompressed, checked or decoded. What a read may meet, not what it
// delivers (a damaged chunk still counts here).
Result<std::map<uint16_t, uint64_t>> CountChunkRecords(const std::string& path);

// Reads trace bytes already in memory (the fuzz target and tests use this).
Status ReadTraceBytes(std::span<const uint8_t> bytes, std::string_view display_name,
                      RecordSink& sink, ReadReport* report, const ReadOptions& options = {});

}  // namespace gpuperf
