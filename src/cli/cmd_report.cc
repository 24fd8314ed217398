// gpuperf report: kernels, CUDA API calls, copies, synchronization, memory, GPU
// utilization, NVTX ranges and the profiler's own cost, from a recorded trace.
#include <algorithm>
#include <memory>

#include "analyze/quantity.h"
#include "analyze/report/report_model.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/output_file.h"
#include "cli/report_split.h"
#include "export/report_export.h"
#include "export/text_table.h"

namespace gpuperf::cli {
namespace {

struct ReportArgs {
  std::string path;
  std::string format = "text";
  bool json = false;
  std::string sections;
  int64_t top = -1;  // -1: 30 rows in text, all in json/csv
  std::string sort = "total";
  int64_t pid = -1, device = -1, stream = -1;
  std::string kernel_regex, api_regex, nvtx_regex;
  std::string from, to;
  std::string gap_threshold = "1ms";
  bool full_names = false;
  bool python_internals = false;
  std::string split = "none";
  bool insights = false;
  std::string output;
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

int RunReport(const ReportArgs& a) {
  const std::string format = a.json ? "json" : a.format;
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
  if (a.pid >= 0) options.pid = static_cast<uint32_t>(a.pid);
  if (a.device >= 0) options.device = static_cast<uint32_t>(a.device);
  if (a.stream >= 0) options.stream = static_cast<uint32_t>(a.stream);
  options.kernel_regex = a.kernel_regex;
  options.api_regex = a.api_regex;
  options.nvtx_regex = a.nvtx_regex;
  options.python_internals = a.python_internals;
  // Asking for the section is asking for the analysis.
  options.insights = a.insights || std::find(render.sections.begin(), render.sections.end(),
                                             "insights") != render.sections.end();
  if (!a.from.empty()) {
    auto from = ParseDurationNs(a.from);
    if (!from.ok()) return ReportError(from.status());
    options.begin_ns = *from;
  }
  if (!a.to.empty()) {
    auto to = ParseDurationNs(a.to);
    if (!to.ok()) return ReportError(to.status());
    options.end_ns = *to;
  }
  if (options.begin_ns && options.end_ns && *options.end_ns <= *options.begin_ns) {
    return ReportError(Error(StatusCode::kInvalidArgument, "--to must be later than --from"));
  }
  auto gap = ParseDurationNs(a.gap_threshold);
  if (!gap.ok()) return ReportError(gap.status());
  options.gap_threshold_ns = std::max<uint64_t>(*gap, 1);

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
  auto model = BuildReport(a.path, options);
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

void RegisterReport(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "report",
      "Summarize a trace: kernels, runtime/driver API, copies, memsets, synchronization, "
      "memory, GPU utilization, NVTX ranges, profiler overhead and any data loss");
  auto a = std::make_shared<ReportArgs>();
  cmd->add_option("trace", a->path, "Trace file (.gpt) or directory of trace files")->required();
  cmd->add_option("-f,--format", a->format, "Output format: text (default), json or csv");
  cmd->add_flag("--json", a->json, "Same as --format json (the input of `gpuperf diff`)");
  cmd->add_option("-o,--output", a->output, "Write to this file instead of stdout");
  std::string section_help = "Comma-separated sections to show (default: all): ";
  for (std::string_view s : kReportSections) section_help += std::string(s) + " ";
  cmd->add_option("-s,--sections", a->sections, section_help);
  cmd->add_option("--top", a->top,
                  "Rows per table (0: all; default 30 for text, all for json and csv)");
  cmd->add_option("--sort", a->sort,
                  "Order of the kernel, API and NVTX tables: total (default), calls, avg, "
                  "median, max, name");
  cmd->add_option("--pid", a->pid, "Only this process");
  cmd->add_option("--device", a->device, "Only GPU work and memory of this device");
  cmd->add_option("--stream", a->stream, "Only GPU work and synchronization of this stream");
  cmd->add_option("--kernel", a->kernel_regex,
                  "Only kernels whose mangled or demangled name matches this regex");
  cmd->add_option("--api", a->api_regex, "Only API functions whose name matches this regex");
  cmd->add_option("--from", a->from,
                  "Only activity starting at or after this time since the trace start "
                  "(e.g. 1.5s, 200ms)");
  cmd->add_option("--to", a->to, "Only activity starting before this time since the trace start");
  cmd->add_option("--nvtx", a->nvtx_regex,
                  "Only GPU work launched, and API calls made, inside NVTX ranges whose name "
                  "matches this regex (on the same thread)");
  cmd->add_option("--gap-threshold", a->gap_threshold,
                  "Shortest GPU idle gap listed in the utilization section (default 1ms)");
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
      "         gpuperf report out/ --json -o base.json   # a baseline for gpuperf diff");
  cmd->callback([a, exit_code] { *exit_code = RunReport(*a); });
}

}  // namespace

GPUPERF_COMMAND(20, RegisterReport);

}  // namespace gpuperf::cli
