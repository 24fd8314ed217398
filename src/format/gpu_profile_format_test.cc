// Hardware metric records (doubles in fixed records) and the PC sampling chunk (type 35):
// round trips across the files of a directory, damage, and chunks of a newer gpuperf.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "format/file_format.h"
#include "format/text_dump.h"
#include "format/varint.h"
#include "gpuperf/trace.h"
#include "gpuperf/trace_writer.h"
#include "support/raw_chunk.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::RawChunk;
using testing::ReadFileToString;
using testing::TempDir;
using testing::WriteStringToFile;

// One process's PC sampling records, as the injection library and `record` write them.
void WriteProfile(TraceWriter& w, uint32_t pid, uint64_t crc) {
  w.InternString(pid == 1 ? "only-in-1" : "only-in-2");  // shifts the file-local ids
  const StringId kernel = w.InternString("_Z8hot_loopPfPKfii");
  const StringId file = w.InternString("/src/hot.cu");
  w.AddCubin(CubinRecord{pid, crc, 10520, w.InternString("cubins/" + std::to_string(crc))});
  w.AddSassLine(SassLineRecord{crc, kernel, 0x230, file, 8, w.InternString("FFMA R4, R2, R3, R4")});
  PcSampleRecord sample;
  sample.pid = pid;
  sample.cubin_crc = crc;
  sample.function = kernel;
  sample.pc_offset = 0x230;
  sample.stalls = {{w.InternString("smsp__pcsamp_warps_issue_stalled_math_pipe_throttle"), 700},
                   {w.InternString("smsp__pcsamp_warps_issue_stalled_selected"), pid * 5}};
  w.AddPcSample(sample);
}

TEST(GpuProfileFormat, PcSamplesCubinsAndLinesRoundTripAcrossFiles) {
  TempDir dir;
  for (uint32_t pid : {1u, 2u}) {
    auto writer = TraceWriter::Create(dir.File("app." + std::to_string(pid) + ".gpt"));
    ASSERT_TRUE(writer.ok());
    WriteProfile(**writer, pid, 0xabcdef0123456789ull + pid);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  auto trace = LoadTrace(dir.path().string());
  ASSERT_TRUE(trace.ok()) << trace.status().message();
  EXPECT_EQ(trace->read_report.chunks_corrupt, 0u);
  EXPECT_EQ(trace->read_report.chunks_unknown, 0u);
  ASSERT_EQ(trace->pc_samples.size(), 2u);
  ASSERT_EQ(trace->cubins.size(), 2u);
  ASSERT_EQ(trace->sass_lines.size(), 2u);
  const PcSampleRecord& second = trace->pc_samples[1];
  EXPECT_EQ(second.pid, 2u);
  EXPECT_EQ(second.cubin_crc, 0xabcdef0123456789ull + 2);
  EXPECT_EQ(second.pc_offset, 0x230u);
  EXPECT_EQ(trace->str(second.function), "_Z8hot_loopPfPKfii");
  ASSERT_EQ(second.stalls.size(), 2u);
  EXPECT_EQ(trace->str(second.stalls[0].reason),
            "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle");
  EXPECT_EQ(second.stalls[0].samples, 700u);
  EXPECT_EQ(second.stalls[1].samples, 10u);
  // One global id per text, whichever file defined it.
  EXPECT_EQ(trace->pc_samples[0].function, second.function);
  EXPECT_EQ(trace->sass_lines[0].file, trace->sass_lines[1].file);
  EXPECT_EQ(trace->str(trace->sass_lines[1].instruction), "FFMA R4, R2, R3, R4");
  EXPECT_EQ(trace->sass_lines[1].line, 8u);
  EXPECT_EQ(trace->cubins[0].bytes, 10520u);

  std::ostringstream out;
  ASSERT_TRUE(DumpTrace(dir.File("app.2.gpt"), out, nullptr).ok());
  const std::string text = out.str();
  EXPECT_NE(text.find("pc_sample pid=2 cubin=0xabcdef012345678b function=\"_Z8hot_loopPfPKfii\" "
                      "pc=0x230 correlation_id=0 stall=\"smsp__pcsamp_warps_issue_stalled_math_"
                      "pipe_throttle\":700"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sass_line cubin=0xabcdef012345678b function=\"_Z8hot_loopPfPKfii\" "
                      "pc=0x230 file=\"/src/hot.cu\" line=8 instruction=\"FFMA R4, R2, R3, R4\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cubin pid=2 crc=0xabcdef012345678b bytes=10520"), std::string::npos);
}

TEST(GpuProfileFormat, MetricValuesKeepEveryBitOfTheirDoubles) {
  TempDir dir;
  const std::string path = dir.File("m.gpt");
  auto writer = TraceWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  MetricRangeRecord range;
  range.pid = 9;
  range.range_id = 1;
  range.kind = MetricRangeKind::kKernel;
  range.name = (*writer)->InternString("_Z4copyPfS_");
  range.metric_set = (*writer)->InternString("basic");
  range.passes = 9;
  range.serialized = 1;
  range.start_ns = 1000;
  range.end_ns = 5000;
  (*writer)->Add(range);
  const double values[] = {
      92.71828182845905, 3.1e12, 0.0, -1.5, 1e-300, std::numeric_limits<double>::quiet_NaN()};
  for (double v : values) {
    (*writer)->Add(MetricValueRecord{9, 1, (*writer)->InternString("m" + std::to_string(v)), v});
  }
  ASSERT_TRUE((*writer)->Close().ok());
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  ASSERT_EQ(trace->metric_values.size(), std::size(values));
  for (size_t i = 0; i + 1 < std::size(values); ++i) {
    EXPECT_EQ(trace->metric_values[i].value, values[i]) << i;
  }
  EXPECT_TRUE(std::isnan(trace->metric_values.back().value));
  ASSERT_EQ(trace->metric_ranges.size(), 1u);
  EXPECT_EQ(trace->metric_ranges[0].kind, MetricRangeKind::kKernel);
  EXPECT_EQ(trace->metric_ranges[0].end_ns, 5000u);

  std::ostringstream out;
  ASSERT_TRUE(DumpTrace(path, out, nullptr).ok());
  EXPECT_NE(out.str().find("metric_range pid=9 range_id=1 kind=kernel name=\"_Z4copyPfS_\" "
                           "metric_set=\"basic\""),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("metric_value pid=9 range_id=1 metric=\"m92.718282\" "
                           "value=92.71828183"),
            std::string::npos)
      << out.str();
}

// A chunk 35 of a record kind from a newer gpuperf is skipped and counted, as an unknown
// chunk type is; one whose stall list runs past its end is damage.
TEST(GpuProfileFormat, UnknownKindIsSkippedAndDamageIsCounted) {
  TempDir dir;
  const std::string path = dir.File("p.gpt");
  {
    auto writer = TraceWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    WriteProfile(**writer, 1, 77);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  std::string future;
  format::PutVarint(future, 200);  // a kind this reader does not know
  format::PutVarint(future, 1);
  std::string damaged;
  format::PutVarint(damaged, 1);  // PC samples
  for (uint64_t v : {1, 5, 0, 16, 0}) format::PutVarint(damaged, v);
  format::PutVarint(damaged, 3);  // three stalls, none present
  WriteStringToFile(path, ReadFileToString(path) + RawChunk(format::kChunkGpuProfile, future, 1) +
                              RawChunk(format::kChunkGpuProfile, damaged, 1));
  auto trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->read_report.chunks_unknown, 1u);
  EXPECT_EQ(trace->read_report.chunks_corrupt, 1u);
  EXPECT_EQ(trace->pc_samples.size(), 1u);  // the good one, from before
}

}  // namespace
}  // namespace gpuperf
