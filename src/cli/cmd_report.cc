// gpuperf report: kernels, CUDA API calls, copies, synchronization, memory, GPU
// utilization, NVTX ranges and the profiler's own cost, from a recorded trace.
#include <algorithm>
#include <functional>
#include <memory>

#include "analyze/insights/insights_section.h"
#include "analyze/job/report_merge.h"
#include "analyze/report/report_model.h"
#include "base/json_output.h"
#include "base/quantity.h"
#include "base/text_table.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/other_outputs.h"
#include "cli/output_file.h"
#include "cli/pid_check.h"
#include "cli/quantity_options.h"
#include "cli/report_split.h"
#include "export/report_export.h"
#include "export/report_summary.h"
#include "format/shared_read.h"

namespace gpuperf::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> paths;
  std::string path;  // the first
  bool summary = false;
  std::string format = "text";
  bool json = false;
  std::string sections;
  int64_t top = -1;  // -1: 30 rows in text, all in json/csv
  std::string sort = "total";
  int64_t pid = -1, device = -1, stream = -1;
  std::string kernel_regex, api_regex, nvtx_regex;
  uint64_t from_ns = 0, to_ns = 0;  // with has_from, has_to: whether given
  bool has_from = false, has_to = false;
  uint64_t gap_threshold_ns = 1'000'000;
  bool full_names = false;
  bool python_internals = false;
  std::string split = "none";
  bool insights = false;
  std::string output;                // the report's file; empty: stdout
  std::vector<std::string> outputs;  // every -o: the report's and other commands' outputs
};

Result<ReportSort> ParseSort(const std::string& text) {
  if (text == "total") return ReportSort::kTotal;
  if (text == "calls") return ReportSort::kCalls;
  if (text == "avg") return ReportSort::kAvg;
  if (text == "median") return ReportSort::kMedian;
  if (text == "max") return ReportSort::kMax;
  if (text == "name") return ReportSort::kName;
  return Error(StatusCode::kInvalidArgument,
               "unknown --sort '" + text + "' (total, calls, avg, median, max, name)");
}

// Whether `path` is a summary (a JSON document) rather than a trace.
bool IsSummary(const std::string& path) {
  return LooksLikeJsonFile(path);
}

// `gpuperf report A.json B.json ...`: the hosts' summaries merged into the job's tables.
int RunMerge(const ReportArgs& a, const std::string& format, const ReportRenderOptions& render,
             ReportSort sort) {
  if (format == "csv") {
    return ReportError(
        Error(StatusCode::kInvalidArgument, "merged summaries are written as text or json"));
  }
  std::vector<JobPart> parts;
  for (const std::string& path : a.paths) {
    if (!IsSummary(path)) {
      return ReportError(Error(StatusCode::kInvalidArgument,
                               path + " is not a summary (JSON): merge summaries only, or "
                                      "report one trace file or directory"));
    }
    auto doc = ReadJsonFile(path, "a summary: `gpuperf report DIR --summary`");
    if (!doc.ok()) return ReportError(doc.status());
    // One report alone, not a host's summary: what to do with it instead, as for any command
    // given a report where it reads a trace.
    if (a.paths.size() == 1 && !doc->contains("job_part")) {
      return ReportError(ExplainNotATrace(Error(StatusCode::kNotATrace, path), path));
    }
    auto part = JobPartFromJson(*doc, path);
    if (!part.ok()) return ReportError(part.status());
    parts.push_back(std::move(part).value());
  }
  MergedJob job = MergeJobParts(std::move(parts));
  for (const std::string& w : job.warnings) PrintWarning(w);
  const uint32_t top = a.top >= 0 ? static_cast<uint32_t>(a.top) : (format == "text" ? 30 : 0);
  SortAndTrim(job.report, sort, top);
  auto file = OutputFile::Open(a.output, a.path);
  if (!file.ok()) return ReportError(file.status());
  std::ostream& out = (*file)->stream();
  if ((*file)->is_stdout()) SetTableWidth(out, TerminalWidth(STDOUT_FILENO));
  Status status = format == "json" ? ExportMergedJobJson(job, render, top, out)
                                   : ExportMergedJobText(job, render, top, out);
  status = (*file)->Finish(status);
  return status.ok() ? kExitOk : ReportError(status);
}

int RunReport(const ReportArgs& a) {
  const std::string format = a.json || a.summary ? "json" : a.format;
  if (format != "text" && format != "json" && format != "csv") {
    return ReportError(
        Error(StatusCode::kInvalidArgument, "unknown --format '" + format + "' (text, json, csv)"));
  }
  ReportRenderOptions render;
  render.full_names = a.full_names;
  if (Status s = ParseReportSections(a.sections, render.sections); !s.ok()) return ReportError(s);
  auto sort = ParseSort(a.sort);
  if (!sort.ok()) return ReportError(sort.status());

  ReportOptions options;
  if (a.pid >= 0) {
    options.pid = static_cast<uint32_t>(a.pid);
    if (Status known = CheckPidRecorded(a.path, *options.pid); !known.ok()) {
      return ReportError(known);
    }
  }
  if (a.device >= 0) options.device = static_cast<uint32_t>(a.device);
  if (a.stream >= 0) options.stream = static_cast<uint32_t>(a.stream);
  options.kernel_regex = a.kernel_regex;
  options.api_regex = a.api_regex;
  options.nvtx_regex = a.nvtx_regex;
  options.python_internals = a.python_internals;
  // Asking for the section is asking for the analysis.
  options.insights = a.insights || std::find(render.sections.begin(), render.sections.end(),
                                             "insights") != render.sections.end();
  if (a.has_from) options.begin_ns = a.from_ns;
  if (a.has_to) options.end_ns = a.to_ns;
  if (options.begin_ns && options.end_ns && *options.end_ns <= *options.begin_ns) {
    return ReportError(Error(StatusCode::kInvalidArgument, "--to must be later than --from"));
  }
  options.gap_threshold_ns = std::max<uint64_t>(a.gap_threshold_ns, 1);

  if (a.paths.size() > 1 || IsSummary(a.path)) {
    if (a.summary || a.split != "none" || options.pid || options.device || options.stream ||
        options.begin_ns || options.end_ns || !a.kernel_regex.empty() || !a.api_regex.empty() ||
        !options.nvtx_regex.empty() || options.insights) {
      return ReportError(Error(StatusCode::kInvalidArgument,
                               "summaries are merged whole: no filters, --split-by, "
                               "--insights or --summary with them"));
    }
    return RunMerge(a, format, render, *sort);
  }
  if (a.summary) {
    if (a.split != "none" || options.pid || options.device || options.stream || options.begin_ns ||
        options.end_ns || !a.kernel_regex.empty() || !a.api_regex.empty() ||
        !options.nvtx_regex.empty() || !a.sections.empty()) {
      return ReportError(Error(StatusCode::kInvalidArgument,
                               "--summary summarizes the whole input: no filters, sections "
                               "or --split-by"));
    }
    auto part = BuildJobPart(a.path);
    if (!part.ok()) return ReportError(ExplainNotATrace(part.status(), a.path));
    ReadReport warnings;
    warnings.warnings = part->report.read_warnings;
    PrintReadWarnings(warnings);
    auto file = OutputFile::Open(a.output, a.path);
    if (!file.ok()) return ReportError(file.status());
    (*file)->stream() << DumpJson(JobPartToJson(*part)) << '\n';
    Status status = (*file)->Finish(Status::Ok());
    return status.ok() ? kExitOk : ReportError(status);
  }
  if (a.split == "rank") {
    if (format == "csv") {
      return ReportError(
          Error(StatusCode::kInvalidArgument, "--split-by rank writes text or json, not csv"));
    }
    auto file = OutputFile::Open(a.output, a.path);
    if (!file.ok()) return ReportError(file.status());
    if ((*file)->is_stdout()) SetTableWidth((*file)->stream(), TerminalWidth(STDOUT_FILENO));
    const uint32_t top = a.top >= 0 ? static_cast<uint32_t>(a.top) : (format == "text" ? 30 : 0);
    SplitReportRequest request{a.path, options, render, *sort, top, format == "json"};
    Status status = (*file)->Finish(WriteReportByRank(request, (*file)->stream()));
    return status.ok() ? kExitOk : ReportError(ExplainNotATrace(status, a.path));
  }
  auto model = BuildReport(a.path, options, report::kInsightsSection);
  if (!model.ok()) return ReportError(ExplainNotATrace(model.status(), a.path));
  ReadReport warnings;
  warnings.warnings = model->read_warnings;
  PrintReadWarnings(warnings);
  render.total_kernels = static_cast<uint32_t>(model->kernels.size());
  render.total_runtime_api = static_cast<uint32_t>(model->runtime_api.size());
  render.total_driver_api = static_cast<uint32_t>(model->driver_api.size());
  const uint32_t top = a.top >= 0 ? static_cast<uint32_t>(a.top) : (format == "text" ? 30 : 0);
  SortAndTrim(*model, *sort, top);

  auto file = OutputFile::Open(a.output, a.path);
  if (!file.ok()) return ReportError(file.status());
  std::ostream& out = (*file)->stream();
  if ((*file)->is_stdout()) SetTableWidth(out, TerminalWidth(STDOUT_FILENO));  // fit a terminal
  Status status = format == "json"  ? ExportReportJson(*model, render, out)
                  : format == "csv" ? ExportReportCsv(*model, render, out)
                                    : ExportReportText(*model, render, out);
  status = (*file)->Finish(status);
  return status.ok() ? kExitOk : ReportError(status);
}

// `report -o report.txt -o flame.svg -o timeline.perfetto-trace`: the report and other
// commands' outputs, each written as its own command writes it, all from one read of the
// trace (format/shared_read.h). The report goes to stdout when no -o names a report file.
int RunReportAndOtherOutputs(ReportArgs a) {
  std::vector<std::string> others;
  a.output.clear();
  for (const std::string& output : a.outputs) {
    if (KindOfOutput(output) != OutputKind::kReport) {
      others.push_back(output);
    } else if (a.output.empty()) {
      a.output = output;
    } else {
      return ReportError(Error(StatusCode::kInvalidArgument,
                               "two report outputs (" + a.output + ", " + output +
                                   "): -o names one report file, and the flame graph, "
                                   "timeline or profile files to write beside it"));
    }
  }
  std::vector<int> exit_codes(1 + others.size(), kExitOk);
  std::vector<std::function<Status()>> tasks;
  tasks.push_back([&] {
    exit_codes[0] = RunReport(a);
    return Status::Ok();
  });
  for (size_t i = 0; i < others.size(); ++i) {
    tasks.push_back([&, i] {
      QuietReadWarnings quiet;  // the report's read says them
      const std::string& output = others[i];
      exit_codes[i + 1] = KindOfOutput(output) == OutputKind::kFlamegraph
                              ? WriteFlamegraphOutput(a.path, output)
                              : WriteExportOutput(a.path, output);
      return Status::Ok();
    });
  }
  RunSharingReads(tasks);
  for (int code : exit_codes) {
    if (code != kExitOk) return code;
  }
  return kExitOk;
}

void RegisterReport(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "report",
      "Summarize a trace: kernels, runtime/driver API, copies, memsets, synchronization, "
      "memory, GPU utilization, NVTX ranges, profiler overhead and any data loss");
  auto a = std::make_shared<ReportArgs>();
  cmd->add_option("trace", a->paths,
                  "Trace file (.gpt) or directory of trace files; or several hosts' summaries "
                  "(--summary) to merge into the job's tables")
      ->required();
  cmd->add_option("-f,--format", a->format, "Output format: text (default), json or csv");
  cmd->add_flag("--json", a->json, "Same as --format json (the input of `gpuperf diff`)");
  cmd->add_option(
      "-o,--output", a->outputs,
      "Write to this file instead of stdout. Given again, the other files are "
      "written from the same read of the trace, as their commands write them: "
      ".svg, .folded, .collapsed (flamegraph), .perfetto-trace, .pftrace, .pb, "
      ".json.gz (export: timeline), .pb.gz, .pprof (export: pprof), .parquet (export: a "
      "Parquet dataset, a directory); any other "
      "name is the report's (e.g. -o report.txt -o flame.svg -o "
      "timeline.perfetto-trace)");
  std::string section_help = "Comma-separated sections to show (default: all): ";
  for (std::string_view s : kReportSections) section_help += std::string(s) + " ";
  cmd->add_option("-s,--sections", a->sections, section_help);
  TakesCount(cmd->add_option("--top", a->top,
                             "Rows per table (0 or more than there are: all; default 30 for "
                             "text, all for json and csv)"),
             kTopRowsSpec);
  cmd->add_option("--sort", a->sort,
                  "Order of the kernel, API and NVTX tables: total (default), calls, avg, "
                  "median, max, name");
  TakesCount(cmd->add_option("--pid", a->pid, "Only this process"), kPidSpec);
  TakesCount(cmd->add_option("--device", a->device, "Only GPU work and memory of this device"),
             {0, UINT32_MAX});
  TakesCount(
      cmd->add_option("--stream", a->stream, "Only GPU work and synchronization of this stream"),
      {0, UINT32_MAX});
  cmd->add_option("--kernel", a->kernel_regex,
                  "Only kernels whose mangled or demangled name matches this regex");
  cmd->add_option("--api", a->api_regex, "Only API functions whose name matches this regex");
  // Times need a unit: "5" could be seconds or nanoseconds.
  const DurationSpec time_since_start;
  CLI::Option* from = TakesDuration(
      cmd->add_option("--from", a->from_ns,
                      "Only activity starting at or after this time since the trace start "
                      "(e.g. 1.5s, 200ms)"),
      1, time_since_start);
  CLI::Option* to = TakesDuration(
      cmd->add_option("--to", a->to_ns,
                      "Only activity starting before this time since the trace start"),
      1, time_since_start);
  cmd->add_option("--nvtx", a->nvtx_regex,
                  "Only GPU work launched, and API calls made, inside NVTX ranges whose name "
                  "matches this regex (on the same thread)");
  TakesDuration(cmd->add_option("--gap-threshold", a->gap_threshold_ns,
                                "Shortest GPU idle gap listed in the utilization section "
                                "(default 1ms)"),
                1, time_since_start);
  cmd->add_flag("--full-names", a->full_names,
                "Show full demangled kernel names (default: shortened)");
  cmd->add_flag("--python-internals", a->python_internals,
                "Keep the Python interpreter's own frames in stacks with Python frames");
  cmd->add_option("--split-by", a->split,
                  "rank: one report per rank of a distributed run (torchrun, MPI, Slurm), in "
                  "rank order, then the ranks section of the whole run")
      ->check(CLI::IsMember({"none", "rank"}))
      ->default_str("none");
  cmd->add_flag("--insights", a->insights,
                "Run the insight rules: findings (GPU idle gaps and their CPU cause, "
                "launch-bound phases, synchronization stalls, pageable and tiny copies, low "
                "occupancy, memory growth) with evidence, stack and what to try, ranked by "
                "time at stake (docs/insights.md)");
  cmd->footer(
      "Times in tables are humane (ns, µs, ms, s); json and csv carry raw nanoseconds and "
      "bytes.\nThe JSON schema is documented in docs/report.md. Data loss recorded in the "
      "trace is always shown.\nExample: gpuperf report out/ --sections kernels,memcpy --top 10\n"
      "         gpuperf report out/ --insights --sections insights   # only the findings\n"
      "         gpuperf report out/ --json -o base.json   # a baseline for gpuperf diff\n"
      "         gpuperf report out/ -o report.txt -o flame.svg -o timeline.perfetto-trace\n"
      "                                  # three outputs, one read of the trace");
  cmd->add_flag("--summary", a->summary,
                "Write this host's summary of its part of a job (JSON: the report and what a "
                "merge needs); `gpuperf report a.json b.json ...` merges the hosts' summaries "
                "into the job's tables (docs/multi-rank.md)");
  cmd->callback([a, from, to, exit_code] {
    a->path = a->paths.front();
    a->has_from = from->count() > 0;
    a->has_to = to->count() > 0;
    const bool others = std::any_of(a->outputs.begin(), a->outputs.end(), [](const auto& o) {
      return KindOfOutput(o) != OutputKind::kReport;
    });
    if (others || a->outputs.size() > 1) {
      *exit_code = RunReportAndOtherOutputs(*a);
      return;
    }
    a->output = a->outputs.empty() ? std::string() : a->outputs.front();
    *exit_code = RunReport(*a);
  });
}

}  // namespace

GPUPERF_COMMAND(20, RegisterReport);

}  // namespace gpuperf::cli
