// gpuperf: which line of CPU code is responsible for how much GPU time, and why.
#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <string_view>

#include "base/text_escape.h"
#include "cli/command.h"
#include "cli/command_names.h"
#include "cli/output_file.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::cli {

std::vector<CommandEntry>& CommandRegistry() {
  static std::vector<CommandEntry> registry;
  return registry;
}

int ReportError(const Status& status) {
  std::fprintf(stderr, "gpuperf: error: %s\n", DisplayText(status.message()).c_str());
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

void PrintWarning(std::string_view text) {
  std::fprintf(stderr, "gpuperf: warning: %s\n", DisplayText(text).c_str());
}

namespace {
thread_local bool quiet_read_warnings = false;
}  // namespace

void PrintReadWarnings(const ReadReport& report) {
  if (quiet_read_warnings) return;
  for (const std::string& warning : report.warnings) PrintWarning(warning);
}

QuietReadWarnings::QuietReadWarnings() : was_quiet_(quiet_read_warnings) {
  quiet_read_warnings = true;
}

QuietReadWarnings::~QuietReadWarnings() {
  quiet_read_warnings = was_quiet_;
}

namespace {

// CLI11's own parse errors in our one-line format, naming the help of the command that
// was being parsed.
std::string ParseFailureLine(const CLI::App* app, const CLI::Error& error) {
  std::string what = error.what();
  // "The following argument..." reads as a sentence of ours when it starts lower case.
  if (what.size() > 1 && std::isupper(static_cast<unsigned char>(what[0])) &&
      std::islower(static_cast<unsigned char>(what[1]))) {
    what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  }
  std::string command = app->get_name();
  for (const CLI::App* sub : app->get_subcommands()) command += " " + sub->get_name();
  return "gpuperf: error: " + what + " (see '" + command + " --help')\n";
}

// The first word that is not an option names the command; CLI11 would only say that a
// subcommand is required. Returns false (after saying why) when it names none.
bool CheckCommandName(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;  // --help, --version: none takes a value
    if (std::find(names.begin(), names.end(), arg) != names.end()) return true;
    ReportError(Error(StatusCode::kInvalidArgument, UnknownCommandMessage(arg, names)));
    return false;
  }
  if (argc > 1) return true;  // options only: CLI11 handles --help and the rest
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  ReportError(Error(StatusCode::kInvalidArgument,
                    "no command given (commands: " + list + "; see 'gpuperf --help')"));
  return false;
}

// Help and version text from CLI11, written like every other output: a failed write
// is an error.
int PrintParseResult(const CLI::App& app, const CLI::ParseError& error) {
  std::ostringstream text;
  const int code = app.exit(error, text, std::cerr);
  auto out = OutputFile::Open("-");
  if (!out.ok()) return ReportError(out.status());
  (*out)->stream() << text.str();
  Status written = (*out)->Finish();
  if (!written.ok()) return ReportError(written);
  return code == 0 ? kExitOk : kExitUsage;
}

// What reached stdout must have been written; a failure there fails a successful run.
int WithStdoutChecked(int exit_code) {
  Status flushed = FlushStdout();
  if (!flushed.ok() && exit_code == kExitOk) return ReportError(flushed);
  return exit_code;
}

}  // namespace
}  // namespace gpuperf::cli

namespace {

// The offline commands allocate and free buffers of megabytes, per chunk, file and table,
// on several threads. glibc gives such memory back to the kernel as soon as it is free, and
// each reuse then faults its pages in, zeroed, again: the kernel's share was a third of the
// Parquet export's CPU time. Free memory is kept up to a bound instead.
void KeepFreedMemoryForReuse() {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the most glibc allows; fixed, not adaptive
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuperf::cli;
  KeepFreedMemoryForReuse();
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
  app.failure_message(ParseFailureLine);  // subcommands created below inherit it

  auto& registry = CommandRegistry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandEntry& a, const CommandEntry& b) { return a.order < b.order; });
  int exit_code = kExitOk;
  for (const CommandEntry& entry : registry) entry.reg(app, &exit_code);
  if (!CheckCommandName(app, argc, argv)) return kExitUsage;

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return PrintParseResult(app, e);
  }
  return WithStdoutChecked(exit_code);
}
