// What the recording and the reading lost: every non-zero data-loss or warning counter
// of each process, processes that never wrote their final flush (or are still being
// recorded), and damaged files.
#include "analyze/join/data_loss.h"
#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

class LossSection final : public ReportSection {
 public:
  explicit LossSection(ReportContext& context) : context_(context) {}

  void Finish(ReportModel& model) override {
    const ReadReport& read = context_.read_report();
    for (const auto& [pid, p] : context_.processes()) {
      for (uint32_t id = 0; id < kStatSlots; ++id) {
        const uint64_t value = p.stats.values[id];
        if (value == 0) continue;
        const StatInfo info = GetStatInfo(id);
        if (info.severity == StatSeverity::kInfo) continue;
        model.loss.push_back({pid, std::string(info.name),
                              info.severity == StatSeverity::kDataLoss ? "data_loss" : "warning",
                              value, std::string(info.description)});
      }
      if (p.process && p.process->end_ns == 0) {
        const bool still_recording = read.StillRecording(pid);
        const RecordingLoss row = UnfinishedProcess(pid, still_recording);
        model.loss.push_back(
            {pid, row.stat, still_recording ? "warning" : "data_loss", 1, row.description});
      }
    }
    auto reader_loss = [&](const char* stat, const char* severity, uint64_t value,
                           const char* description) {
      if (value > 0) model.loss.push_back({std::nullopt, stat, severity, value, description});
    };
    // The reader's loss (skipped files, files with nothing recoverable, damaged and torn
    // chunks) is the one every output shows (analyze/join/data_loss.h).
    for (const DataLossRow& row : SummarizeDataLoss(read).rows) {
      model.loss.push_back({std::nullopt, row.stat, "data_loss", row.value, row.description});
    }
    reader_loss("chunks_unknown", "warning", read.chunks_unknown,
                "chunks of a newer gpuperf's record types that were skipped");
    model.read_warnings = read.warnings;
  }

 private:
  ReportContext& context_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeLossSection(ReportContext& context) {
  return std::make_unique<LossSection>(context);
}

}  // namespace gpuperf::report
