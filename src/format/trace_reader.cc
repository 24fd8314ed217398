#include "gpuperf/trace_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/chunk_view.h"
#include "format/file_format.h"
#include "format/gpu_profile_codec.h"
#include "format/mapped_file.h"
#include "format/record_codec.h"
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
  Reader(RecordSink& sink, ReadReport& report) : sink_(sink), report_(report) {}

  // Only these chunk types (and strings) from now on; empty: all.
  void Only(std::span<const uint16_t> chunk_types) {
    only_.assign(chunk_types.begin(), chunk_types.end());
  }

  // `being_written`: a process still writes the file (gpuperf/trace_lock.h), so a torn
  // last chunk is one it has not finished yet, and its end is still to come.
  Status ReadBytes(std::span<const uint8_t> bytes, std::string_view name,
                   bool being_written = false) {
    GP_RETURN_IF_ERROR(CheckHeader(bytes, name));
    ++report_.files;
    report_.format_version = format::kFormatVersion;
    string_map_.assign(1, 0);
    stack_map_.assign(1, 0);
    file_ = FileState{};
    file_.being_written = being_written;
    size_t pos = format::kFileHeaderSize;
    while (pos < bytes.size()) {
      format::ChunkView chunk;
      const format::ChunkAt at = format::ChunkAtOffset(bytes, pos, chunk);
      if (at == format::ChunkAt::kTorn) {
        Truncated(name, bytes.size() - pos);
        break;
      }
      if (at == format::ChunkAt::kBadHeader) {
        pos = Resync(bytes, pos, name);
        continue;
      }
      const size_t chunk_start = pos;
      pos += chunk.whole.size();
      if (!Wanted(chunk.type)) {
        ++file_.chunks;
        continue;
      }
      if (!format::ChunkChecksumOk(chunk)) {
        Corrupt(name, "checksum mismatch");
        continue;
      }
      ++file_.chunks;
      if (Repeats(bytes, chunk, chunk_start)) continue;
      ReadChunk(chunk, name);
    }
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

  // After a damaged chunk header, finds the next chunk magic.
  size_t Resync(std::span<const uint8_t> bytes, size_t pos, std::string_view name) {
    Corrupt(name, "bad chunk header");
    for (size_t p = pos + 1; p + 4 <= bytes.size(); ++p) {
      if (format::ChunkU32(bytes.data() + p) == format::kChunkMagic) return p;
    }
    return bytes.size();
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

  void ReadChunk(const format::ChunkView& chunk, std::string_view name) {
    const uint16_t type = chunk.type;
    const uint32_t count = chunk.record_count;
    std::span<const uint8_t> raw;
    if (!format::ChunkRawBytes(chunk, raw_, raw)) {
      Corrupt(name, "cannot decompress");
      return;
    }
    format::ByteCursor in(raw.data(), raw.size());
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
#define GPUPERF_READER_CASE(Type, name, plural, number)               \
  case number:                                                        \
    ok = format::DecodeFixed(in, count, ids_, plural##_);             \
    if (ok) sink_.On##Type(std::span<const Type##Record>(plural##_)); \
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
    if (type == format::kProcessChunk && file_.pid == 0 && !processes_.empty()) {
      file_.pid = processes_.front().pid;
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
  std::vector<uint8_t> raw_;
  std::vector<std::string> strings_;
  std::vector<StackRecord> stacks_;
  std::vector<SymbolRecord> symbols_;
  std::vector<PythonCodeRecord> python_codes_;
  format::GpuProfileChunk gpu_profile_;
#define GPUPERF_READER_BUFFER(Type, name, plural, number) std::vector<Type##Record> plural##_;
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_READER_BUFFER)
#undef GPUPERF_READER_BUFFER
};

Status ReadOneFile(Reader& reader, const std::string& path) {
  format::MappedFile file;
  GP_RETURN_IF_ERROR(file.Open(path));
  return reader.ReadBytes(file.bytes(), path, file.being_written());
}

}  // namespace

Status ReadTraceBytes(std::span<const uint8_t> bytes, std::string_view display_name,
                      RecordSink& sink, ReadReport* report) {
  ReadReport local;
  Reader reader(sink, report ? *report : local);
  return reader.ReadBytes(bytes, display_name);
}

Status ReadTrace(const std::string& path, RecordSink& sink, ReadReport* report) {
  return ReadTraceChunks(path, {}, sink, report);
}

Status ReadTraceChunks(const std::string& path, std::span<const uint16_t> chunk_types,
                       RecordSink& sink, ReadReport* report) {
  ReadReport local;
  ReadReport& out = report ? *report : local;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Error(StatusCode::kNotFound, path + ": no such file or directory");
  }
  Reader reader(sink, out);
  reader.Only(chunk_types);
  if (!std::filesystem::is_directory(path, ec)) return ReadOneFile(reader, path);

  // In a directory, one bad file must not hide the others: warn and go on.
  Status first_error;
  GP_ASSIGN_OR_RETURN(std::vector<format::DirectoryTraceFile> files,
                      format::OpenTraceDirectory(path, out, first_error));
  if (files.empty() && out.files_skipped == 0 && out.files_duplicate == 0) {
    return Error(StatusCode::kNotFound, path + " holds no trace files (*.gpt)");
  }
  for (const format::DirectoryTraceFile& entry : files) {
    Status status = reader.ReadBytes(entry.file.bytes(), entry.path, entry.file.being_written());
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
