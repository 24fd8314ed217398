// gpuperf metrics: runs a command with CUPTI's range profiler and prints, per kernel (or per
// NVTX range or time window), the hardware metrics of a set and the bound they show.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <sstream>

#include "analyze/report/report_model.h"
#include "base/metric_sets.h"
#include "base/quantity.h"
#include "base/record_defaults.h"
#include "base/text_table.h"
#include "cli/command.h"
#include "cli/output_file.h"
#include "cli/record_options.h"
#include "export/report_export.h"

namespace gpuperf::cli {
namespace {

struct MetricsArgs {
  RecordOptions record;
  std::string ranges = "kernel";
};

// "kernel", "nvtx" or "window:DURATION" -> the injection library's form ("window:MS").
Result<std::string> RangesSetting(const std::string& text) {
  if (text == "kernel" || text == "nvtx") return text;
  if (text.rfind("window:", 0) == 0) {
    // The injection library counts the window in whole milliseconds (GPUPERF_METRICS_RANGES).
    auto ns = ParseDurationNs("--ranges window", text.substr(7),
                              {0, kNsPerMs, kMaxMetricWindowMs * kNsPerMs});
    if (!ns.ok()) return ns.status();
    return "window:" + std::to_string(CeilDiv(*ns, kNsPerMs));
  }
  return Error(
      StatusCode::kInvalidArgument,
      "unknown --ranges '" + text + "' (kernel, nvtx, or window:DURATION such as window:10ms)");
}

int RunMetrics(MetricsArgs& a) {
  RecordOptions& r = a.record;
  if (MetricSet(r.metric_set, SetScope::kPerKernel).empty()) {
    return ReportError(
        Error(StatusCode::kInvalidArgument,
              "unknown metric set '" + r.metric_set + "' (sets: " + MetricSetNames() + ")"));
  }
  auto ranges = RangesSetting(a.ranges);
  if (!ranges.ok()) return ReportError(ranges.status());
  r.metric_ranges = *ranges;
  if (!r.metric_kernel.empty() && r.metric_ranges != "kernel") {
    return ReportError(
        Error(StatusCode::kInvalidArgument,
              "--kernel picks kernels to replay; it does not go with --ranges " + a.ranges));
  }
  // The timeline of a replayed run is not a timeline: only what describes the run is kept
  // (devices, NVTX ranges, launch stacks), no kernel, copy or API records.
  r.activities = "nvtx";
  std::string dir;
  const int exit_code = RunRecord(r, &dir);
  if (dir.empty()) return exit_code;

  ReportOptions options;
  auto model = BuildReport(dir, options);
  if (!model.ok()) {
    ReportError(model.status());
    return exit_code;
  }
  if (model->hardware.empty()) {
    std::fprintf(stderr, "gpuperf: no hardware metrics were measured%s (%s)\n",
                 r.metric_ranges == "kernel" ? " (no kernel ran, or none matched --kernel)"
                                             : " (no range closed)",
                 r.quiet ? "run without -q to see why" : "the lines above say why");
  }
  ReportRenderOptions render;
  render.sections = {"hardware"};
  auto file = OutputFile::Open("-");
  if (!file.ok()) return ReportError(file.status());
  std::ostream& out = (*file)->stream();
  if ((*file)->is_stdout()) SetTableWidth(out, TerminalWidth(STDOUT_FILENO));
  Status status = ExportReportText(*model, render, out);
  out << "\ntrace: " << dir << "  (gpuperf report " << dir << " --sections hardware --json for "
      << "every metric)\n";
  status = (*file)->Finish(status);
  if (!status.ok()) ReportError(status);
  return exit_code;
}

class MetricsHelpFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string name) const override {
    return "Usage: " + name + " [OPTIONS] -- COMMAND [ARGS...]\n";
  }
};

void RegisterMetrics(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<MetricsArgs>();
  RecordOptions& r = a->record;
  r.metric_set = "basic";
  auto* cmd = app.add_subcommand(
      "metrics",
      "Run a command and measure GPU hardware metrics per kernel (or per NVTX range or time "
      "window): SM and memory throughput, DRAM bandwidth, occupancy, cache hit rates, tensor "
      "pipe, and whether each kernel is memory, compute or latency bound.\n"
      "Per kernel, CUPTI replays each kernel once per pass, alone: the run is slower and its "
      "kernels serialized, so use `gpuperf record` for timelines.");
  cmd->formatter(std::make_shared<MetricsHelpFormatter>());
  cmd->add_option("--set", r.metric_set, "Metric set: " + MetricSetNames() + " (default basic)");
  cmd->add_option("--kernel", r.metric_kernel,
                  "Measure only kernels whose (mangled) name matches this regular expression; "
                  "the others run unreplayed");
  cmd->add_option("--ranges", a->ranges,
                  "What one measurement covers: kernel (default; kernel replay), nvtx (each "
                  "outermost NVTX range, one pass, kernels concurrent) or window:DURATION (the "
                  "launches of each time window, e.g. window:10ms)");
  cmd->add_option("-o,--output", r.output_dir,
                  "Directory for the trace files (default: gpuperf-<program>, numbered if taken)");
  cmd->add_flag("-f,--force", r.force, "Replace the trace files of an earlier recording in -o");
  cmd->add_flag("-q,--quiet", r.quiet, "Print nothing but the metrics and errors");
  cmd->add_flag("-v,--verbose", r.verbose, "Let the injection library explain what it does");
  cmd->add_option("--inject-lib", r.inject_lib,
                  "Path of libgpuperf_inject.so (default: next to the gpuperf binary)");
  cmd->add_option("command", r.command, "The command to measure, after --")->expected(-1);
  cmd->footer(
      "Needs access to the GPU's counters (root, or NVreg_RestrictProfilingToAdminUsers=0) and "
      "no other profiler holding them (DCGM: dcgmi profile --pause). Exit status: the "
      "command's own.\nExample: gpuperf metrics --kernel gemm -- ./train --steps 2");
  cmd->callback([a, exit_code] { *exit_code = RunMetrics(*a); });
}

}  // namespace

GPUPERF_COMMAND(15, RegisterMetrics);

}  // namespace gpuperf::cli
