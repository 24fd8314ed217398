// What was lost while recording or reading a trace, computed in one place so every output
// (report, flame graph SVG, folded stacks, Perfetto/Chrome timelines, diff) says the same.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/records.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

// One non-zero counter of loss, with the unit it counts (records, bytes, chunks, files).
struct DataLossRow {
  std::optional<uint32_t> pid;  // absent for problems found by the reader
  std::string stat;             // machine name, e.g. "bytes_truncated"
  uint64_t value = 0;
  std::string unit;         // "records", "bytes", "chunks", "files", "processes"
  std::string description;  // what the value counts, for humans
};

struct DataLossSummary {
  std::vector<DataLossRow> rows;
  bool any() const { return !rows.empty(); }
  // One line without a trailing newline, e.g. "DATA LOSS: 1 damaged chunk skipped; ...";
  // empty when nothing was lost.
  std::string line;
};

// A recording-side loss counter of one process (a StatId of severity data_loss).
struct RecordingLoss {
  uint32_t pid = 0;
  std::string stat;
  uint64_t value = 0;
  std::string unit;
  std::string description;
};

// Gathers the recorders' loss counters and unfinished processes from the records; any
// sink that sees every record feeds it (flame graph, timeline, report).
class RecordingLossCollector {
 public:
  void AddStats(std::span<const StatRecord> records);
  void AddProcesses(std::span<const ProcessRecord> records);
  // Non-zero data-loss counters, by pid then stat id, plus one row per process that
  // ended before its final flush.
  std::vector<RecordingLoss> Rows() const;

 private:
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> stats_;  // (pid, stat) -> largest value
  std::map<uint32_t, uint64_t> process_end_ns_;              // pid -> latest end_ns
};

// The row of a process whose trace holds no final flush: it ended before it
// ("process_incomplete", data loss) or, `still_recording`, its trace is still being
// written (ReadReport::being_recorded): nothing is lost, its end is still to come.
RecordingLoss UnfinishedProcess(uint32_t pid, bool still_recording);

// Loss the reader found (damaged or torn chunks, files with nothing recoverable, skipped
// files) plus what the recorders counted; an unfinished process that is still being
// recorded is said to be.
DataLossSummary SummarizeDataLoss(const ReadReport& read,
                                  const std::vector<RecordingLoss>& recording = {});

}  // namespace gpuperf
