// ReadTraceChunks: a look at a few record kinds of a trace without decoding the rest.
#include <gtest/gtest.h>

#include "gpuperf/trace.h"
#include "gpuperf/trace_writer.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

class Collect final : public RecordSink {
 public:
  void OnString(StringId id, std::string_view text) override {
    if (strings.size() <= id) strings.resize(id + 1);
    strings[id] = std::string(text);
  }
  void OnRank(std::span<const RankRecord> records) override {
    ranks.insert(ranks.end(), records.begin(), records.end());
  }
  void OnClock(std::span<const ClockRecord> records) override { clocks += records.size(); }
  void OnKernel(std::span<const KernelRecord> records) override { kernels += records.size(); }
  void OnStack(const StackRecord&) override { ++stacks; }

  std::vector<std::string> strings{std::string()};
  std::vector<RankRecord> ranks;
  size_t clocks = 0, kernels = 0, stacks = 0;
};

TEST(TraceChunks, ReadsOnlyTheChosenRecordKindsAndTheirStrings) {
  testing::TempDir dir;
  const std::string path = dir.File("r.gpt");
  {
    TraceWriterOptions options;
    options.records_per_chunk = 4;  // many chunks of each kind, interleaved
    auto writer = TraceWriter::Create(path, options);
    ASSERT_TRUE(writer.ok());
    (*writer)->AddStack(StackRecord{9, 1, {0x1234}});
    for (uint32_t i = 0; i < 10; ++i) {
      KernelRecord k;
      k.pid = 9;
      k.name = (*writer)->InternString("kernel" + std::to_string(i));
      k.start_ns = 100 * i;
      k.end_ns = 100 * i + 50;
      (*writer)->Add(k);
      (*writer)->Add(ClockRecord{9, 1000 + i, 5000 + i});
    }
    RankRecord rank;
    rank.pid = 9;
    rank.rank = 3;
    rank.world_size = 8;
    rank.boot_id = (*writer)->InternString("boot-a");
    (*writer)->Add(rank);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  const uint16_t wanted[] = {15, 22};  // clocks, ranks
  Collect sink;
  ReadReport report;
  ASSERT_TRUE(ReadTraceChunks(path, wanted, sink, &report).ok());
  EXPECT_EQ(sink.kernels, 0u);
  EXPECT_EQ(sink.stacks, 0u);
  EXPECT_EQ(sink.clocks, 10u);
  ASSERT_EQ(sink.ranks.size(), 1u);
  EXPECT_EQ(sink.ranks[0].rank, 3);
  EXPECT_EQ(sink.ranks[0].world_size, 8);
  EXPECT_EQ(sink.strings.at(sink.ranks[0].boot_id), "boot-a");
  EXPECT_TRUE(report.warnings.empty());

  // An empty list reads everything, as ReadTrace does.
  Collect all;
  ASSERT_TRUE(ReadTraceChunks(path, {}, all, nullptr).ok());
  EXPECT_EQ(all.kernels, 10u);
  EXPECT_EQ(all.stacks, 1u);
}

}  // namespace
}  // namespace gpuperf
