// gpuperf: which line of CPU code is responsible for how much GPU time, and why.
#include <algorithm>
#include <cstdio>

#include "cli/command.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::cli {

std::vector<CommandEntry>& CommandRegistry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "gpuperf: %s\n", status.message().c_str());
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      return kExitUsage;
    case StatusCode::kNotFound:
    case StatusCode::kNotATrace:
    case StatusCode::kUnsupportedVersion:
    case StatusCode::kCorrupt:
      return kExitBadInput;
    default:
      return kExitFailure;
  }
}

void PrintReadWarnings(const ReadReport& report) {
  for (const std::string& warning : report.warnings) {
    std::fprintf(stderr, "gpuperf: warning: %s\n", warning.c_str());
  }
}

}  // namespace gpuperf::cli

int main(int argc, char** argv) {
  using namespace gpuperf::cli;
  CLI::App app(
      "gpuperf: which CPU code is responsible for how much GPU time, and why.\n"
      "Record any CUDA program without recompiling or root, then read the trace:\n"
      "  gpuperf record -o out -- ./my_app args     # writes out/<name>.<pid>.gpt\n"
      "  gpuperf report out                         # kernels, APIs, copies, memory\n"
      "  gpuperf flamegraph out -o flame.svg        # CPU stacks weighted by GPU time\n"
      "  gpuperf export out -o trace.perfetto-trace # timeline for ui.perfetto.dev\n",
      "gpuperf");
  app.set_version_flag("--version", std::string("gpuperf ") + GPUPERF_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  auto& registry = CommandRegistry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandEntry& a, const CommandEntry& b) { return a.order < b.order; });
  int exit_code = kExitOk;
  for (const CommandEntry& entry : registry) entry.reg(app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  return exit_code;
}
