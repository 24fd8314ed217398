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
#include "support/read_log.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::CallLog;
using testing::DescribeReadReport;
using testing::RawChunk;
using testing::ReadFileToString;
using testing::TempDir;
using testing::WriteManyChunks;
using testing::WriteStringToFile;

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
  return {log.text(), DescribeReadReport(report)};
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

// One process of a directory read from its own file: what reading that file alone gives.
TEST(ParallelRead, OnlyOneProcessReadsThatProcesssFileAlone) {
  TempDir dir;
  WriteManyChunks(dir.File("a.100.gpt"), 100, 40);
  WriteManyChunks(dir.File("b.200.gpt"), 200, 60);
  WriteManyChunks(dir.File("c.300.gpt"), 300, 20);
  CallLog alone;
  ReadReport alone_report;
  ASSERT_TRUE(ReadTrace(dir.File("b.200.gpt"), alone, &alone_report).ok());
  for (unsigned threads : {1u, 3u}) {
    CallLog log;
    ReadReport report;
    ReadOptions options;
    options.threads = threads;
    options.only_process = 200;
    ASSERT_TRUE(ReadTraceWith(dir.path().string(), options, log, &report).ok());
    EXPECT_EQ(log.text(), alone.text());
    EXPECT_EQ(report.files, 1u);
    EXPECT_EQ(report.records_read, alone_report.records_read);
  }
}

}  // namespace
}  // namespace gpuperf
