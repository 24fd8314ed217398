// gpuperf dump: every record of a trace as readable text.
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/output_file.h"
#include "format/text_dump.h"

namespace gpuperf::cli {
namespace {

int RunDump(const std::string& path) {
  auto out = OutputFile::Open("-");
  if (!out.ok()) return ReportError(out.status());
  ReadReport report;
  Status status = DumpTrace(path, (*out)->stream(), &report);
  PrintReadWarnings(report);
  status = (*out)->Finish(status);
  return status.ok() ? kExitOk : ReportError(ExplainNotATrace(status, path));
}

void RegisterDump(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "dump", "Print every record of a trace as one line of text (stable, diffable)");
  auto path = std::make_shared<std::string>();
  cmd->add_option("trace", *path, "Trace file (.gpt) or directory of trace files")->required();
  cmd->callback([path, exit_code] { *exit_code = RunDump(*path); });
}

}  // namespace

GPUPERF_COMMAND(90, RegisterDump);

}  // namespace gpuperf::cli
