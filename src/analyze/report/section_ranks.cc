// Ranks: per rank, communication and compute time and their overlap; per collective,
// who arrived last and by how much; how several hosts' clocks were aligned
// (analyze/ranks/ranks_analysis.h does the work). Sees every kernel, as utilization does.
// When the coordinator analysed the job's ranks already (its files in parallel, before this
// reading: nothing filtered out), that model is the section.
#include "analyze/ranks/ranks_analysis.h"
#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

class RanksSection final : public ReportSection {
 public:
  explicit RanksSection(ReportContext& context)
      : context_(context),
        analysis_(context.rank_scan(),
                  [&context](StringId id) -> std::string_view { return context.Str(id); }) {}

  void OnKernels(std::span<const KernelRecord> records) override { analysis_.AddKernels(records); }
  void OnLaunchLinks(std::span<const LaunchLinkRecord> records) override {
    analysis_.AddLaunchLinks(records);
  }
  void OnApiCalls(std::span<const ApiRecord> records) override { analysis_.AddApiCalls(records); }
  void OnNcclCollectives(std::span<const NcclCollectiveRecord> records) override {
    analysis_.AddNcclCollectives(records);
  }
  void Finish(ReportModel& model) override {
    if (context_.options().part_of_job) {
      // The job's ranks are put together from every part's partials; this part's own model
      // still names its GPUs and ranks (the energy table's labels, the insight rules' list).
      model.rank_partials = analysis_.TakePartials();
      model.ranks = FinishRanks(context_.rank_scan(), context_.clock_alignment(),
                                model.rank_partials, /*shift=*/false);
      return;
    }
    // The records arrived on the aligned clock already.
    model.ranks = FinishRanks(context_.rank_scan(), context_.clock_alignment(),
                              analysis_.TakePartials(), /*shift=*/false);
  }

 private:
  ReportContext& context_;
  RanksAnalysis analysis_;
};

// The job's ranks as analysed before the reading.
class JobRanksSection final : public ReportSection {
 public:
  explicit JobRanksSection(ReportContext& context) : context_(context) {}
  void Finish(ReportModel& model) override { model.ranks = *context_.job_ranks(); }

 private:
  ReportContext& context_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeRanksSection(ReportContext& context) {
  if (context.job_ranks() != nullptr) return std::make_unique<JobRanksSection>(context);
  return std::make_unique<RanksSection>(context);
}

}  // namespace gpuperf::report
