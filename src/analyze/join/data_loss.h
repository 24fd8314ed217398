// What was lost while recording or reading a trace, computed in one place so every output
// (record's summary, report, flame graph SVG, folded stacks, Perfetto/Chrome timelines, diff)
// says the same: each reads the reader's ReadReport and the recorders' counters through
// SummarizeDataLoss, and none decides on its own what counts as loss.
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
// sink that sees every record feeds it (record's summary, flame graph, timeline, report).
class RecordingLossCollector {
 public:
  void AddStats(std::span<const StatRecord> records);
  void AddProcesses(std::span<const ProcessRecord> records);
  // Non-zero data-loss counters, by pid then stat id, plus one row per process image that
  // ended before its final flush (a program that execs keeps its pid: each image is told
  // apart by its start).
  std::vector<RecordingLoss> Rows() const;
  // Every process image seen, (pid, start_ns) -> whether its final flush is in the trace.
  const std::map<std::pair<uint32_t, uint64_t>, bool>& images() const { return images_; }

 private:
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> stats_;  // (pid, stat) -> largest value
  std::map<std::pair<uint32_t, uint64_t>, bool> images_;     // (pid, start_ns) -> finished
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

// Whether a row is loss: every row is but a process still being recorded ("process_recording":
// read as far as its trace is written, its end still to come).
bool IsLoss(const DataLossRow& row);

// One kind of loss added up over processes: what record's summary prints (report lists the
// rows per process).
struct DataLossTotal {
  std::string stat;
  uint64_t value = 0;
  std::string description;
  std::vector<uint32_t> pids;  // the processes whose rows were added, in order
};

// The loss rows of `summary` (IsLoss), one total per stat, in the order of their first row.
std::vector<DataLossTotal> TotalDataLoss(const DataLossSummary& summary);

}  // namespace gpuperf
