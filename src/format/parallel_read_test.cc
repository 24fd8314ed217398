// The reader decodes chunks on several threads: whatever their number, the sink sees the
// same calls with the same records in the same order, and damage is counted the same.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "format/file_format.h"
#include "format/record_schema.h"
#include "gpuperf/trace_reader.h"
#include "gpuperf/trace_writer.h"
#include "support/raw_chunk.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::RawChunk;
using testing::ReadFileToString;
using testing::TempDir;
using testing::WriteStringToFile;

// Every call the reader makes, one line each, with every field of every record.
class CallLog final : public RecordSink {
 public:
  void OnString(StringId id, std::string_view text) override {
    out_ << "string " << id << ' ' << text << '\n';
  }
  void OnStack(const StackRecord& stack) override {
    out_ << "stack " << stack.pid << ' ' << stack.id;
    for (uint64_t pc : stack.pcs) out_ << ' ' << pc;
    out_ << '\n';
  }
  void OnSymbol(const SymbolRecord& symbol) override {
    out_ << "symbol " << symbol.pid << ' ' << symbol.pc;
    for (const SymbolFrame& f : symbol.frames) {
      out_ << " [" << f.function << ' ' << f.file << ' ' << f.line << ' ' << f.module << ' '
           << f.module_offset << ']';
    }
    out_ << '\n';
  }
#define GP_LOG_ON(Type, name, plural, number)                     \
  void On##Type(std::span<const Type##Record> records) override { \
    out_ << #name << " batch of " << records.size() << '\n';      \
    for (const Type##Record& record : records) Fields(record);    \
  }
  GPUPERF_FIXED_RECORD_TYPES(GP_LOG_ON)
#undef GP_LOG_ON

  std::string text() const {
    return out_.str();
  }

 private:
  template <class T>
  void Fields(const T& record) {
    format::ForEachField(record, [&](const char*, const auto& value, format::FieldEnc) {
      out_ << ' ' << format::FieldToU64(value);
    });
    out_ << '\n';
  }
  std::ostringstream out_;
};

std::string Describe(const ReadReport& r) {
  std::ostringstream out;
  out << "files=" << r.files << " chunks_read=" << r.chunks_read << " corrupt=" << r.chunks_corrupt
      << " unknown=" << r.chunks_unknown << " truncated=" << r.bytes_truncated
      << " records=" << r.records_read << " repeated=" << r.chunks_repeated
      << " max_string=" << r.max_local_string_id << " complete=" << r.complete_bytes << '\n';
  for (const std::string& w : r.warnings) out << w << '\n';
  return out.str();
}

struct Reading {
  std::string calls;
  std::string report;
};

Reading Read(const std::string& path, unsigned threads) {
  CallLog log;
  ReadReport report;
  ReadOptions options;
  options.threads = threads;
  const Status status = ReadTraceWith(path, options, log, &report);
  EXPECT_TRUE(status.ok()) << status.message();
  return {log.text(), Describe(report)};
}

// A trace of many small chunks: kernels, API calls, links and strings interleaved, names
// defined as they are first used, a stack per launch site.
void WriteManyChunks(const std::string& path, uint32_t pid, int kernels) {
  TraceWriterOptions options;
  options.records_per_chunk = 7;
  auto writer = TraceWriter::Create(path, options);
  ASSERT_TRUE(writer.ok());
  for (uint32_t s = 1; s <= 5; ++s) {
    (*writer)->AddStack(StackRecord{pid, s, {0x400000 + s, 0x400100 + 2ull * s}});
  }
  for (int i = 0; i < kernels; ++i) {
    const auto correlation = static_cast<uint32_t>(i + 1);
    const uint64_t t = 1000 + 100ull * i;
    ApiRecord api;
    api.pid = pid;
    api.tid = pid + i % 3;
    api.name = (*writer)->InternString("cudaLaunchKernel");
    api.start_ns = t;
    api.end_ns = t + 20;
    api.correlation_id = correlation;
    (*writer)->Add(api);
    (*writer)->Add(
        LaunchLinkRecord{pid, api.tid, correlation, 1 + static_cast<StackId>(i % 5), api.name, t});
    KernelRecord kernel;
    kernel.pid = pid;
    kernel.name = (*writer)->InternString("kernel_" + std::to_string(i % 11));
    kernel.stream_id = 7 + i % 2;
    kernel.start_ns = t + 50;
    kernel.end_ns = t + 90;
    kernel.grid_x = 1u + i;
    kernel.correlation_id = correlation;
    (*writer)->Add(kernel);
  }
  ProcessRecord process;
  process.pid = pid;
  process.command = (*writer)->InternString("app");
  (*writer)->Add(process);
  ASSERT_TRUE((*writer)->Close().ok());
}

// The chunks of a file: where each starts, its type and record count.
struct ChunkAt {
  size_t offset;
  uint16_t type;
  uint32_t records;
  size_t size;
};

std::vector<ChunkAt> Chunks(const std::string& bytes) {
  std::vector<ChunkAt> chunks;
  for (size_t pos = format::kFileHeaderSize; pos + format::kChunkHeaderSize <= bytes.size();) {
    uint16_t type;
    uint32_t payload, records;
    std::memcpy(&type, bytes.data() + pos + 4, 2);
    std::memcpy(&payload, bytes.data() + pos + 8, 4);
    std::memcpy(&records, bytes.data() + pos + 16, 4);
    chunks.push_back({pos, type, records, format::kChunkHeaderSize + payload});
    pos += format::kChunkHeaderSize + payload;
  }
  return chunks;
}

TEST(ParallelRead, SameCallsWhateverTheNumberOfThreads) {
  TempDir dir;
  const std::string path = dir.File("many.gpt");
  WriteManyChunks(path, 42, 300);
  ASSERT_GT(Chunks(ReadFileToString(path)).size(), 100u);
  const Reading one = Read(path, 1);
  EXPECT_NE(one.calls.find("kernel batch of 7"), std::string::npos);
  for (unsigned threads : {2u, 3u, 8u}) {
    for (int round = 0; round < 3; ++round) {
      const Reading many = Read(path, threads);
      ASSERT_EQ(many.calls, one.calls) << threads << " threads";
      ASSERT_EQ(many.report, one.report) << threads << " threads";
    }
  }
}

// Damage in the middle of the file, read by several threads: a chunk whose payload was hit
// (checksum), a chunk header that lost its magic (the reader finds the next chunk), a chunk
// repeated byte for byte, a chunk of a type from the future, and a torn end.
TEST(ParallelRead, DamageInTheMiddleIsCountedTheSameWithThreads) {
  TempDir dir;
  const std::string clean_path = dir.File("clean.gpt");
  WriteManyChunks(clean_path, 42, 300);
  const std::string clean = ReadFileToString(clean_path);
  const std::vector<ChunkAt> chunks = Chunks(clean);
  // Kernel chunks a third and two thirds in.
  std::vector<size_t> kernel_chunks;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (chunks[i].type == format::kKernelChunk) kernel_chunks.push_back(i);
  }
  ASSERT_GT(kernel_chunks.size(), 20u);
  const ChunkAt hit = chunks[kernel_chunks[kernel_chunks.size() / 3]];
  const ChunkAt unmagicked = chunks[kernel_chunks[2 * kernel_chunks.size() / 3]];
  const ChunkAt repeated = chunks[kernel_chunks[kernel_chunks.size() / 2]];

  std::string bytes = clean.substr(0, repeated.offset + repeated.size);
  bytes += clean.substr(repeated.offset, repeated.size);              // the repeat
  const std::string future = RawChunk(999, std::string(3, '\0'), 1);  // a type from the future
  bytes += future;
  const size_t shift = bytes.size() - (repeated.offset + repeated.size);
  bytes += clean.substr(repeated.offset + repeated.size);
  bytes[hit.offset + format::kChunkHeaderSize + 1] ^= 0x40;  // its payload
  bytes[unmagicked.offset + shift] ^= 0xff;                  // its magic
  const size_t torn = 10;
  bytes.resize(bytes.size() - torn);  // the last chunk loses its end
  const std::string path = dir.File("damaged.gpt");
  WriteStringToFile(path, bytes);

  const Reading one = Read(path, 1);
  for (unsigned threads : {2u, 4u, 7u}) {
    const Reading many = Read(path, threads);
    ASSERT_EQ(many.calls, one.calls) << threads << " threads";
    ASSERT_EQ(many.report, one.report) << threads << " threads";
  }

  // Exact counts: what the damage cost and nothing more.
  CallLog log;
  ReadReport report;
  ReadOptions four;
  four.threads = 4;
  ASSERT_TRUE(ReadTraceWith(path, four, log, &report).ok());
  EXPECT_EQ(report.chunks_corrupt, 2u);  // the hit payload, the lost magic
  EXPECT_EQ(report.chunks_repeated, 1u);
  EXPECT_EQ(report.chunks_unknown, 1u);
  EXPECT_EQ(report.bytes_truncated, chunks.back().size - torn);
  uint64_t kernels_written = 0;
  for (const ChunkAt& c : chunks) kernels_written += c.type == format::kKernelChunk ? c.records : 0;
  uint64_t kernels_read = 0;
  std::istringstream calls(log.text());
  for (std::string line; std::getline(calls, line);) {
    if (line.rfind("kernel batch of ", 0) == 0) kernels_read += std::stoul(line.substr(16));
  }
  const uint64_t last_kernels =
      chunks.back().type == format::kKernelChunk ? chunks.back().records : 0;
  EXPECT_EQ(kernels_read, kernels_written - hit.records - unmagicked.records - last_kernels);
}

// A directory: each file's chunks decoded on the threads, its ids remapped as one trace.
TEST(ParallelRead, DirectoryOfFilesReadsTheSameWithThreads) {
  TempDir dir;
  WriteManyChunks(dir.File("a.100.gpt"), 100, 120);
  WriteManyChunks(dir.File("b.200.gpt"), 200, 90);
  const Reading one = Read(dir.path().string(), 1);
  EXPECT_NE(one.report.find("files=2"), std::string::npos) << one.report;
  for (unsigned threads : {2u, 5u}) {
    const Reading many = Read(dir.path().string(), threads);
    ASSERT_EQ(many.calls, one.calls) << threads << " threads";
    ASSERT_EQ(many.report, one.report) << threads << " threads";
  }
}

}  // namespace
}  // namespace gpuperf
