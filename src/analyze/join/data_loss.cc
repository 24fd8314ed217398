#include "analyze/join/data_loss.h"

#include <algorithm>
#include <string>

#include "gpuperf/stats.h"

namespace gpuperf {
namespace {

// What each recording-side loss counter counts (its description says the same in words).
const char* StatUnit(StatId id) {
  switch (id) {
    case StatId::writer_queue_full:
      return "batches";
    case StatId::launch_links_dropped:
    case StatId::stack_table_full:
      return "stacks";
    case StatId::unwind_failed:
      return "launches";
    case StatId::write_errors:
      return "chunks";
    case StatId::api_calls_dropped:
      return "calls";
    case StatId::activity_buffers_taken:
      return "takeovers";
    default:
      return "records";
  }
}

std::string Plural(uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

void RecordingLossCollector::AddStats(std::span<const StatRecord> records) {
  // Counters are cumulative snapshots: the largest value seen is the final one.
  for (const StatRecord& r : records) {
    if (GetStatInfo(r.stat).severity != StatSeverity::kDataLoss) continue;
    uint64_t& value = stats_[{r.pid, r.stat}];
    value = std::max(value, r.value);
  }
}

void RecordingLossCollector::AddProcesses(std::span<const ProcessRecord> records) {
  // A process writes its record at start (end_ns 0) and again at its final flush.
  for (const ProcessRecord& p : records) {
    bool& finished = images_[{p.pid, p.start_ns}];
    finished = finished || p.end_ns != 0;
  }
}

std::vector<RecordingLoss> RecordingLossCollector::Rows() const {
  std::vector<RecordingLoss> rows;
  for (const auto& [key, value] : stats_) {
    if (value == 0) continue;
    const StatInfo info = GetStatInfo(key.second);
    rows.push_back({key.first, std::string(info.name), value,
                    StatUnit(static_cast<StatId>(key.second)), std::string(info.description)});
  }
  for (const auto& [image, finished] : images_) {
    if (!finished) rows.push_back(UnfinishedProcess(image.first, false));
  }
  return rows;
}

RecordingLoss UnfinishedProcess(uint32_t pid, bool still_recording) {
  if (still_recording) {
    return {pid, "process_recording", 1, "processes",
            "the process is still being recorded: read as far as its trace is written"};
  }
  return {pid, "process_incomplete", 1, "processes",
          "the process ended before its final flush: records of its last moments are missing"};
}

DataLossSummary SummarizeDataLoss(const ReadReport& read,
                                  const std::vector<RecordingLoss>& recording) {
  DataLossSummary s;
  std::vector<std::string> parts;
  auto reader_row = [&](const char* stat, uint64_t value, const char* unit, const char* description,
                        std::string part) {
    if (value == 0) return;
    s.rows.push_back({std::nullopt, stat, value, unit, description});
    parts.push_back(std::move(part));
  };
  reader_row("files_skipped", read.files_skipped, "files",
             "trace files that could not be read (their records are all missing)",
             Plural(read.files_skipped, "trace file", "trace files") + " skipped");
  reader_row("files_without_chunks", read.files_without_chunks, "files",
             "trace files with no complete chunk: nothing recoverable",
             Plural(read.files_without_chunks, "file has", "files have") +
                 " no complete chunk: nothing recoverable");
  reader_row("chunks_corrupt", read.chunks_corrupt, "chunks",
             "damaged chunks of the trace file that were skipped (their record count is unknown)",
             Plural(read.chunks_corrupt, "damaged chunk", "damaged chunks") + " skipped");
  reader_row("bytes_truncated", read.bytes_truncated, "bytes",
             "bytes after the last complete chunk (a torn chunk; whatever was recorded after "
             "it is missing too, how many records is unknown)",
             "the trace ends inside a chunk (records after the last complete chunk are missing)");
  // The line names the first few recorder counters; the rows have them all.
  constexpr size_t kNamedInLine = 3;
  size_t recorded = 0;
  for (const RecordingLoss& row : recording) {
    if (row.value == 0) continue;
    // The records say only that the process wrote no end; the reader knows whether a
    // process still writes its file.
    const bool still_recording = row.stat == "process_incomplete" && read.StillRecording(row.pid);
    const RecordingLoss r = still_recording ? UnfinishedProcess(row.pid, true) : row;
    s.rows.push_back({r.pid, r.stat, r.value, r.unit, r.description});
    if (still_recording) {
      parts.insert(parts.begin(), "pid " + std::to_string(r.pid) +
                                      " is still being recorded (read as far as it is written)");
    } else if (++recorded <= kNamedInLine) {
      parts.push_back("pid " + std::to_string(r.pid) + " " + r.stat + " = " +
                      std::to_string(r.value) + " (" + r.unit + ")");
    }
  }
  if (recorded > kNamedInLine) {
    parts.push_back(std::to_string(recorded - kNamedInLine) + " more recorder loss counters");
  }
  if (!parts.empty()) {
    s.line = "DATA LOSS: ";
    for (size_t i = 0; i < parts.size(); ++i) s.line += (i ? "; " : "") + parts[i];
  }
  return s;
}

bool IsLoss(const DataLossRow& row) {
  return row.stat != UnfinishedProcess(0, true).stat;
}

std::vector<DataLossTotal> TotalDataLoss(const DataLossSummary& summary) {
  std::vector<DataLossTotal> totals;
  for (const DataLossRow& row : summary.rows) {
    if (!IsLoss(row)) continue;
    auto it = std::find_if(totals.begin(), totals.end(),
                           [&](const DataLossTotal& t) { return t.stat == row.stat; });
    if (it == totals.end()) it = totals.insert(totals.end(), {row.stat, 0, row.description, {}});
    it->value += row.value;
    if (row.pid) it->pids.push_back(*row.pid);
  }
  return totals;
}

}  // namespace gpuperf
