// The writer of new traces, compiled into the injection library: it never reads a trace
// (appending, which does, is trace_append.cc, offline only).
#include "gpuperf/trace_writer.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/crc32c.h"
#include "base/file_size_limit.h"
#include "format/file_format.h"
#include "format/file_trace_writer.h"
#include "format/gpu_profile_codec.h"
#include "format/record_codec.h"
#include "format/trace_room.h"
#include "gpuperf/trace_lock.h"

namespace gpuperf {
namespace {

// The descriptors of the traces this process writes (fd + 1; 0 = free), so that a forked
// child can let go of them (CloseTraceFilesInForkedChild). Lock-free: fork() may come from
// any thread at any moment. A writer beyond the table is only not let go of in a child.
constexpr int kWriterSlots = 64;
std::atomic<int> g_writer_fds[kWriterSlots];

void RememberWriterFd(int fd) {
  for (std::atomic<int>& slot : g_writer_fds) {
    int free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, fd + 1)) return;
  }
}

void ForgetWriterFd(int fd) {
  for (std::atomic<int>& slot : g_writer_fds) {
    int mine = fd + 1;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

void PutU32(char* out, uint32_t value) {
  std::memcpy(out, &value, 4);
}
void PutU16(char* out, uint16_t value) {
  std::memcpy(out, &value, 2);
}

class FileTraceWriter final : public TraceWriter {
 public:
  // `end`: where the next write goes (the file holds whole chunks up to there).
  FileTraceWriter(int fd, uint64_t end, TraceWriterOptions options, StringId first_string_id = 1)
      : fd_(fd),
        end_(end),
        options_(options),
        cctx_(ZSTD_createCCtx()),
        next_string_id_(first_string_id) {
    if (options_.records_per_chunk == 0) options_.records_per_chunk = 1;
    RememberWriterFd(fd_);
  }
  ~FileTraceWriter() override {
    Close();
    ZSTD_freeCCtx(cctx_);
  }

  Status WriteHeader() {
    char header[format::kFileHeaderSize] = {};
    std::memcpy(header, format::kFileMagic, sizeof(format::kFileMagic));
    PutU32(header + 8, format::kFormatVersion);
    PutU32(header + 12, 0);
    Status status = room_.Make(fd_, end_, sizeof(header), /*is_end=*/true);
    if (status.ok()) status = WriteWhole({header, sizeof(header)});
    if (status.ok()) end_ += sizeof(header);
    return status;
  }

  StringId InternString(std::string_view text) override {
    if (text.empty()) return 0;
    auto it = string_ids_.find(text);
    if (it != string_ids_.end()) return it->second;
    StringId id = next_string_id_++;
    string_ids_.emplace(std::string(text), id);
    if (pending_strings_.empty()) pending_first_string_ = id;
    pending_strings_.emplace_back(text);
    return id;
  }

  void AddString(StringId id, std::string_view text) override {
    if (id == 0) return;
    // A strings chunk holds consecutive ids: start a new chunk at a gap.
    if (!pending_strings_.empty() && id != pending_first_string_ + pending_strings_.size()) {
      FlushDefinitions();
    }
    if (pending_strings_.empty()) pending_first_string_ = id;
    pending_strings_.emplace_back(text);
  }

  void AddStack(const StackRecord& stack) override {
    pending_stacks_.push_back(stack);
    if (pending_stacks_.size() >= options_.records_per_chunk) FlushDefinitions();
  }

  void AddSymbol(const SymbolRecord& symbol) override {
    pending_symbols_.push_back(symbol);
    if (pending_symbols_.size() >= options_.records_per_chunk) FlushDefinitions();
  }

  void AddPythonCode(const PythonCodeRecord& code) override {
    pending_python_codes_.push_back(code);
    if (pending_python_codes_.size() >= options_.records_per_chunk) FlushDefinitions();
  }

  void AddPcSample(const PcSampleRecord& sample) override {
    AddGpuProfile(pending_pc_samples_, sample);
  }
  void AddCubin(const CubinRecord& cubin) override { AddGpuProfile(pending_cubins_, cubin); }
  void AddSassLine(const SassLineRecord& line) override {
    AddGpuProfile(pending_sass_lines_, line);
  }

#define GPUPERF_WRITER_ADD_IMPL(Type, name, plural, number)                              \
  void Add(const Type##Record& record) override {                                        \
    plural##_.push_back(record);                                                         \
    if (plural##_.size() >= options_.records_per_chunk) FlushRecords(plural##_, number); \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_WRITER_ADD_IMPL)
#undef GPUPERF_WRITER_ADD_IMPL

  void AddChunk(std::string_view chunk) override {
    // Whatever the chunk names must be defined before it.
    FlushDefinitions();
    uint32_t records = 0;
    uint16_t type = 0;
    if (chunk.size() >= format::kChunkHeaderSize) {
      std::memcpy(&type, chunk.data() + 4, 2);
      std::memcpy(&records, chunk.data() + 16, 4);
    }
    WriteFramed(chunk, type, records);
  }

  Status Flush() override {
    if (fd_ < 0) return Error(StatusCode::kIoError, "trace writer is closed");
    FlushDefinitions();
#define GPUPERF_WRITER_FLUSH(Type, name, plural, number) FlushRecords(plural##_, number);
    GPUPERF_FIXED_RECORD_TYPES(GPUPERF_WRITER_FLUSH)
#undef GPUPERF_WRITER_FLUSH
    FlushGpuProfile();
    Status status = last_error_;
    last_error_ = Status::Ok();
    return status;
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    // The end may use the reserve. Its stats go before the records (the process's final
    // one) that tell a reader the end is here: an end cut short reads as one never written.
    closing_ = true;
    FlushRecords(stats_, format::kStatChunk);
    Status status = Flush();
    room_.Release(fd_, end_);
    // Forgotten first: a fork between the two leaves the child holding the lock until it
    // exits or execs, never closing a descriptor the number was reused for.
    ForgetWriterFd(fd_);
    if (::close(fd_) != 0 && status.ok()) {
      status = Error(StatusCode::kIoError, std::string("closing trace: ") + std::strerror(errno));
    }
    fd_ = -1;
    return status;
  }

  const TraceWriterStats& stats() const override {
    return writer_stats_;
  }

 private:
  // Strings first: symbols and Python codes name strings, and every record chunk may name
  // them.
  void FlushDefinitions() {
    if (!pending_strings_.empty()) {
      raw_.clear();
      format::EncodeStrings(pending_first_string_, pending_strings_, raw_);
      WriteChunk(format::kChunkStrings, pending_strings_.size());
      pending_strings_.clear();
    }
    if (!pending_stacks_.empty()) {
      raw_.clear();
      format::EncodeStacks(pending_stacks_, raw_);
      WriteChunk(format::kChunkStacks, pending_stacks_.size());
      pending_stacks_.clear();
    }
    if (!pending_symbols_.empty()) {
      raw_.clear();
      format::EncodeSymbols(pending_symbols_, raw_);
      WriteChunk(format::kChunkSymbols, pending_symbols_.size());
      pending_symbols_.clear();
    }
    if (!pending_python_codes_.empty()) {
      raw_.clear();
      format::EncodePythonCodes(pending_python_codes_, raw_);
      WriteChunk(format::kChunkPythonCodes, pending_python_codes_.size());
      pending_python_codes_.clear();
    }
  }

  template <class T>
  void AddGpuProfile(std::vector<T>& pending, const T& record) {
    pending.push_back(record);
    if (pending.size() >= options_.records_per_chunk) FlushGpuProfile();
  }

  // Cubins before the lines and samples that point into them.
  void FlushGpuProfile() {
    if (pending_cubins_.empty() && pending_sass_lines_.empty() && pending_pc_samples_.empty()) {
      return;
    }
    FlushDefinitions();
    auto write = [this](auto& pending, auto encode) {
      if (pending.empty()) return;
      raw_.clear();
      encode(pending, raw_);
      WriteChunk(format::kChunkGpuProfile, pending.size());
      pending.clear();
    };
    write(pending_cubins_, format::EncodeCubins);
    write(pending_sass_lines_, format::EncodeSassLines);
    write(pending_pc_samples_, format::EncodePcSamples);
  }

  template <class T>
  void FlushRecords(std::vector<T>& records, uint16_t type) {
    if (records.empty()) return;
    FlushDefinitions();
    raw_.clear();
    format::EncodeFixed<T>(records, raw_);
    WriteChunk(type, records.size());
    records.clear();
  }

  void WriteChunk(uint16_t type, size_t record_count) {
    chunk_.clear();
    format::FrameChunk(type, static_cast<uint32_t>(record_count), raw_, cctx_,
                       options_.compression_level, chunk_);
    WriteFramed(chunk_, type, record_count);
  }

  // A chunk lands whole after the last whole one, or not at all and counted.
  void WriteFramed(std::string_view chunk, uint16_t type, size_t record_count) {
    Status status = stopped_.ok() ? room_.Make(fd_, end_, chunk.size(), closing_) : stopped_;
    if (status.ok()) status = WriteWhole(chunk);
    if (!status.ok()) {
      NotWritten(type, record_count);
      // Past a failed piece of the end, nothing more of it: a reader then sees no end at all
      // (the process "ended before its final flush") rather than one without its counters.
      if (closing_) stopped_ = status;
      if (last_error_.ok()) last_error_ = status;
      return;
    }
    end_ += chunk.size();
    ++writer_stats_.chunks_written;
    writer_stats_.bytes_written += chunk.size();
    writer_stats_.records_written += record_count;
  }

  void NotWritten(uint16_t type, size_t record_count) {
    // A stats chunk is a snapshot of counters that only grow: the next one holds it all.
    if (type == format::kStatChunk) return;
    ++writer_stats_.write_errors;
    if (type < kNotWrittenKinds) writer_stats_.records_not_written[type] += record_count;
  }

  // Writes `bytes` at end_. A write that fails halfway (the disk filled up, an I/O error)
  // is cut off again, so the file stays readable and later chunks follow whole ones.
  Status WriteWhole(std::string_view bytes) {
    // Appending runs on the CLI's thread, the header on the program's (cuInit): past the
    // file size limit, a write must fail (EFBIG), not end the process.
    FileSizeSignalGuard no_signal;
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(end_ + done));
      if (n > 0) {
        done += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      const int error = n < 0 ? errno : ENOSPC;
      if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(end_)) != 0) {
        // A torn chunk stays: write nothing after it, so the file ends there.
        stopped_ = Error(StatusCode::kIoError,
                         std::string("cannot cut off a torn chunk: ") + std::strerror(errno));
      }
      return Error(StatusCode::kIoError, std::strerror(error));
    }
    return Status::Ok();
  }

  int fd_;
  uint64_t end_;  // the end of the last whole chunk: where the next one goes
  format::TraceRoom room_;
  bool closing_ = false;  // Close is writing the end
  Status stopped_;        // set: nothing more is written, for this reason
  TraceWriterOptions options_;
  ZSTD_CCtx* cctx_;
  TraceWriterStats writer_stats_;
  Status last_error_;

  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> string_ids_;
  StringId next_string_id_;
  StringId pending_first_string_ = 1;
  std::vector<std::string> pending_strings_;
  std::vector<StackRecord> pending_stacks_;
  std::vector<SymbolRecord> pending_symbols_;
  std::vector<PythonCodeRecord> pending_python_codes_;
  std::vector<PcSampleRecord> pending_pc_samples_;
  std::vector<CubinRecord> pending_cubins_;
  std::vector<SassLineRecord> pending_sass_lines_;
#define GPUPERF_WRITER_BUFFER(Type, name, plural, number) std::vector<Type##Record> plural##_;
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_WRITER_BUFFER)
#undef GPUPERF_WRITER_BUFFER

  std::string raw_;
  std::string chunk_;
};

}  // namespace

void format::FrameChunk(uint16_t type, uint32_t record_count, std::string_view raw, void* zstd_cctx,
                        int level, std::string& out) {
  const size_t start = out.size();
  const size_t bound = ZSTD_compressBound(raw.size());
  out.resize(start + format::kChunkHeaderSize + bound);
  char* header = out.data() + start;
  size_t payload_size =
      ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_cctx), header + format::kChunkHeaderSize,
                        bound, raw.data(), raw.size(), level);
  uint16_t flags = format::kChunkFlagZstd;
  if (ZSTD_isError(payload_size)) {
    // Cannot happen with a valid level and bound; store uncompressed rather than lose data.
    std::memcpy(header + format::kChunkHeaderSize, raw.data(), raw.size());
    payload_size = raw.size();
    flags = 0;
  }
  PutU32(header + 0, format::kChunkMagic);
  PutU16(header + 4, type);
  PutU16(header + 6, flags);
  PutU32(header + 8, static_cast<uint32_t>(payload_size));
  PutU32(header + 12, static_cast<uint32_t>(raw.size()));
  PutU32(header + 16, record_count);
  uint32_t crc = Crc32c(0, header, 20);
  crc = Crc32c(crc, header + format::kChunkHeaderSize, payload_size);
  PutU32(header + 20, crc);
  out.resize(start + format::kChunkHeaderSize + payload_size);
}

std::unique_ptr<TraceWriter> format::WriterOnOpenFile(int fd, TraceWriterOptions options,
                                                      StringId first_string_id) {
  const off_t end = ::lseek(fd, 0, SEEK_CUR);
  return std::make_unique<FileTraceWriter>(fd, end < 0 ? 0 : static_cast<uint64_t>(end), options,
                                           first_string_id);
}

void CloseTraceFilesInForkedChild() {
  for (std::atomic<int>& slot : g_writer_fds) {
    const int fd_plus_one = slot.exchange(0);
    if (fd_plus_one != 0) ::close(fd_plus_one - 1);
  }
}

Result<std::unique_ptr<TraceWriter>> TraceWriter::Create(const std::string& path,
                                                         TraceWriterOptions options) {
  // Locked before it is emptied: a file another process still writes is left whole.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Error(StatusCode::kIoError,
                 "cannot create trace file " + path + ": " + std::strerror(errno));
  }
  if (Status locked = LockTraceFile(fd, path); !locked.ok()) {
    ::close(fd);
    return Error(locked.code(), "cannot create trace file: " + locked.message());
  }
  if (::ftruncate(fd, 0) != 0) {
    const int error = errno;
    ::close(fd);
    return Error(StatusCode::kIoError,
                 "cannot create trace file " + path + ": " + std::strerror(error));
  }
  auto writer = std::make_unique<FileTraceWriter>(fd, 0, options);
  Status header = writer->WriteHeader();
  if (!header.ok()) {
    return Error(StatusCode::kIoError, "cannot write trace file " + path + ": " + header.message());
  }
  return std::unique_ptr<TraceWriter>(std::move(writer));
}

}  // namespace gpuperf
