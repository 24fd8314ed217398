#include "cli/report_split.h"

#include <algorithm>

#include "analyze/insights/insights_section.h"
#include "analyze/ranks/job_ranks.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/ranks/ranks_analysis.h"
#include "base/json_output.h"
#include "base/text_escape.h"
#include "cli/command.h"
#include "export/report_json.h"
#include "export/report_ranks.h"
#include "format/trace_files.h"

namespace gpuperf::cli {
namespace {

struct RankReport {
  const ProcessIdentity* process;
  ReportModel model;
};

}  // namespace

Status WriteReportByRank(const SplitReportRequest& request, std::ostream& out) {
  ReadReport listing;
  GP_ASSIGN_OR_RETURN(RankScan scanned, ScanRanks(request.path));
  if (!scanned.any_rank()) {
    return Error(StatusCode::kInvalidArgument,
                 request.path +
                     " holds no ranks (no process was started by torchrun, MPI or "
                     "Slurm): --split-by rank has nothing to split");
  }
  auto scan = std::make_shared<const RankScan>(std::move(scanned));
  const ReportOptions& o = request.options;
  const bool unfiltered =
      !o.pid && !o.device && !o.stream && !o.begin_ns && !o.end_ns && o.nvtx_regex.empty();
  // Unfiltered, each rank's report is read on its own host's clock and gives its part of the
  // ranks analysis; the clocks are aligned and the whole run's ranks put together from those
  // parts after (a rank's report says times since its own first record, so its clock only
  // shows in its origin). So the job's kernels are read once. With a filter the ranks show
  // what it lets through, and with power readings the whole run's energy takes every kernel
  // of the run: the whole run is then a reading of its own, after the clocks are aligned.
  const bool one_reading = unfiltered && scan->power_samples.empty();
  GP_ASSIGN_OR_RETURN(std::vector<std::string> files, TraceFilesOf(request.path, listing));
  auto clocks = std::make_shared<const ClockAlignment>();
  ReportModel whole;
  std::map<uint32_t, std::vector<size_t>> files_of_pid;
  if (!one_reading) {
    GP_ASSIGN_OR_RETURN(JobRanks job, AnalyzeJobRanks(request.path, *scan));
    clocks = std::make_shared<const ClockAlignment>(std::move(job.clocks));
    files_of_pid = std::move(job.files_of_pid);
    // Of the whole run, only its ranks, energy and loss sections: its other sections would
    // hold every rank's calls at once.
    ReportOptions whole_options = request.options;
    whole_options.only_sections = {"ranks", "energy", "loss"};
    GP_ASSIGN_OR_RETURN(whole, BuildReport(request.path, whole_options, scan, clocks, std::nullopt,
                                           report::kInsightsSection));
  } else {
    // The files that hold each process's records.
    std::vector<std::vector<uint32_t>> pids(files.size());
    ForEachIndex(files.size(), 0, [&](size_t i) {
      auto part = ScanRanks(files[i]);
      if (part.ok()) {
        for (const auto& [pid, p] : part->processes) pids[i].push_back(pid);
      }
    });
    for (size_t i = 0; i < files.size(); ++i) {
      for (uint32_t pid : pids[i]) files_of_pid[pid].push_back(i);
    }
  }
  // Each rank's report from the file that holds its records (several at once), or, for a
  // process whose records more than one file holds, from the whole directory.
  const std::vector<const ProcessIdentity*> processes = scan->InRankOrder();
  std::vector<Result<ReportModel>> models(processes.size(), ReportModel());
  const unsigned read_threads = ReadThreadsPerFile(processes.size());
  ForEachIndex(processes.size(), 0, [&](size_t i) {
    ReportOptions options = request.options;
    options.pid = processes[i]->pid;
    options.part_of_job = true;
    // Of the directory, only this process's files (ReadOptions::only_process); the ranks
    // share the cores.
    options.read_only_files_of_pid = true;
    options.read_threads = read_threads;
    auto in = files_of_pid.find(processes[i]->pid);
    const std::string& path =
        in != files_of_pid.end() && in->second.size() == 1 ? files[in->second[0]] : request.path;
    models[i] = BuildReport(path, options, scan, clocks, std::nullopt, report::kInsightsSection);
    if (models[i].ok()) SortAndTrim(*models[i], request.sort, request.top);
  });
  for (size_t i = 0; i < processes.size(); ++i) {
    if (!models[i].ok()) return models[i].status();
  }
  if (one_reading) {
    std::vector<RankPartial> partials;
    for (size_t i = 0; i < processes.size(); ++i) {
      for (RankPartial& p : models[i]->rank_partials) partials.push_back(std::move(p));
    }
    ClockAlignment aligned = AlignRanks(*scan, partials);
    whole.ranks = FinishRanks(*scan, aligned, std::move(partials), /*shift=*/true);
    for (size_t i = 0; i < processes.size(); ++i) {
      models[i]->summary.origin_ns += aligned.OffsetOf(processes[i]->pid);
    }
  }
  ReadReport warnings = listing;
  if (!one_reading) warnings.warnings = whole.read_warnings;
  std::vector<RankReport> reports;
  for (size_t i = 0; i < processes.size(); ++i) {
    ReportModel& model = *models[i];
    for (std::string& w : model.read_warnings) {
      if (!one_reading) break;
      if (std::find(warnings.warnings.begin(), warnings.warnings.end(), w) ==
          warnings.warnings.end()) {
        warnings.warnings.push_back(std::move(w));
      }
    }
    // A launcher's own process (torchrun's agent) is no rank: left out unless it ran work.
    if (!processes[i]->is_rank() && model.summary.kernels == 0) continue;
    reports.push_back({processes[i], std::move(model)});
  }
  // The read warnings, said once.
  PrintReadWarnings(warnings);
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
