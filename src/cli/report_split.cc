#include "cli/report_split.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "analyze/insights/insights_section.h"
#include "analyze/ranks/rank_scan.h"
#include "base/json_output.h"
#include "base/ordered_work.h"
#include "base/text_escape.h"
#include "cli/command.h"
#include "export/report_json.h"
#include "export/report_ranks.h"

namespace gpuperf::cli {
namespace {

struct RankReport {
  const ProcessIdentity* process;
  ReportModel model;
};

}  // namespace

Status WriteReportByRank(const SplitReportRequest& request, std::ostream& out) {
  GP_ASSIGN_OR_RETURN(RankScan scan, ScanRanks(request.path));
  if (!scan.any_rank()) {
    return Error(StatusCode::kInvalidArgument,
                 request.path +
                     " holds no ranks (no process was started by torchrun, MPI or "
                     "Slurm): --split-by rank has nothing to split");
  }
  // The whole run first: its ranks and energy sections, and the read warnings (the loss
  // section's), said once. Only those are built: the whole run's other sections would
  // hold every rank's calls at once.
  ReportOptions whole_options = request.options;
  whole_options.only_sections = {"ranks", "energy", "loss"};
  GP_ASSIGN_OR_RETURN(ReportModel whole,
                      BuildReport(request.path, whole_options, report::kInsightsSection));
  ReadReport warnings;
  warnings.warnings = whole.read_warnings;
  PrintReadWarnings(warnings);
  // The ranks' reports are independent: two are built at once (each one's read decodes on
  // every core already; what a second build adds is its sections' work, on a core the
  // first one's sections leave idle), and taken in rank order, so that the output and the
  // first error are those of building them one after the other. Not more than two: each
  // holds a rank's API calls while it is built (100 M kernels in 8 ranks: 2.0 GB at
  // most, against 1.7 GB one at a time).
  const std::vector<const ProcessIdentity*> ranks = scan.InRankOrder();
  const unsigned helpers = std::min(ProcessorCount() - 1, 1u);
  std::vector<std::optional<Result<ReportModel>>> built(helpers + 1);
  std::vector<RankReport> reports;
  Status first_error;
  RunInOrder(
      ranks.size(), helpers, built.size(),
      [&](size_t i, size_t slot) {
        // Each rank from its own files: the other ranks' are not read again for it.
        ReportOptions options = request.options;
        options.pid = ranks[i]->pid;
        options.read_only_files_of_pid = true;
        built[slot] = BuildReport(request.path, options, report::kInsightsSection);
      },
      [&](size_t i, size_t slot) {
        Result<ReportModel> model = std::move(*built[slot]);
        built[slot].reset();
        if (!first_error.ok()) return;
        if (!model.ok()) {
          first_error = model.status();
          return;
        }
        // A launcher's own process (torchrun's agent) is no rank: left out unless it ran
        // work.
        if (!ranks[i]->is_rank() && model->summary.kernels == 0) return;
        SortAndTrim(*model, request.sort, request.top);
        reports.push_back({ranks[i], std::move(*model)});
      });
  GP_RETURN_IF_ERROR(first_error);
  ReportRenderOptions per_rank = request.render;
  per_rank.sections.clear();
  for (std::string_view section : kReportSections) {
    if (section != "ranks" && request.render.Wants(section))
      per_rank.sections.emplace_back(section);
  }
  if (request.json) {
    nlohmann::ordered_json doc;
    doc["schema_version"] = kReportSchemaVersion;
    doc["generator"] = "gpuperf report --split-by rank";
    doc["ranks"] = RanksToJson(whole.ranks);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const RankReport& r : reports) {
      nlohmann::ordered_json entry;
      entry["pid"] = r.process->pid;
      entry["rank"] = r.process->rank;
      entry["label"] = ProcessLabel(whole.ranks, r.process->pid);
      entry["report"] = ReportToJson(r.model, per_rank);
      list.push_back(std::move(entry));
    }
    doc["per_rank"] = std::move(list);
    out << DumpJson(std::move(doc)) << '\n';
  } else {
    for (const RankReport& r : reports) {
      out << "==== " << DisplayText(ProcessLabel(whole.ranks, r.process->pid)) << ", pid "
          << r.process->pid << " ====\n";
      GP_RETURN_IF_ERROR(ExportReportText(r.model, per_rank, out));
      out << '\n';
    }
    out << "==== the whole run ====\n";
    WriteRanksText(whole, out);
    WriteEnergyText(whole, request.render, out);
  }
  if (!out) return Error(StatusCode::kIoError, "cannot write the report");
  return Status::Ok();
}

}  // namespace gpuperf::cli
