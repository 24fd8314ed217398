// gpuperf dump: every record of a trace as readable text.
#include <cstdio>
#include <iostream>

#include "cli/command.h"
#include "format/text_dump.h"

namespace gpuperf::cli {
namespace {

void RegisterDump(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "dump", "Print every record of a trace as one line of text (stable, diffable)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("trace", *path, "Trace file (.gpt) or directory of trace files")->required();
  cmd->callback([path, exit_code] {
    std::ios::sync_with_stdio(false);
    ReadReport report;
    Status status = DumpTrace(*path, std::cout, &report);
    std::cout.flush();
    PrintReadWarnings(report);
    *exit_code = status.ok() ? kExitOk : ReportError(status);
  });
}

}  // namespace

GPUPERF_COMMAND(90, RegisterDump);

}  // namespace gpuperf::cli
