// gpuperf flamegraph: CPU call stacks weighted by the GPU time they launched (and, for
// recordings with --cpu/--off-cpu, by on-CPU and off-CPU time), as our interactive SVG or
// as folded stacks.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "analyze/flame/flamegraph.h"
#include "analyze/flame/flamegraph_pc_frames.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/other_outputs.h"
#include "cli/output_file.h"
#include "cli/pid_check.h"
#include "cli/quantity_options.h"
#include "export/flamegraph_svg.h"
#include "export/folded.h"

namespace gpuperf::cli {
namespace {

struct FlamegraphArgs {
  std::string trace;
  std::string output;
  bool folded = false;
  std::string format;  // svg, folded, or empty: from the output name
  std::string weight = "time";
  bool no_demangle = false;
  bool full_names = false;
  std::string split = "none";
  int64_t pid = -1;
  int64_t tid = -1;
  std::string kernel;
  bool inverted = false;
  bool python_internals = false;
  bool native_detail = false;
  bool pc_frames = false;
  std::string title;
  double min_width_percent = 0.05;
};

// What an output name's extension asks for.
enum NameFormat { kNoExtension, kSvg, kFolded, kUnknownExtension };

NameFormat FormatOfName(const std::string& output) {
  const std::string extension = std::filesystem::path(output).extension().string();
  if (extension.empty()) return kNoExtension;
  if (extension == ".svg") return kSvg;
  if (extension == ".folded" || extension == ".txt" || extension == ".collapsed") return kFolded;
  return kUnknownExtension;
}

// SVG or folded stacks: what --folded or --format says, else what the output name says.
// A name whose extension says neither is refused rather than filled with a surprise.
Result<bool> ChooseFolded(const FlamegraphArgs& args, bool to_stdout) {
  if (args.folded && args.format == "svg") {
    return Error(StatusCode::kInvalidArgument, "--folded contradicts --format svg");
  }
  if (args.folded || args.format == "folded") return true;
  if (args.format == "svg" || to_stdout) return false;
  const NameFormat named = FormatOfName(args.output);
  if (named != kUnknownExtension) return named == kFolded;
  return Error(StatusCode::kInvalidArgument,
               "cannot tell what to write from the name " + args.output +
                   ": use .svg (SVG), .folded, .collapsed or .txt (folded stacks), or "
                   "--format svg|folded");
}

std::string JoinSummary(const char* what, const JoinCounts& c) {
  std::string out = FormatCount(c.joined) + "/" + FormatCount(c.total) + " " + what + " joined";
  if (c.unmatched() > 0) {
    out += ", unmatched " + FormatCount(c.unmatched()) + " (no link " + FormatCount(c.no_link) +
           ", no stack " + FormatCount(c.no_stack + c.stack_lost) + ")";
  } else {
    out += ", unmatched 0";
  }
  return out;
}

int RunFlamegraph(const FlamegraphArgs& args) {
  FlameGraphOptions options;
  options.weight = args.weight == "count"    ? FlameWeight::kCount
                   : args.weight == "cpu"    ? FlameWeight::kCpuTime
                   : args.weight == "offcpu" ? FlameWeight::kOffCpuTime
                   : args.weight == "all"    ? FlameWeight::kAll
                   : args.weight == "energy" ? FlameWeight::kEnergy
                                             : FlameWeight::kGpuTime;
  options.demangle = !args.no_demangle;
  options.full_names = args.full_names;
  options.split = args.split == "device"   ? FlameSplit::kDevice
                  : args.split == "stream" ? FlameSplit::kStream
                  : args.split == "thread" ? FlameSplit::kThread
                  : args.split == "rank"   ? FlameSplit::kRank
                                           : FlameSplit::kNone;
  if (args.pid >= 0) {
    options.pid = static_cast<uint32_t>(args.pid);
    if (Status known = CheckPidRecorded(args.trace, *options.pid); !known.ok()) {
      return ReportError(known);
    }
  }
  if (args.tid >= 0) options.tid = static_cast<uint32_t>(args.tid);
  options.kernel_regex = args.kernel;
  options.inverted = args.inverted;
  options.python_internals = args.python_internals;
  options.native_detail = args.native_detail;
  FlameGraphSvgOptions svg;
  svg.title = args.title;
  svg.min_width_fraction = args.min_width_percent / 100.0;

  const bool to_stdout = args.output.empty() || args.output == "-";
  Result<bool> chosen = ChooseFolded(args, to_stdout);
  if (!chosen.ok()) return ReportError(chosen.status());
  const bool folded = *chosen;
  if (to_stdout && !folded && isatty(STDOUT_FILENO)) {
    return ReportError(Error(StatusCode::kInvalidArgument,
                             "not writing an SVG to a terminal: use -o flame.svg (or --folded)"));
  }

  ReadReport report;
  Result<FlameGraph> graph = BuildFlameGraphFromFile(args.trace, options, &report);
  PrintReadWarnings(report);
  if (!graph.ok()) return ReportError(ExplainNotATrace(graph.status(), args.trace));
  // Folded text stays clean for other tools: its loss goes to stderr; the SVG draws it.
  const bool cpu_weight =
      options.weight == FlameWeight::kCpuTime || options.weight == FlameWeight::kOffCpuTime;
  if (cpu_weight && !graph->summary.has_cpu()) {
    return ReportError(
        Error(StatusCode::kInvalidArgument,
              args.trace + " has no CPU samples: record with --cpu and/or --off-cpu"));
  }
  if (args.pc_frames) {
    auto profile = LoadPcProfile(args.trace, options.pid);
    if (!profile.ok()) return ReportError(profile.status());
    if (profile->functions.empty()) {
      return ReportError(Error(StatusCode::kInvalidArgument,
                               "--pc-frames: the trace has no PC samples (record with "
                               "`gpuperf record --pc-sampling`)"));
    }
    AddPcFrames(*graph, *profile, options);
  }
  const DataLossSummary loss = SummarizeDataLoss(report, graph->recording_loss);
  if (loss.any()) PrintWarning(loss.line);
  svg.data_loss = loss.line;

  auto file = OutputFile::Open(args.output, args.trace);
  if (!file.ok()) return ReportError(file.status());
  std::ostream& out = (*file)->stream();
  Status status = folded ? ExportFolded(*graph, options.weight, out)
                         : ExportFlamegraphSvg(*graph, options, svg, out);
  status = (*file)->Finish(status);
  if (!status.ok()) return ReportError(status);

  const FlameSummary& s = graph->summary;
  std::string line = "gpuperf: flamegraph: " + JoinSummary("kernels", s.correlation.kernels);
  const JoinCounts& copies = s.correlation.memcpys;
  const JoinCounts& sets = s.correlation.memsets;
  if (copies.total + sets.total > 0) {
    line += "; copies+sets " + FormatCount(copies.joined + sets.joined) + "/" +
            FormatCount(copies.total + sets.total) + " joined";
  }
  line += "; " + FormatDuration(s.gpu_ns) + " GPU time";
  if (s.has_cpu()) {
    line +=
        ", " + FormatDuration(s.cpu_ns) + " on CPU, " + FormatDuration(s.offcpu_ns) + " off CPU";
  }
  if (options.weight == FlameWeight::kEnergy) {
    char energy[96];
    std::snprintf(energy, sizeof(energy), ", %.3f J of kernel energy (estimate, power read %.0f/s)",
                  static_cast<double>(s.energy_uj) / 1e6, s.power_rate_hz);
    line += energy;
  }
  if (s.filtered_out > 0) line += ", " + FormatCount(s.filtered_out) + " filtered out";
  line += " -> " + (*file)->name();
  if (!to_stdout && FormatOfName(args.output) != (folded ? kFolded : kSvg)) {
    line += folded ? " (folded stacks)" : " (SVG)";  // the name does not say it
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  if (s.has_cpu() &&
      (options.weight == FlameWeight::kGpuTime || options.weight == FlameWeight::kCount)) {
    std::fprintf(
        stderr,
        "gpuperf: this recording has CPU samples: --weight cpu, offcpu or all draws them\n");
  }
  return kExitOk;
}

}  // namespace

int WriteFlamegraphOutput(const std::string& trace, const std::string& output,
                          const StackDisplayOptions& display) {
  FlamegraphArgs args;
  args.trace = trace;
  args.output = output;
  args.python_internals = display.python_internals;
  args.native_detail = display.native_detail;
  return RunFlamegraph(args);
}

namespace {

void RegisterFlamegraph(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "flamegraph",
      "CPU call stacks weighted by the GPU time they launched, and by CPU time with\n"
      "record --cpu/--off-cpu (interactive SVG or folded)");
  auto args = std::make_shared<FlamegraphArgs>();
  cmd->add_option("trace", args->trace, "Trace file (.gpt) or directory of trace files")
      ->required();
  cmd->add_option(
      "-o,--output", args->output,
      "Output file: .svg, or .folded/.collapsed/.txt for folded stacks (default: stdout)");
  cmd->add_flag("--folded", args->folded, "Write folded stacks instead of an SVG");
  cmd->add_option("--format", args->format,
                  "svg or folded (default: from the output name, else svg)")
      ->check(CLI::IsMember({"svg", "folded"}));
  cmd->add_option("--weight", args->weight,
                  "Frame width: gpu (GPU time, also 'time'), count (GPU activities), and for\n"
                  "recordings with --cpu/--off-cpu: cpu (on-CPU time), offcpu (blocked time),\n"
                  "all (the three kinds of time, each under its own leaf); energy (GPU energy\n"
                  "in µJ, an estimate from the recording's NVML power readings)")
      ->check(CLI::IsMember({"time", "gpu", "count", "cpu", "offcpu", "all", "energy"}))
      ->default_str("gpu");
  cmd->add_flag("--no-demangle", args->no_demangle, "Show kernel names as recorded (mangled)");
  cmd->add_flag("--full-names", args->full_names,
                "Keep argument and template lists in function and kernel names");
  cmd->add_option("--split-by", args->split,
                  "Separate graphs per device, stream, launching thread or rank (root frames)")
      ->check(CLI::IsMember({"none", "device", "stream", "thread", "rank"}))
      ->default_str("none");
  TakesCount(cmd->add_option("--pid", args->pid, "Only this process"), kPidSpec);
  TakesCount(cmd->add_option("--tid", args->tid,
                             "Only this thread: its CPU time and the GPU work it launched (thread "
                             "ids: report --sections cpu, or --split-by thread)"),
             kPidSpec);
  cmd->add_option("--kernel", args->kernel,
                  "Only GPU frames (kernels, memcpy, memset) whose name matches this regex");
  cmd->add_flag("--inverted", args->inverted,
                "Icicle graph with the kernel at the root: which CPU paths feed each kernel");
  cmd->add_flag("--python-internals", args->python_internals,
                "Keep the Python interpreter's own frames (_PyEval_EvalFrameDefault, ...)\n"
                "in stacks with Python frames");
  cmd->add_flag("--native-detail", args->native_detail, kNativeDetailHelp);
  cmd->add_flag("--pc-frames", args->pc_frames,
                "Above each kernel, its source lines and stall reasons, as wide as their share "
                "of its PC samples (traces of `record --pc-sampling`)");
  cmd->add_option("--title", args->title, "SVG title");
  TakesPercent(cmd->add_option("--min-width", args->min_width_percent,
                               "SVG: do not draw frames narrower than this % of the total (0 to "
                               "50, e.g. 0.5 or 0.5%)"),
               {0, 50})
      ->default_str("0.05");
  cmd->callback([args, exit_code] { *exit_code = RunFlamegraph(*args); });
}

}  // namespace

GPUPERF_COMMAND(30, RegisterFlamegraph);

}  // namespace gpuperf::cli
