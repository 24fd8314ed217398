// How subcommands join the CLI: each cmd_*.cc defines a registration function and
// registers it with GPUPERF_COMMAND, so main() stays thin and adding a command touches
// one new file.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::cli {

// A command's registration adds its subcommand to `app`; its callback stores the
// process exit code in `*exit_code`.
using RegisterFn = std::function<void(CLI::App& app, int* exit_code)>;

struct CommandEntry {
  int order;  // position in --help
  RegisterFn reg;
};

std::vector<CommandEntry>& CommandRegistry();

struct CommandRegistrar {
  CommandRegistrar(int order, RegisterFn reg) {
    CommandRegistry().push_back({order, std::move(reg)});
  }
};

#define GPUPERF_COMMAND(order, fn) \
  static ::gpuperf::cli::CommandRegistrar gp_registrar_##fn(order, fn)

// Prints "gpuperf: error: <message>" to stderr and returns the exit code for the status.
// Messages quote paths and names a recorded program chose: they are printed in the display
// form of base/text_escape.h, as every line below is.
int ReportError(const Status& status);

// Prints "gpuperf: warning: <text>" to stderr.
void PrintWarning(std::string_view text);

// Exit codes shared by all commands (record returns the command's own code instead).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;   // the command could not do its job
inline constexpr int kExitUsage = 2;     // bad command line
inline constexpr int kExitBadInput = 3;  // the input is not a trace, or cannot be read

// Prints the reader's warnings (damage, truncation) to stderr, one line each.
void PrintReadWarnings(const ReadReport& report);

// While one lives, PrintReadWarnings prints nothing on its thread: the other outputs of
// `report -o` are read in the report's pass, whose warnings the report prints.
class QuietReadWarnings {
 public:
  QuietReadWarnings();
  ~QuietReadWarnings();
  QuietReadWarnings(const QuietReadWarnings&) = delete;
  QuietReadWarnings& operator=(const QuietReadWarnings&) = delete;

 private:
  bool was_quiet_;
};

// --native-detail (report, flamegraph, export): the same words everywhere.
inline constexpr char kNativeDetailHelp[] =
    "Show every native frame of PyTorch stacks: by default an nn.Module call is its forward\n"
    "frame, an ATen op one frame (aten::linear), a library call one frame (cublasLtMatmul)";

}  // namespace gpuperf::cli
