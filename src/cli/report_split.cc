#include "cli/report_split.h"

#include "analyze/insights/insights_section.h"
#include "analyze/ranks/rank_scan.h"
#include "base/json_output.h"
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
  // The whole run first: its ranks section, and the read warnings, said once.
  GP_ASSIGN_OR_RETURN(ReportModel whole,
                      BuildReport(request.path, request.options, report::kInsightsSection));
  ReadReport warnings;
  warnings.warnings = whole.read_warnings;
  PrintReadWarnings(warnings);
  std::vector<RankReport> reports;
  for (const ProcessIdentity* p : scan.InRankOrder()) {
    ReportOptions options = request.options;
    options.pid = p->pid;
    GP_ASSIGN_OR_RETURN(ReportModel model,
                        BuildReport(request.path, options, report::kInsightsSection));
    // A launcher's own process (torchrun's agent) is no rank: left out unless it ran work.
    if (!p->is_rank() && model.summary.kernels == 0) continue;
    SortAndTrim(model, request.sort, request.top);
    reports.push_back({p, std::move(model)});
  }
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
