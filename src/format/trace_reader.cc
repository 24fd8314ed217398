#include "gpuperf/trace_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/crc32c.h"
#include "format/file_format.h"
#include "format/gpu_profile_codec.h"
#include "format/record_codec.h"

namespace gpuperf {
namespace {

uint32_t GetU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint16_t GetU16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

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

  Status ReadBytes(std::span<const uint8_t> bytes, std::string_view name) {
    GP_RETURN_IF_ERROR(CheckHeader(bytes, name));
    ++report_.files;
    report_.format_version = format::kFormatVersion;
    string_map_.assign(1, 0);
    stack_map_.assign(1, 0);
    chunks_in_file_ = 0;
    size_t pos = format::kFileHeaderSize;
    while (pos < bytes.size()) {
      const size_t left = bytes.size() - pos;
      const uint8_t* header = bytes.data() + pos;
      if (left < format::kChunkHeaderSize) {
        Truncated(name, left);
        break;
      }
      const uint32_t payload_size = GetU32(header + 8);
      const uint32_t raw_size = GetU32(header + 12);
      if (GetU32(header) != format::kChunkMagic || payload_size > format::kMaxChunkBytes ||
          raw_size > format::kMaxChunkBytes) {
        pos = Resync(bytes, pos, name);
        continue;
      }
      if (left - format::kChunkHeaderSize < payload_size) {
        Truncated(name, left);
        break;
      }
      const uint8_t* payload = header + format::kChunkHeaderSize;
      if (!Wanted(GetU16(header + 4))) {
        pos += format::kChunkHeaderSize + payload_size;
        ++chunks_in_file_;
        continue;
      }
      uint32_t crc = Crc32c(0, header, 20);
      crc = Crc32c(crc, payload, payload_size);
      pos += format::kChunkHeaderSize + payload_size;
      if (crc != GetU32(header + 20)) {
        Corrupt(name, "checksum mismatch");
        continue;
      }
      ++chunks_in_file_;
      ReadChunk(GetU16(header + 4), GetU16(header + 6), payload, payload_size, raw_size,
                GetU32(header + 16), name);
    }
    // On truncation the loop stops at the start of the torn chunk.
    report_.complete_bytes = std::min<size_t>(pos, bytes.size());
    if (chunks_in_file_ == 0) {
      ++report_.files_without_chunks;
      report_.warnings.push_back(std::string(name) + " has no complete chunk: nothing recoverable");
    }
    if (ids_.unresolved > 0) {
      report_.warnings.push_back(std::string(name) + ": " + std::to_string(ids_.unresolved) +
                                 " references to names or stacks lost with damaged chunks");
      ids_.unresolved = 0;
    }
    return Status::Ok();
  }

 private:
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
    const uint32_t version = GetU32(bytes.data() + 8);
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
    report_.bytes_truncated += bytes;
    report_.warnings.push_back(
        std::string(name) + " ends inside a chunk after " + std::to_string(chunks_in_file_) +
        " complete chunks: the " + HumanBytes(bytes) +
        " after them are unreadable and anything recorded later is missing (how many records "
        "is unknown; was the process killed or the file cut?)");
  }

  void Corrupt(std::string_view name, const char* why) {
    ++report_.chunks_corrupt;
    report_.warnings.push_back(std::string(name) + ": skipped a damaged chunk (" + why + ")");
  }

  // After a damaged chunk header, finds the next chunk magic.
  size_t Resync(std::span<const uint8_t> bytes, size_t pos, std::string_view name) {
    Corrupt(name, "bad chunk header");
    for (size_t p = pos + 1; p + 4 <= bytes.size(); ++p) {
      if (GetU32(bytes.data() + p) == format::kChunkMagic) return p;
    }
    return bytes.size();
  }

  void ReadChunk(uint16_t type, uint16_t flags, const uint8_t* payload, uint32_t payload_size,
                 uint32_t raw_size, uint32_t count, std::string_view name) {
    const uint8_t* data = payload;
    size_t size = payload_size;
    if (flags & format::kChunkFlagZstd) {
      raw_.resize(raw_size);
      size_t n = ZSTD_decompress(raw_.data(), raw_.size(), payload, payload_size);
      if (ZSTD_isError(n) || n != raw_size) {
        Corrupt(name, "cannot decompress");
        return;
      }
      data = raw_.data();
      size = raw_size;
    }
    format::ByteCursor in(data, size);
    ids_.strings = string_map_;
    ids_.stacks = stack_map_;
    bool ok = true;
    switch (type) {
      case format::kChunkStrings:
        ok = ReadStrings(in, count);
        break;
      case format::kChunkStacks:
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
  std::vector<uint16_t> only_;   // chunk types to read (strings always); empty: all
  uint64_t chunks_in_file_ = 0;  // whole chunks with a good checksum in the current file
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

// What a path is when it is not a regular file, for the one-line refusal.
const char* NonRegularKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISDIR(mode)) return "directory";
  return "special file";
}

// A read-only mapping of a whole file; the OS pages it in as the reader walks it.
class MappedFile {
 public:
  ~MappedFile() {
    if (data_ != nullptr && data_ != MAP_FAILED) ::munmap(data_, size_);
  }
  Status Open(const std::string& path) {
    // Non-blocking, so that a FIFO without a writer is refused below instead of hanging
    // in open(); it changes nothing for the regular file that is mapped.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      return Error(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
                   "cannot open " + path + ": " + std::strerror(errno));
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      return Error(StatusCode::kIoError, "cannot stat " + path + ": " + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      return Error(StatusCode::kNotATrace,
                   path + " is a " + NonRegularKind(st.st_mode) + ", not a trace file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data_ == MAP_FAILED) {
        ::close(fd);
        return Error(StatusCode::kIoError, "cannot map " + path + ": " + std::strerror(errno));
      }
      ::madvise(data_, size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
    return Status::Ok();
  }
  std::span<const uint8_t> bytes() const {
    return size_ == 0 ? std::span<const uint8_t>()
                      : std::span<const uint8_t>(static_cast<const uint8_t*>(data_), size_);
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

Status ReadOneFile(Reader& reader, const std::string& path) {
  MappedFile file;
  GP_RETURN_IF_ERROR(file.Open(path));
  return reader.ReadBytes(file.bytes(), path);
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

  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
    // Every *.gpt name is tried: one that is not a regular file is skipped with a
    // warning below, not silently.
    if (entry.path().extension() == ".gpt") files.push_back(entry.path().string());
  }
  if (ec) return Error(StatusCode::kIoError, "cannot list " + path + ": " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    return Error(StatusCode::kNotFound, path + " holds no trace files (*.gpt)");
  }
  // In a directory, one bad file must not hide the others: warn and go on.
  Status first_error;
  for (const std::string& file : files) {
    Status status = ReadOneFile(reader, file);
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
