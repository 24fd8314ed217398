// gpuperf symbolize: resolve the PCs of recorded stacks to functions, source lines and
// inlined calls, and store them in the trace. `record` does this itself when the target
// exits; this command is for traces recorded with --no-symbolize, or to retry after
// installing debug info.
#include <cstdio>

#include "cli/command.h"
#include "cli/json_input.h"
#include "symbolize/symbolizer.h"

namespace gpuperf::cli {
namespace {

struct SymbolizeArgs {
  std::string path;
  bool no_build_id_check = false;
  bool innermost_is_pc = false;
};

void RegisterSymbolize(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "symbolize",
      "Resolve stack PCs to functions, files, lines and inlined calls (libdw), stored in "
      "the trace; run on the host that recorded it");
  auto args = std::make_shared<SymbolizeArgs>();
  cmd->add_option("trace", args->path, "Trace file (.gpt) or directory of trace files")->required();
  cmd->add_flag("--no-build-id-check", args->no_build_id_check,
                "Use binaries even when their build-id differs from the recorded one "
                "(names may be wrong)");
  cmd->add_flag("--innermost-is-pc", args->innermost_is_pc,
                "The first PC of each stack is an interrupted instruction, not a return "
                "address (sampled stacks)");
  cmd->callback([args, exit_code] {
    SymbolizeOptions options;
    options.verify_build_id = !args->no_build_id_check;
    options.innermost_is_return_address = !args->innermost_is_pc;
    SymbolizeSummary summary;
    Status status = SymbolizeTraceFile(args->path, options, &summary);
    for (const std::string& warning : summary.warnings) {
      PrintWarning(warning);
    }
    if (summary.files > 0) std::printf("%s\n", summary.ToString().c_str());
    *exit_code = status.ok() ? kExitOk : ReportError(ExplainNotATrace(status, args->path));
  });
}

}  // namespace

GPUPERF_COMMAND(80, RegisterSymbolize);

}  // namespace gpuperf::cli
