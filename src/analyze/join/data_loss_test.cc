#include "analyze/join/data_loss.h"

#include <gtest/gtest.h>

#include "gpuperf/stats.h"

namespace gpuperf {
namespace {

TEST(DataLossTest, UndamagedTraceHasNoLossAndNoLine) {
  ReadReport read;
  read.files = 1;
  read.chunks_read = 31;
  read.chunks_unknown = 2;  // a newer gpuperf's chunks are a warning, not loss
  RecordingLossCollector collector;
  collector.AddProcesses(std::vector<ProcessRecord>{{.pid = 7, .end_ns = 100}});
  collector.AddStats(std::vector<StatRecord>{{7, static_cast<uint32_t>(StatId::callbacks), 50}});
  const DataLossSummary s = SummarizeDataLoss(read, collector.Rows());
  EXPECT_FALSE(s.any());
  EXPECT_EQ(s.line, "");
}

TEST(DataLossTest, ReaderLossRowsSayTheirUnits) {
  ReadReport read;
  read.files_skipped = 1;
  read.files_without_chunks = 2;
  read.chunks_corrupt = 3;
  read.bytes_truncated = 4096;
  const DataLossSummary s = SummarizeDataLoss(read);
  ASSERT_EQ(s.rows.size(), 4u);
  EXPECT_EQ(s.rows[0].stat, "files_skipped");
  EXPECT_EQ(s.rows[0].unit, "files");
  EXPECT_EQ(s.rows[1].unit, "files");
  EXPECT_EQ(s.rows[2].unit, "chunks");
  EXPECT_EQ(s.rows[3].unit, "bytes");
  EXPECT_EQ(s.rows[3].value, 4096u);
  EXPECT_EQ(s.line,
            "DATA LOSS: 1 trace file skipped; 2 files have no complete chunk: nothing "
            "recoverable; 3 damaged chunks skipped; the trace ends inside a chunk (records "
            "after the last complete chunk are missing)");
}

TEST(DataLossTest, RecorderCountersKeepTheirLargestSnapshotAndUnit) {
  RecordingLossCollector collector;
  const auto dropped = static_cast<uint32_t>(StatId::cupti_dropped_records);
  const auto queue = static_cast<uint32_t>(StatId::writer_queue_full);
  collector.AddStats(std::vector<StatRecord>{{9, dropped, 10}, {9, dropped, 25}, {9, queue, 2}});
  collector.AddStats(std::vector<StatRecord>{{9, dropped, 20}});  // an older snapshot
  collector.AddProcesses(std::vector<ProcessRecord>{{.pid = 9, .end_ns = 0}});
  const std::vector<RecordingLoss> rows = collector.Rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].stat, "cupti_dropped_records");
  EXPECT_EQ(rows[0].value, 25u);
  EXPECT_EQ(rows[0].unit, "records");
  EXPECT_EQ(rows[1].stat, "writer_queue_full");
  EXPECT_EQ(rows[1].unit, "batches");
  EXPECT_EQ(rows[2].stat, "process_incomplete");
  EXPECT_EQ(rows[2].unit, "processes");
  const DataLossSummary s = SummarizeDataLoss(ReadReport{}, rows);
  EXPECT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.line,
            "DATA LOSS: pid 9 cupti_dropped_records = 25 (records); pid 9 writer_queue_full = 2 "
            "(batches); pid 9 process_incomplete = 1 (processes)");
}

TEST(DataLossTest, AProcessSeenAgainWithItsEndIsComplete) {
  RecordingLossCollector collector;
  collector.AddProcesses(std::vector<ProcessRecord>{{.pid = 3, .end_ns = 0}});
  collector.AddProcesses(std::vector<ProcessRecord>{{.pid = 3, .end_ns = 500}});
  EXPECT_TRUE(collector.Rows().empty());
}

TEST(DataLossTest, AnImageThatExecedAwayIsIncompleteThoughItsPidFinished) {
  // exec keeps the pid: the old image (start 10) has no end, the new one (start 20) has.
  RecordingLossCollector collector;
  collector.AddProcesses(std::vector<ProcessRecord>{{.pid = 3, .start_ns = 20, .end_ns = 0}});
  collector.AddProcesses(std::vector<ProcessRecord>{{.pid = 3, .start_ns = 20, .end_ns = 900},
                                                    {.pid = 3, .start_ns = 10, .end_ns = 0}});
  const std::vector<RecordingLoss> rows = collector.Rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].stat, "process_incomplete");
  EXPECT_EQ(collector.images().size(), 2u);
}

TEST(DataLossTest, RecordsNotWrittenAreCountedByKind) {
  RecordingLossCollector collector;
  collector.AddStats(
      std::vector<StatRecord>{{4, static_cast<uint32_t>(StatId::write_errors), 3},
                              {4, kNotWrittenStats + 5, 1000},    // KernelRecord's chunk type
                              {4, kNotWrittenStats + 13, 700}});  // LaunchLinkRecord's
  const DataLossSummary s = SummarizeDataLoss(ReadReport{}, collector.Rows());
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].stat, "write_errors");
  EXPECT_EQ(s.rows[1].stat, "kernels_not_written");
  EXPECT_EQ(s.rows[1].value, 1000u);
  EXPECT_EQ(s.rows[1].unit, "records");
  EXPECT_EQ(s.rows[2].stat, "launch_links_not_written");
}

TEST(DataLossTest, TotalsAddUpProcessesPerKindInOrderOfFirstRow) {
  RecordingLossCollector collector;
  const auto dropped = static_cast<uint32_t>(StatId::cupti_dropped_records);
  collector.AddStats(std::vector<StatRecord>{{1, dropped, 5}, {2, dropped, 7}});
  collector.AddProcesses(
      std::vector<ProcessRecord>{{.pid = 1}, {.pid = 2, .end_ns = 5}, {.pid = 8}});
  ReadReport read;
  read.chunks_corrupt = 2;
  const std::vector<DataLossTotal> totals =
      TotalDataLoss(SummarizeDataLoss(read, collector.Rows()));
  ASSERT_EQ(totals.size(), 3u);
  EXPECT_EQ(totals[0].stat, "chunks_corrupt");
  EXPECT_EQ(totals[0].value, 2u);
  EXPECT_TRUE(totals[0].pids.empty());
  EXPECT_EQ(totals[1].stat, "cupti_dropped_records");
  EXPECT_EQ(totals[1].value, 12u);
  EXPECT_EQ(totals[1].pids, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(totals[2].stat, "process_incomplete");
  EXPECT_EQ(totals[2].value, 2u);
  EXPECT_EQ(totals[2].pids, (std::vector<uint32_t>{1, 8}));
}

}  // namespace
}  // namespace gpuperf
