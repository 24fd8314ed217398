// Ranks: per rank, communication and compute time and their overlap; per collective,
// who arrived last and by how much; how several hosts' clocks were aligned
// (analyze/ranks/ranks_analysis.h does the work). Sees every kernel, as utilization does.
#include "analyze/ranks/ranks_analysis.h"
#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

class RanksSection final : public ReportSection {
 public:
  explicit RanksSection(ReportContext& context)
      : analysis_(context.rank_scan(), context.clock_alignment(),
                  [&context](StringId id) -> std::string_view { return context.Str(id); }) {}

  void OnKernels(std::span<const KernelRecord> records) override { analysis_.AddKernels(records); }
  void OnLaunchLinks(std::span<const LaunchLinkRecord> records) override {
    analysis_.AddLaunchLinks(records);
  }
  void OnApiCalls(std::span<const ApiRecord> records) override { analysis_.AddApiCalls(records); }
  void OnNcclCollectives(std::span<const NcclCollectiveRecord> records) override {
    analysis_.AddNcclCollectives(records);
  }
  void Finish(ReportModel& model) override { model.ranks = analysis_.Finish(); }

 private:
  RanksAnalysis analysis_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeRanksSection(ReportContext& context) {
  return std::make_unique<RanksSection>(context);
}

}  // namespace gpuperf::report
