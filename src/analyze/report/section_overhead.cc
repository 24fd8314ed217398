// The profiler's own cost: CUPTI's overhead records by kind, and gpuperf's counters
// (callback time on the application's threads, background translation and writing).
#include <algorithm>
#include <array>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

class OverheadSection final : public ReportSection {
 public:
  explicit OverheadSection(ReportContext& context) : context_(context) {}

  void OnOverheads(std::span<const OverheadRecord> records) override {
    for (const OverheadRecord& o : records) {
      AddDuration(cupti_[static_cast<size_t>(o.kind) % cupti_.size()],
                  Duration(o.start_ns, o.end_ns));
    }
  }

  // Runs after the processes section, whose rows give the wall time.
  void Finish(ReportModel& model) override {
    OverheadSummary& o = model.overhead;
    for (size_t kind = 0; kind < cupti_.size(); ++kind) {
      if (cupti_[kind].count == 0) continue;
      o.cupti.push_back({static_cast<OverheadKind>(kind), cupti_[kind]});
      o.cupti_ns += cupti_[kind].total_ns;
    }
    StatCounters all;
    for (const auto& [pid, p] : context_.processes()) all += p.stats;
    o.callbacks = all[StatId::callbacks];
    o.callback_ns = all[StatId::callback_ns];
    o.unwind_ns = all[StatId::unwind_ns];
    o.unique_stacks = all[StatId::unique_stacks];
    o.fp_stacks_verified = all[StatId::fp_stacks_verified];
    o.fp_stacks_rejected = all[StatId::fp_stacks_rejected];
    o.stacks_unwound = all[StatId::stacks_unwound];
    o.table_stacks = all[StatId::table_stacks];
    o.table_fallback_no_table = all[StatId::table_fallback_no_table];
    o.table_fallback_rule = all[StatId::table_fallback_rule];
    o.unwind_verified = all[StatId::unwind_verified];
    o.translate_ns = all[StatId::translate_ns];
    o.compress_ns = all[StatId::compress_ns];
    o.memory_budget_grown = all[StatId::memory_budget_grown];
    o.python_codes = all[StatId::python_codes];
    o.python_no_thread_state = all[StatId::python_no_thread_state];
    // Peaks of separate processes do not add up: the largest one is shown.
    for (const auto& [pid, p] : context_.processes()) {
      o.memory_peak_bytes = std::max(o.memory_peak_bytes, p.stats[StatId::memory_peak_bytes]);
    }
    for (const ProcessRow& p : model.processes) o.wall_ns += p.wall_ns;
  }

 private:
  ReportContext& context_;
  std::array<DurationStats, 16> cupti_{};  // by OverheadKind
};

}  // namespace

std::unique_ptr<ReportSection> MakeOverheadSection(ReportContext& context) {
  return std::make_unique<OverheadSection>(context);
}

}  // namespace gpuperf::report
