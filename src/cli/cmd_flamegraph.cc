// gpuperf flamegraph: CPU call stacks weighted by the GPU time they launched, as our
// interactive SVG or as folded stacks.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "analyze/flame_graph.h"
#include "base/units.h"
#include "cli/command.h"
#include "export/flamegraph_svg.h"
#include "export/folded.h"

namespace gpuperf::cli {
namespace {

struct FlamegraphArgs {
  std::string trace;
  std::string output;
  bool folded = false;
  std::string weight = "time";
  bool no_demangle = false;
  bool full_names = false;
  std::string split = "none";
  int64_t pid = -1;
  std::string kernel;
  bool inverted = false;
  std::string title;
  double min_width_percent = 0.05;
};

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
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
  options.weight = args.weight == "count" ? FlameWeight::kCount : FlameWeight::kGpuTime;
  options.demangle = !args.no_demangle;
  options.full_names = args.full_names;
  options.split = args.split == "device"   ? FlameSplit::kDevice
                  : args.split == "stream" ? FlameSplit::kStream
                  : args.split == "thread" ? FlameSplit::kThread
                                           : FlameSplit::kNone;
  if (args.pid >= 0) options.pid = static_cast<uint32_t>(args.pid);
  options.kernel_regex = args.kernel;
  options.inverted = args.inverted;
  options.title = args.title;
  options.min_width_fraction = args.min_width_percent / 100.0;

  const bool to_stdout = args.output.empty() || args.output == "-";
  const bool folded = args.folded || EndsWith(args.output, ".folded") ||
                      EndsWith(args.output, ".txt") || EndsWith(args.output, ".collapsed");
  if (to_stdout && !folded && isatty(STDOUT_FILENO)) {
    return ReportError(Error(StatusCode::kInvalidArgument,
                             "not writing an SVG to a terminal: use -o flame.svg (or --folded)"));
  }

  ReadReport report;
  Result<FlameGraph> graph = BuildFlameGraphFromFile(args.trace, options, &report);
  PrintReadWarnings(report);
  if (!graph.ok()) return ReportError(graph.status());

  std::ofstream file;
  if (!to_stdout) {
    file.open(args.output, std::ios::binary | std::ios::trunc);
    if (!file) {
      return ReportError(Error(StatusCode::kIoError, "cannot write " + args.output));
    }
  }
  std::ostream& out = to_stdout ? std::cout : file;
  Status status = folded ? ExportFolded(*graph, options.weight, out)
                         : ExportFlamegraphSvg(*graph, options, out);
  if (status.ok() && !to_stdout) {
    file.close();
    if (!file) status = Error(StatusCode::kIoError, "cannot write " + args.output);
  }
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
  if (s.filtered_out > 0) line += ", " + FormatCount(s.filtered_out) + " filtered out";
  line += " -> " + (to_stdout ? std::string("stdout") : args.output);
  std::fprintf(stderr, "%s\n", line.c_str());
  return kExitOk;
}

void RegisterFlamegraph(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "flamegraph",
      "CPU call stacks weighted by the GPU time they launched (interactive SVG or folded)");
  auto args = std::make_shared<FlamegraphArgs>();
  cmd->add_option("trace", args->trace, "Trace file (.gpt) or directory of trace files")
      ->required();
  cmd->add_option("-o,--output", args->output,
                  "Output file: .svg, or .folded/.txt for folded stacks (default: stdout)");
  cmd->add_flag("--folded", args->folded, "Write folded stacks instead of an SVG");
  cmd->add_option("--weight", args->weight, "Frame width: GPU time in ns, or activity count")
      ->check(CLI::IsMember({"time", "count"}))
      ->default_str("time");
  cmd->add_flag("--no-demangle", args->no_demangle, "Show kernel names as recorded (mangled)");
  cmd->add_flag("--full-names", args->full_names,
                "Keep argument and template lists in function and kernel names");
  cmd->add_option("--split-by", args->split,
                  "Separate graphs per device, stream or launching thread (root frames)")
      ->check(CLI::IsMember({"none", "device", "stream", "thread"}))
      ->default_str("none");
  cmd->add_option("--pid", args->pid, "Only this process")->check(CLI::Range(0, INT32_MAX));
  cmd->add_option("--kernel", args->kernel,
                  "Only GPU frames (kernels, memcpy, memset) whose name matches this regex");
  cmd->add_flag("--inverted", args->inverted,
                "Icicle graph with the kernel at the root: which CPU paths feed each kernel");
  cmd->add_option("--title", args->title, "SVG title");
  cmd->add_option("--min-width", args->min_width_percent,
                  "SVG: do not draw frames narrower than this % of the total")
      ->check(CLI::Range(0.0, 50.0))
      ->default_str("0.05");
  cmd->callback([args, exit_code] {
    std::ios::sync_with_stdio(false);
    *exit_code = RunFlamegraph(*args);
  });
}

}  // namespace

GPUPERF_COMMAND(30, RegisterFlamegraph);

}  // namespace gpuperf::cli
