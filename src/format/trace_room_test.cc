// A trace written under the file size limit (`ulimit -f`): chunks land whole or not at all,
// what was left out is counted, the trace's end still fits, and no write ends the process
// with SIGXFSZ.
#include "format/trace_room.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>

#include "gpuperf/trace_reader.h"
#include "gpuperf/trace_writer.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

// Lowers this process's soft file size limit while it lives.
class FileSizeLimitScope {
 public:
  explicit FileSizeLimitScope(uint64_t bytes) {
    getrlimit(RLIMIT_FSIZE, &old_);
    rlimit lowered = old_;
    lowered.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &lowered);
  }
  ~FileSizeLimitScope() { setrlimit(RLIMIT_FSIZE, &old_); }

 private:
  rlimit old_{};
};

class KernelsAndEnd final : public RecordSink {
 public:
  void OnKernel(std::span<const KernelRecord> records) override { kernels += records.size(); }
  void OnProcess(std::span<const ProcessRecord> records) override {
    for (const ProcessRecord& p : records) ended = ended || p.end_ns != 0;
  }
  uint64_t kernels = 0;
  bool ended = false;
};

KernelRecord NumberedKernel(uint32_t i) {
  KernelRecord k;
  k.pid = 9;
  // Times that do not compress to nothing, as real ones do not.
  k.start_ns = 1000 + uint64_t{i} * 7919 + (uint64_t{i} * 2654435761u) % 977;
  k.end_ns = k.start_ns + 100 + (i * 31) % 400;
  k.correlation_id = i;
  return k;
}

TEST(TraceRoom, AFileSizeLimitCostsWholeCountedChunksAndKeepsTheEnd) {
  testing::TempDir dir;
  const std::string path = dir.File("limited.gpt");
  constexpr uint64_t kLimit = 48 << 10;
  constexpr uint32_t kKernels = 40000;
  TraceWriterStats stats;
  {
    FileSizeLimitScope limit(kLimit);
    TraceWriterOptions options;
    options.records_per_chunk = 512;
    auto writer = TraceWriter::Create(path, options);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    ProcessRecord process{.pid = 9, .start_ns = 1};
    (*writer)->Add(process);
    for (uint32_t i = 0; i < kKernels; ++i) (*writer)->Add(NumberedKernel(i));
    const Status data = (*writer)->Flush();
    EXPECT_NE(data.message().find("file size limit"), std::string::npos) << data.message();
    // The end, as the injection library writes it, at its largest: every counter set, to
    // values that do not compress, and the process's final record.
    process.end_ns = 2;
    (*writer)->Add(process);
    for (uint32_t stat = 1; stat < kStatSlots; ++stat) {
      (*writer)->Add(StatRecord{9, stat, stat * 0x9E3779B97F4A7C15ull});
    }
    EXPECT_TRUE((*writer)->Close().ok());
    stats = (*writer)->stats();
  }
  EXPECT_LE(std::filesystem::file_size(path), kLimit);
  KernelsAndEnd counts;
  ReadReport report;
  ASSERT_TRUE(ReadTrace(path, counts, &report).ok());
  EXPECT_EQ(report.chunks_corrupt, 0u);
  EXPECT_EQ(report.bytes_truncated, 0u);
  const uint64_t kernels_not_written = stats.records_not_written[5];  // KernelRecord's chunks
  EXPECT_GT(counts.kernels, 0u);
  EXPECT_GT(kernels_not_written, 0u);
  EXPECT_EQ(counts.kernels + kernels_not_written, kKernels);
  EXPECT_GT(stats.write_errors, 0u);
  EXPECT_TRUE(counts.ended) << "the end did not fit in the reserve";
}

TEST(TraceRoom, NoRoomForTheHeaderIsAnErrorNotASignal) {
  testing::TempDir dir;
  const std::string path = dir.File("none.gpt");
  Status status;
  {
    FileSizeLimitScope limit(8);
    status = TraceWriter::Create(path).status();
  }
  EXPECT_NE(status.message().find("cannot write trace file " + path +
                                  ": the file size limit (ulimit -f) of 8 bytes is reached"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace gpuperf
