#include "gpuperf/trace_reader.h"

#include <zstd.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/ordered_work.h"
#include "format/chunk_view.h"
#include "format/file_format.h"
#include "format/gpu_profile_codec.h"
#include "format/mapped_file.h"
#include "format/record_codec.h"
#include "format/shared_read.h"
#include "format/trace_directory.h"
#include "gpuperf/trace_lock.h"

namespace gpuperf {
namespace {

std::string HumanBytes(uint64_t bytes) {
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(bytes));
  } else if (bytes < (1u << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  }
  return buf;
}

// Reads the files of one trace, sharing the global string and stack tables.
class Reader {
 public:
  Reader(RecordSink& sink, ReadReport& report, unsigned threads)
      : sink_(sink), report_(report), threads_(std::max(threads, 1u)) {
    // A chunk for each thread and two ready ahead of the sink.
    for (unsigned i = 0; i < threads_ + 2; ++i) slots_.push_back(std::make_unique<Slot>());
  }

  // Only these chunk types (and strings) from now on; empty: all.
  void Only(std::span<const uint16_t> chunk_types) {
    only_.assign(chunk_types.begin(), chunk_types.end());
  }

  // `being_written`: a process still writes the file (gpuperf/trace_lock.h), so a torn
  // last chunk is one it has not finished yet, and its end is still to come.
  // `mapping`, when given, is where `bytes` are: the pages of chunks taken up are let go.
  Status ReadBytes(std::span<const uint8_t> bytes, std::string_view name,
                   bool being_written = false, format::MappedFile* mapping = nullptr) {
    GP_RETURN_IF_ERROR(CheckHeader(bytes, name));
    ++report_.files;
    report_.format_version = format::kFormatVersion;
    string_map_.assign(1, 0);
    stack_map_.assign(1, 0);
    file_ = FileState{};
    file_.being_written = being_written;
    // Where the chunks are is found first, from their headers alone; then the chunks are
    // checked, decompressed and decoded on every reading thread, and what each held is
    // taken up here in file order: the ids, the counts, the warnings and the sink's calls
    // are those of reading one chunk after the other.
    size_t pos = WalkChunks(bytes);
    RunInOrder(
        steps_.size(), threads_ - 1, slots_.size(),
        [&](size_t i, size_t slot) { Prepare(steps_[i], *slots_[slot]); },
        [&](size_t i, size_t slot) {
          TakeUp(bytes, steps_[i], *slots_[slot], name);
          // The chunks after this one are all that is read from now on (but for the
          // rare comparison with an earlier chunk, which maps its bytes again).
          if (mapping != nullptr) mapping->ReleaseBefore(steps_[i].offset);
        });
    // On truncation the loop stops at the start of the torn chunk.
    report_.complete_bytes = std::min<size_t>(pos, bytes.size());
    if (file_.chunks == 0 && !being_written) {
      ++report_.files_without_chunks;
      report_.warnings.push_back(std::string(name) + " has no complete chunk: nothing recoverable");
    }
    if (file_.repeated > 0) {
      report_.warnings.push_back(
          std::string(name) + ": skipped " + std::to_string(file_.repeated) +
          (file_.repeated == 1 ? " chunk that repeats" : " chunks that repeat") +
          " an earlier one byte for byte (its records would count twice)");
    }
    WarnUnresolved(name);
    if (being_written) {
      const std::string path(name);
      const uint32_t pid = file_.pid != 0 ? file_.pid : PidInTraceName(path);
      report_.being_recorded.push_back({path, pid});
      report_.warnings.push_back(StillBeingRecorded(path, pid).message() +
                                 ": read as far as it is written");
    }
    return Status::Ok();
  }

 private:
  // What the headers say is at one place of a file.
  struct Step {
    enum Kind : uint8_t { kChunk, kTorn, kBadHeader } kind = kChunk;
    format::ChunkView chunk;  // kChunk
    size_t offset = 0;        // kChunk: of the chunk; kTorn: of the torn chunk
  };

  // A chunk checked, decompressed and, for fixed-size records, decoded with the file's own
  // ids, on any reading thread.
  struct Slot {
    Slot() : zstd(ZSTD_createDCtx()) {}
    ~Slot() { ZSTD_freeDCtx(zstd); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

    ZSTD_DCtx* zstd;
    bool checksum_ok = false;
    bool decompressed = false;
    bool decoded = false;  // fixed-size records: the payload decoded without fault
    std::vector<uint8_t> buffer;
    std::span<const uint8_t> raw;
    std::vector<uint64_t> scratch;
    // The records of a fixed-size chunk, of whichever type it holds, in storage kept from
    // chunk to chunk: as large as the largest chunk the slot held, not one array per type.
    // Record types are aggregates, so the storage holds them once written.
    std::unique_ptr<std::byte[]> records;
    size_t records_bytes = 0;
    uint32_t record_count = 0;

    template <class T>
    std::span<T> Records(uint32_t count) {
      const size_t bytes = size_t{count} * sizeof(T);
      if (bytes > records_bytes) {
        records.reset(new std::byte[bytes]);
        records_bytes = bytes;
      }
      record_count = count;
      return Held<T>();
    }
    template <class T>
    std::span<T> Held() {
      return {std::launder(reinterpret_cast<T*>(records.get())), record_count};
    }
  };

  // Finds the chunks of a file, the damaged places and a torn end (steps_); returns where
  // the last whole chunk ends.
  size_t WalkChunks(std::span<const uint8_t> bytes) {
    steps_.clear();
    return format::WalkChunks(bytes,
                              [&](format::ChunkAt at, size_t pos, const format::ChunkView& chunk) {
                                Step step;
                                step.kind = at == format::ChunkAt::kTorn        ? Step::kTorn
                                            : at == format::ChunkAt::kBadHeader ? Step::kBadHeader
                                                                                : Step::kChunk;
                                step.chunk = chunk;
                                step.offset = pos;
                                steps_.push_back(step);
                              });
  }

  // On a reading thread: everything about a chunk that needs nothing read before it.
  void Prepare(const Step& step, Slot& slot) const {
    slot.checksum_ok = slot.decompressed = slot.decoded = false;
    slot.record_count = 0;
    if (step.kind != Step::kChunk || !Wanted(step.chunk.type)) return;
    slot.checksum_ok = format::ChunkChecksumOk(step.chunk);
    if (!slot.checksum_ok) return;
    slot.decompressed = format::ChunkRawBytes(step.chunk, slot.buffer, slot.raw, slot.zstd);
    if (!slot.decompressed) return;
    format::ByteCursor in(slot.raw.data(), slot.raw.size());
    switch (step.chunk.type) {
#define GPUPERF_READER_DECODE(Type, name, plural, number)                              \
  case number:                                                                         \
    /* Every record needs a byte per field at least: a count beyond that is damage. */ \
    if (step.chunk.record_count <= in.remaining()) {                                   \
      slot.decoded = format::DecodeFixedLocal(                                         \
          in, slot.Records<Type##Record>(step.chunk.record_count), slot.scratch);      \
    }                                                                                  \
    break;
      GPUPERF_FIXED_RECORD_TYPES(GPUPERF_READER_DECODE)
#undef GPUPERF_READER_DECODE
      default:
        break;  // variable-length records: decoded in TakeUp, in file order
    }
  }

  // On the calling thread, in file order: what reading the chunk one after the other does.
  void TakeUp(std::span<const uint8_t> bytes, const Step& step, Slot& slot, std::string_view name) {
    switch (step.kind) {
      case Step::kTorn:
        Truncated(name, bytes.size() - step.offset);
        return;
      case Step::kBadHeader:
        Corrupt(name, "bad chunk header");
        return;
      case Step::kChunk:
        break;
    }
    const format::ChunkView& chunk = step.chunk;
    if (!Wanted(chunk.type)) {
      ++file_.chunks;
      return;
    }
    if (!slot.checksum_ok) {
      Corrupt(name, "checksum mismatch");
      return;
    }
    ++file_.chunks;
    if (Repeats(bytes, chunk, step.offset)) return;
    ReadChunk(chunk, slot, name);
  }

  // References whose name or stack was not defined before them: lost with a damaged chunk,
  // or defined only later (a writer defines each one before its first use, so the chunks
  // were put out of order), or never defined at all.
  void WarnUnresolved(std::string_view name) {
    if (ids_.unresolved == 0) return;
    std::string why;
    if (file_.corrupt > 0) {
      why = " lost with damaged chunks";
    } else if (file_.defined_after_unresolved) {
      why =
          " defined only after their use: the file's chunks are out of order (was it edited "
          "or spliced?)";
    } else {
      why = " that the file never defines (was it edited or spliced?)";
    }
    report_.warnings.push_back(std::string(name) + ": " + std::to_string(ids_.unresolved) +
                               " references to names or stacks" + why);
    ids_.unresolved = 0;
  }

  Status CheckHeader(std::span<const uint8_t> bytes, std::string_view name) {
    if (bytes.empty()) {
      return Error(StatusCode::kNotATrace,
                   std::string(name) +
                       " is empty: not a gpuperf trace (the recording may have "
                       "been killed before it wrote anything)");
    }
    if (bytes.size() < sizeof(format::kFileMagic) ||
        std::memcmp(bytes.data(), format::kFileMagic, sizeof(format::kFileMagic)) != 0) {
      return Error(StatusCode::kNotATrace, std::string(name) + " is not a gpuperf trace");
    }
    if (bytes.size() < format::kFileHeaderSize) {
      return Error(StatusCode::kCorrupt,
                   std::string(name) + " is cut off inside its header: no records to recover");
    }
    const uint32_t version = format::ChunkU32(bytes.data() + 8);
    if (version != format::kFormatVersion) {
      return Error(StatusCode::kUnsupportedVersion,
                   std::string(name) + " has trace format version " + std::to_string(version) +
                       ", but this gpuperf reads version " +
                       std::to_string(format::kFormatVersion) +
                       (version > format::kFormatVersion ? ": upgrade gpuperf to read it"
                                                         : ": it was written by an older gpuperf"));
    }
    return Status::Ok();
  }

  bool Wanted(uint16_t type) const {
    return only_.empty() || type == format::kChunkStrings ||
           std::find(only_.begin(), only_.end(), type) != only_.end();
  }

  void Truncated(std::string_view name, size_t bytes) {
    if (file_.being_written) return;  // the chunk its writer is adding now
    report_.bytes_truncated += bytes;
    report_.warnings.push_back(
        std::string(name) + " ends inside a chunk after " + std::to_string(file_.chunks) +
        " complete chunks: the " + HumanBytes(bytes) +
        " after them are unreadable and anything recorded later is missing (how many records "
        "is unknown; was the process killed or the file cut?)");
  }

  void Corrupt(std::string_view name, const char* why) {
    ++report_.chunks_corrupt;
    ++file_.corrupt;
    report_.warnings.push_back(std::string(name) + ": skipped a damaged chunk (" + why + ")");
  }

  // A byte-for-byte repeat of an earlier chunk of this file: left out, counted. A writer
  // never writes the same records twice (every event has its own times and ids, every
  // definition is written once), so a repeat is a copy that would count them twice. Stats
  // are the exception: cumulative counters, written again unchanged when nothing moved, and
  // read as the largest value anyway.
  bool Repeats(std::span<const uint8_t> bytes, const format::ChunkView& chunk, size_t start) {
    if (chunk.type == format::kStatChunk) return false;
    const uint32_t crc = format::ChunkU32(chunk.whole.data() + 20);
    auto [it, first] = file_.chunk_at_crc.try_emplace(crc, start);
    if (first) return false;
    const size_t earlier = it->second;
    if (earlier + chunk.whole.size() > bytes.size() ||
        std::memcmp(bytes.data() + earlier, chunk.whole.data(), chunk.whole.size()) != 0) {
      return false;
    }
    ++file_.repeated;
    ++report_.chunks_repeated;
    return true;
  }

  void ReadChunk(const format::ChunkView& chunk, Slot& slot, std::string_view name) {
    const uint16_t type = chunk.type;
    const uint32_t count = chunk.record_count;
    if (!slot.decompressed) {
      Corrupt(name, "cannot decompress");
      return;
    }
    format::ByteCursor in(slot.raw.data(), slot.raw.size());
    ids_.strings = string_map_;
    ids_.stacks = stack_map_;
    bool ok = true;
    switch (type) {
      case format::kChunkStrings:
        file_.defined_after_unresolved |= ids_.unresolved > 0;
        ok = ReadStrings(in, count);
        break;
      case format::kChunkStacks:
        file_.defined_after_unresolved |= ids_.unresolved > 0;
        ok = ReadStacks(in, count);
        break;
      case format::kChunkSymbols:
        ok = format::DecodeSymbols(in, count, ids_, symbols_);
        if (ok) {
          for (const SymbolRecord& symbol : symbols_) sink_.OnSymbol(symbol);
        }
        break;
      case format::kChunkPythonCodes:
        ok = format::DecodePythonCodes(in, count, ids_, python_codes_);
        if (ok) {
          for (const PythonCodeRecord& code : python_codes_) sink_.OnPythonCode(code);
        }
        break;
      case format::kChunkGpuProfile:
        switch (format::DecodeGpuProfile(in, count, ids_, gpu_profile_)) {
          case format::GpuProfileDecode::kOk:
            for (const PcSampleRecord& s : gpu_profile_.pc_samples) sink_.OnPcSample(s);
            for (const CubinRecord& c : gpu_profile_.cubins) sink_.OnCubin(c);
            for (const SassLineRecord& l : gpu_profile_.sass_lines) sink_.OnSassLine(l);
            break;
          case format::GpuProfileDecode::kMalformed:
            ok = false;
            break;
          case format::GpuProfileDecode::kUnknownKind:  // from a newer gpuperf
            ++report_.chunks_unknown;
            return;
        }
        break;
#define GPUPERF_READER_CASE(Type, name, plural, number)                               \
  case number:                                                                        \
    format::RemapIds(slot.Held<Type##Record>(), ids_);                                \
    ok = slot.decoded;                                                                \
    if (ok) sink_.On##Type(std::span<const Type##Record>(slot.Held<Type##Record>())); \
    break;
        GPUPERF_FIXED_RECORD_TYPES(GPUPERF_READER_CASE)
#undef GPUPERF_READER_CASE
      default:
        ++report_.chunks_unknown;
        return;
    }
    if (!ok) {
      Corrupt(name, "malformed records");
      return;
    }
    if (type == format::kProcessChunk && file_.pid == 0 && slot.record_count > 0) {
      file_.pid = slot.Held<ProcessRecord>().front().pid;
    }
    ++report_.chunks_read;
    report_.records_read += count;
  }

  bool ReadStrings(format::ByteCursor& in, uint32_t count) {
    uint32_t first_id = 0;
    if (!format::DecodeStrings(in, count, &first_id, strings_)) return false;
    if (first_id == 0 || first_id > (1u << 30)) return false;
    if (string_map_.size() < first_id + count) string_map_.resize(first_id + count, 0);
    report_.max_local_string_id = std::max(report_.max_local_string_id, first_id + count - 1);
    for (uint32_t i = 0; i < count; ++i) {
      auto [it, inserted] = global_strings_.try_emplace(strings_[i], next_string_);
      if (inserted) {
        sink_.OnString(next_string_, it->first);
        ++next_string_;
      }
      string_map_[first_id + i] = it->second;
    }
    return true;
  }

  bool ReadStacks(format::ByteCursor& in, uint32_t count) {
    if (!format::DecodeStacks(in, count, stacks_)) return false;
    for (StackRecord& stack : stacks_) {
      if (stack.id == 0 || stack.id > (1u << 30)) return false;
      if (stack_map_.size() <= stack.id) stack_map_.resize(stack.id + 1, 0);
      stack_map_[stack.id] = next_stack_;
      stack.id = next_stack_++;
      sink_.OnStack(stack);
    }
    return true;
  }

  RecordSink& sink_;
  ReadReport& report_;
  std::vector<uint16_t> only_;  // chunk types to read (strings always); empty: all
  // What the reader learns of the file it is reading.
  struct FileState {
    bool being_written = false;
    uint64_t chunks = 0;                    // whole chunks with a good checksum
    uint64_t corrupt = 0;                   // damaged chunks
    uint64_t repeated = 0;                  // byte-for-byte repeats left out
    uint32_t pid = 0;                       // of its first process record
    bool defined_after_unresolved = false;  // names or stacks came after a use that missed them
    std::unordered_map<uint32_t, size_t> chunk_at_crc;  // a chunk's checksum -> its offset
  };
  FileState file_;
  std::unordered_map<std::string, StringId> global_strings_;
  StringId next_string_ = 1;
  StackId next_stack_ = 1;
  std::vector<uint32_t> string_map_;  // file-local id -> global id
  std::vector<uint32_t> stack_map_;
  format::IdMaps ids_;
  std::vector<std::string> strings_;
  std::vector<StackRecord> stacks_;
  std::vector<SymbolRecord> symbols_;
  std::vector<PythonCodeRecord> python_codes_;
  format::GpuProfileChunk gpu_profile_;
  unsigned threads_;
  std::vector<Step> steps_;
  // Chunks prepared ahead of the one taken up: enough to keep every thread busy while the
  // sink works, few enough that their records stay a few megabytes each.
  std::vector<std::unique_ptr<Slot>> slots_;
};

Status ReadOneFile(Reader& reader, const std::string& path) {
  format::MappedFile file;
  GP_RETURN_IF_ERROR(file.Open(path));
  return reader.ReadBytes(file.bytes(), path, file.being_written(), &file);
}

unsigned ThreadsFor(const ReadOptions& options) {
  return options.threads != 0 ? options.threads : DefaultReadThreads();
}

}  // namespace

unsigned DefaultReadThreads() {
  static const unsigned threads = [] {
    if (const char* env = std::getenv("GPUPERF_READ_THREADS")) {
      const long n = std::strtol(env, nullptr, 10);
      if (n >= 1) return static_cast<unsigned>(std::min(n, 256L));
    }
    return ProcessorCount();
  }();
  return threads;
}

Result<std::map<uint16_t, uint64_t>> CountChunkRecords(const std::string& path) {
  std::map<uint16_t, uint64_t> counts;
  auto count = [&counts](std::span<const uint8_t> bytes) {
    if (bytes.size() < format::kFileHeaderSize) return;
    format::WalkChunks(bytes, [&](format::ChunkAt at, size_t, const format::ChunkView& chunk) {
      if (at == format::ChunkAt::kWhole) counts[chunk.type] += chunk.record_count;
    });
  };
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    format::MappedFile file;
    GP_RETURN_IF_ERROR(file.Open(path));
    count(file.bytes());
    return counts;
  }
  ReadReport ignored;
  Status first_error;
  GP_ASSIGN_OR_RETURN(std::vector<format::DirectoryTraceFile> files,
                      format::OpenTraceDirectory(path, ignored, first_error));
  for (const format::DirectoryTraceFile& entry : files) count(entry.file.bytes());
  return counts;
}

Status ReadTraceBytes(std::span<const uint8_t> bytes, std::string_view display_name,
                      RecordSink& sink, ReadReport* report, const ReadOptions& options) {
  ReadReport local;
  Reader reader(sink, report ? *report : local, ThreadsFor(options));
  reader.Only(options.chunk_types);
  return reader.ReadBytes(bytes, display_name);
}

Status ReadTrace(const std::string& path, RecordSink& sink, ReadReport* report) {
  return ReadTraceWith(path, {}, sink, report);
}

Status ReadTraceChunks(const std::string& path, std::span<const uint16_t> chunk_types,
                       RecordSink& sink, ReadReport* report) {
  ReadOptions options;
  options.chunk_types = chunk_types;
  return ReadTraceWith(path, options, sink, report);
}

Status ReadTraceWith(const std::string& path, const ReadOptions& options, RecordSink& sink,
                     ReadReport* report) {
  Status shared;
  if (format::ReadShared(path, options, sink, report, &shared)) return shared;
  return format::ReadTraceAlone(path, options, sink, report);
}

Status format::ReadTraceAlone(const std::string& path, const ReadOptions& options, RecordSink& sink,
                              ReadReport* report) {
  ReadReport local;
  ReadReport& out = report ? *report : local;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Error(StatusCode::kNotFound, path + ": no such file or directory");
  }
  Reader reader(sink, out, ThreadsFor(options));
  reader.Only(options.chunk_types);
  if (!std::filesystem::is_directory(path, ec)) return ReadOneFile(reader, path);

  // In a directory, one bad file must not hide the others: warn and go on.
  Status first_error;
  GP_ASSIGN_OR_RETURN(std::vector<format::DirectoryTraceFile> files,
                      format::OpenTraceDirectory(path, out, first_error));
  if (files.empty() && out.files_skipped == 0 && out.files_duplicate == 0) {
    return Error(StatusCode::kNotFound, path + " holds no trace files (*.gpt)");
  }
  for (format::DirectoryTraceFile& entry : files) {
    if (options.only_process && entry.pid != 0 && entry.pid != *options.only_process) continue;
    Status status =
        reader.ReadBytes(entry.file.bytes(), entry.path, entry.file.being_written(), &entry.file);
    if (!status.ok()) {
      out.warnings.push_back("skipped " + status.message());
      ++out.files_skipped;
      if (first_error.ok()) first_error = status;
    }
  }
  if (out.files == 0) return first_error;
  return Status::Ok();
}

}  // namespace gpuperf
