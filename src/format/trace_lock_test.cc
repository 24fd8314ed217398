// One writer per trace file: the writer's lock, what the reader and appenders make of it,
// and a directory that names one trace twice.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "analyze/join/data_loss.h"
#include "format/file_format.h"
#include "gpuperf/trace.h"
#include "gpuperf/trace_append.h"
#include "gpuperf/trace_lock.h"
#include "gpuperf/trace_writer.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::ReadFileToString;
using testing::TempDir;
using testing::WriteStringToFile;

// Whether some open file description other than a new one of ours holds the file's lock.
bool Locked(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  const bool locked = TraceFileLocked(fd);
  ::close(fd);
  return locked;
}

// A process record at start (end 0), `kernels` kernels, flushed: what a recorder has
// written by the time its first period is over.
std::unique_ptr<TraceWriter> StartRecording(const std::string& path, uint32_t pid, int kernels) {
  auto writer = TraceWriter::Create(path, TraceWriterOptions{.records_per_chunk = 2});
  EXPECT_TRUE(writer.ok()) << writer.status().message();
  ProcessRecord process;
  process.pid = pid;
  process.start_ns = 1000 + pid;
  (*writer)->Add(process);
  for (int i = 0; i < kernels; ++i) {
    KernelRecord kernel;
    kernel.pid = pid;
    kernel.start_ns = 2000 + i;
    kernel.end_ns = 2500 + i;
    kernel.correlation_id = static_cast<uint32_t>(i + 1);
    kernel.name = (*writer)->InternString("_Z4workv");
    (*writer)->Add(kernel);
  }
  EXPECT_TRUE((*writer)->Flush().ok());
  return std::move(writer).value();
}

void FinishRecording(TraceWriter& writer, uint32_t pid) {
  ProcessRecord process;
  process.pid = pid;
  process.start_ns = 1000 + pid;
  process.end_ns = 9000;
  writer.Add(process);
  EXPECT_TRUE(writer.Close().ok());
}

TEST(TraceLock, TheWriterHoldsItFromCreateToClose) {
  TempDir dir;
  const std::string path = dir.File("app.4242.gpt");
  auto writer = StartRecording(path, 4242, 6);
  EXPECT_TRUE(Locked(path));

  // An appender leaves it alone and says who writes it.
  auto appender = AppendToTrace(path);
  ASSERT_FALSE(appender.ok());
  EXPECT_EQ(appender.status().code(), StatusCode::kBusy);
  EXPECT_EQ(appender.status().message(), path + " is still being recorded by pid 4242");

  // A second creator neither truncates nor writes it.
  const std::string before = ReadFileToString(path);
  auto second = TraceWriter::Create(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kBusy);
  EXPECT_EQ(ReadFileToString(path), before);

  FinishRecording(*writer, 4242);
  EXPECT_FALSE(Locked(path));
  auto after = AppendToTrace(path);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(Locked(path));  // the appender holds it now
  ASSERT_TRUE((*after)->Close().ok());
  EXPECT_FALSE(Locked(path));
}

TEST(TraceLock, AnAppenderKeepsWritersAndOtherAppendersOff) {
  TempDir dir;
  const std::string path = dir.File("app.7.gpt");
  FinishRecording(*StartRecording(path, 7, 2), 7);
  auto appender = AppendToTrace(path);
  ASSERT_TRUE(appender.ok());
  EXPECT_EQ(AppendToTrace(path).status().code(), StatusCode::kBusy);
  EXPECT_EQ(TraceWriter::Create(path).status().code(), StatusCode::kBusy);
  ASSERT_TRUE((*appender)->Close().ok());
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->kernels.size(), 2u);  // the refused creator truncated nothing
}

TEST(TraceLock, AFileBeingWrittenIsStillBeingRecordedNotTorn) {
  TempDir dir;
  const std::string path = dir.File("app.31.gpt");
  auto writer = StartRecording(path, 31, 4);
  // The writer is in the middle of its next chunk.
  const auto append_partial_chunk = [&path] {
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    const char partial[10] = {'G', 'C', 'H', 'K', 5, 0, 1, 0, 100, 0};
    ASSERT_EQ(::write(fd, partial, sizeof(partial)), static_cast<ssize_t>(sizeof(partial)));
    ::close(fd);
  };
  append_partial_chunk();
  auto live = LoadTrace(path);
  ASSERT_TRUE(live.ok()) << live.status().message();
  const ReadReport& read = live->read_report;
  ASSERT_EQ(read.being_recorded.size(), 1u);
  EXPECT_EQ(read.being_recorded[0].path, path);
  EXPECT_EQ(read.being_recorded[0].pid, 31u);
  EXPECT_EQ(read.bytes_truncated, 0u);
  EXPECT_EQ(live->kernels.size(), 4u);
  ASSERT_EQ(read.warnings.size(), 1u);
  EXPECT_EQ(read.warnings[0], path +
                                  " is still being recorded by pid 31: read as far as it is "
                                  "written");
  // What every output says of it.
  const DataLossSummary loss = SummarizeDataLoss(read, {UnfinishedProcess(31, false)});
  ASSERT_EQ(loss.rows.size(), 1u);
  EXPECT_EQ(loss.rows[0].stat, "process_recording");
  EXPECT_EQ(loss.line, "DATA LOSS: pid 31 is still being recorded (read as far as it is written)");
  EXPECT_EQ(loss.line.find("final flush"), std::string::npos);

  // Once its writer is gone, such bytes are a torn trace of an unfinished process. (A writer
  // that closes cuts a torn chunk of its own off: these are a writer's killed mid-chunk.)
  writer.reset();
  append_partial_chunk();
  auto ended = LoadTrace(path);
  ASSERT_TRUE(ended.ok());
  EXPECT_TRUE(ended->read_report.being_recorded.empty());
  EXPECT_EQ(ended->read_report.bytes_truncated, 10u);
}

TEST(TraceLock, AForkedChildLetsGoOfItsCopies) {
  TempDir dir;
  const std::string path = dir.File("app.99.gpt");
  auto writer = StartRecording(path, 99, 1);
  int to_parent[2], to_child[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_child), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    CloseTraceFilesInForkedChild();  // what the injection's atfork child handler does
    char byte = 1;
    if (::write(to_parent[1], &byte, 1) != 1) ::_exit(2);
    if (::read(to_child[0], &byte, 1) != 1) ::_exit(3);  // alive until the parent is done
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(to_parent[0], &byte, 1), 1);
  FinishRecording(*writer, 99);
  // The child still lives, and holds nothing.
  EXPECT_FALSE(Locked(path));
  EXPECT_TRUE(AppendToTrace(path).ok());
  ASSERT_EQ(::write(to_child[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) ::close(fd);
}

TEST(TraceLock, PidInTraceName) {
  EXPECT_EQ(PidInTraceName("/d/python3.12.1234.gpt"), 1234u);
  EXPECT_EQ(PidInTraceName("app.77-2.gpt"), 77u);
  EXPECT_EQ(PidInTraceName("dir/app.77.flight-3.gpt"), 77u);
  EXPECT_EQ(PidInTraceName("copy.gpt"), 0u);
  EXPECT_EQ(PidInTraceName("app.77.gpt.part"), 0u);
  EXPECT_EQ(PidInTraceName("app.99999999999.gpt"), 0u);
}

TEST(TraceDirectory, ALinkOrACopyOfATraceIsReadOnce) {
  TempDir dir;
  const std::string trace = dir.File("app.5.gpt");
  FinishRecording(*StartRecording(trace, 5, 3), 5);
  FinishRecording(*StartRecording(dir.File("app.6.gpt"), 6, 2), 6);
  std::filesystem::create_symlink("app.5.gpt", dir.File("b-symlink.gpt"));
  std::filesystem::create_hard_link(trace, dir.File("c-hardlink.gpt"));
  std::filesystem::copy_file(trace, dir.File("a-copy.gpt"));

  auto read = LoadTrace(dir.path().string());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->kernels.size(), 5u);
  EXPECT_EQ(read->read_report.files, 2u);
  EXPECT_EQ(read->read_report.files_duplicate, 3u);
  EXPECT_EQ(read->read_report.files_skipped, 0u);
  // a-copy.gpt comes first by name and is as large: it is the one kept; app.5.gpt and the
  // links to it are left out.
  const std::vector<std::string> expected = {
      "skipped " + trace + ": a copy of " + dir.File("a-copy.gpt") +
          " (the trace of the same process, pid 5): its records would count twice",
      "skipped " + dir.File("b-symlink.gpt") + ": the same file as " + trace + " (a link to it)",
      "skipped " + dir.File("c-hardlink.gpt") + ": the same file as " + trace + " (a link to it)",
  };
  EXPECT_EQ(read->read_report.warnings, expected);
}

TEST(TraceDirectory, OfTwoCopiesTheLargerIsKept) {
  TempDir dir;
  const std::string live = dir.File("b.8.gpt");
  auto writer = StartRecording(live, 8, 2);
  std::filesystem::copy_file(live, dir.File("a-early-copy.gpt"));  // 2 kernels
  for (int i = 0; i < 4; ++i) {
    KernelRecord kernel;
    kernel.pid = 8;
    kernel.start_ns = 5000 + i;
    writer->Add(kernel);
  }
  FinishRecording(*writer, 8);
  auto read = LoadTrace(dir.path().string());
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->kernels.size(), 6u);
  EXPECT_EQ(read->read_report.files_duplicate, 1u);
  ASSERT_EQ(read->read_report.warnings.size(), 1u);
  EXPECT_EQ(read->read_report.warnings[0],
            "skipped " + dir.File("a-early-copy.gpt") + ": a copy of " + live +
                " (the trace of the same process, pid 8): its records would count twice");
}

// The chunks of a file: (offset, size, type).
struct ChunkSpan {
  size_t offset, size;
  uint16_t type;
};
std::vector<ChunkSpan> Chunks(const std::string& bytes) {
  std::vector<ChunkSpan> chunks;
  for (size_t pos = format::kFileHeaderSize; pos + format::kChunkHeaderSize <= bytes.size();) {
    uint16_t type;
    uint32_t payload;
    std::memcpy(&type, bytes.data() + pos + 4, 2);
    std::memcpy(&payload, bytes.data() + pos + 8, 4);
    chunks.push_back({pos, format::kChunkHeaderSize + payload, type});
    pos += format::kChunkHeaderSize + payload;
  }
  return chunks;
}

// The one warning that reading the trace gave.
std::string OnlyWarning(const Trace& trace) {
  EXPECT_EQ(trace.read_report.warnings.size(), 1u);
  return trace.read_report.warnings.empty() ? "" : trace.read_report.warnings.back();
}

TEST(TraceChunks, ARepeatedRecordChunkIsReadOnceAndARepeatedStatsChunkIsKept) {
  TempDir dir;
  const std::string path = dir.File("app.3.gpt");
  {
    auto writer = StartRecording(path, 3, 4);  // two kernel chunks of 2
    writer->Add(StatRecord{3, 1, 10});
    ASSERT_TRUE(writer->Flush().ok());
    FinishRecording(*writer, 3);
  }
  const std::string bytes = ReadFileToString(path);
  std::string kernel_chunk, stats_chunk;
  for (const ChunkSpan& c : Chunks(bytes)) {
    if (c.type == 5 && kernel_chunk.empty()) kernel_chunk = bytes.substr(c.offset, c.size);
    if (c.type == 16) stats_chunk = bytes.substr(c.offset, c.size);
  }
  ASSERT_FALSE(kernel_chunk.empty());
  ASSERT_FALSE(stats_chunk.empty());
  WriteStringToFile(path, bytes + kernel_chunk + stats_chunk + kernel_chunk);
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->kernels.size(), 4u);
  EXPECT_EQ(trace->stats.size(), 2u);  // cumulative: read again, harmless
  EXPECT_EQ(trace->read_report.chunks_repeated, 2u);
  EXPECT_EQ(OnlyWarning(*trace),
            path +
                ": skipped 2 chunks that repeat an earlier one byte for byte (its records "
                "would count twice)");
}

TEST(TraceChunks, NamesDefinedAfterTheirUseAreOutOfOrderNotDamage) {
  TempDir dir;
  const std::string path = dir.File("app.4.gpt");
  FinishRecording(*StartRecording(path, 4, 2), 4);
  const std::string bytes = ReadFileToString(path);
  std::string strings, rest;
  for (const ChunkSpan& c : Chunks(bytes)) {
    (c.type == format::kChunkStrings ? strings : rest) += bytes.substr(c.offset, c.size);
  }
  ASSERT_FALSE(strings.empty());
  WriteStringToFile(path, bytes.substr(0, format::kFileHeaderSize) + rest + strings);
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->read_report.chunks_corrupt, 0u);
  EXPECT_EQ(OnlyWarning(*trace),
            path +
                ": 2 references to names or stacks defined only after their use: the file's "
                "chunks are out of order (was it edited or spliced?)");
}

}  // namespace
}  // namespace gpuperf
