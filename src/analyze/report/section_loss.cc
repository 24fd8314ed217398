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
    // What was lost is what every output shows, record's summary included: the reader's
    // loss and the recorders' (analyze/data_loss.h), never a count of this section's own. A
    // process still being recorded lost nothing: a warning.
    for (const DataLossRow& row : SummarizeDataLoss(read, context_.recording_loss().Rows()).rows) {
      model.loss.push_back(
          {row.pid, row.stat, IsLoss(row) ? "data_loss" : "warning", row.value, row.description});
    }
    // Then what degraded without losing records.
    for (const auto& [pid, p] : context_.processes()) {
      for (uint32_t id = 0; id < kStatSlots; ++id) {
        const uint64_t value = p.stats.values[id];
        const StatInfo info = GetStatInfo(id);
        if (value == 0 || info.severity != StatSeverity::kWarning) continue;
        model.loss.push_back(
            {pid, std::string(info.name), "warning", value, std::string(info.description)});
      }
    }
    if (read.chunks_unknown > 0) {
      model.loss.push_back({std::nullopt, "chunks_unknown", "warning", read.chunks_unknown,
                            "chunks of a newer gpuperf's record types that were skipped"});
    }
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
