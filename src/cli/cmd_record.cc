// gpuperf record: runs a command with the injection library and summarizes the trace.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/record_defaults.h"
#include "base/text_escape.h"
#include "cli/command.h"
#include "cli/command_lookup.h"
#include "cli/injection_library.h"
#include "cli/other_profilers.h"
#include "cli/pc_lines.h"
#include "cli/record_cpu.h"
#include "cli/record_dir.h"
#include "cli/record_options.h"
#include "cli/record_signals.h"
#include "cli/record_summary.h"
#include "cli/run_ending.h"
#include "cli/unwritten_trace.h"
#include "gpuperf/trace_lock.h"

namespace gpuperf::cli {
namespace {

namespace fs = std::filesystem;

// "Usage: gpuperf record [OPTIONS] -- COMMAND [ARGS...]" instead of CLI11's line, which
// cannot show the "--".
class RecordHelpFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string name) const override {
    return "Usage: " + name + " [OPTIONS] -- COMMAND [ARGS...]\n";
  }
};

// --system without a command: every process's CPU time for --duration seconds.
int RecordSystemOnly(const RecordOptions& options) {
  auto dir = PrepareOutputDir(options, "system");
  if (!dir.ok()) return ReportError(dir.status());
  std::unique_ptr<CpuRecording> cpu = CpuRecording::Start(options, *dir);
  if (cpu == nullptr) {
    std::error_code ec;
    if (options.output_dir.empty()) fs::remove(*dir, ec);  // leave no empty default dir
    return kExitFailure;
  }
  cpu->Run();
  // Ctrl+C ends the window early; the samples so far are kept.
  sigset_t wait_for;
  sigemptyset(&wait_for);
  sigaddset(&wait_for, SIGINT);
  sigaddset(&wait_for, SIGTERM);
  sigprocmask(SIG_BLOCK, &wait_for, nullptr);
  const struct timespec window = {static_cast<time_t>(options.duration_ms / 1000),
                                  static_cast<long>(options.duration_ms % 1000 * 1000000)};
  sigtimedwait(&wait_for, nullptr, &window);
  if (!cpu->Finish(static_cast<uint32_t>(getpid()))) return kExitFailure;
  if (!options.no_symbolize) SymbolizeRecording(*dir, options.quiet);
  if (!options.quiet) {
    std::fprintf(stderr, "next: gpuperf report %s  |  gpuperf flamegraph --weight all %s\n",
                 dir->c_str(), dir->c_str());
  }
  return kExitOk;
}

}  // namespace

int RunRecord(RecordOptions& options, std::string* recorded_dir) {
  if (options.system && !WantsCpuRecording(options)) {
    return ReportError(
        Error(StatusCode::kInvalidArgument, "--system samples CPUs: add --cpu and/or --off-cpu"));
  }
  if (options.command.empty() && options.system) {
    if (options.duration_ms == 0) {
      return ReportError(Error(StatusCode::kInvalidArgument,
                               "--system without a command needs --duration SECONDS"));
    }
    return RecordSystemOnly(options);
  }
  if (options.command.empty()) {
    return ReportError(Error(StatusCode::kInvalidArgument,
                             "nothing to record: give a command after --, e.g. "
                             "gpuperf record -- ./my_app"));
  }
  std::string activities_error;
  if (!ValidateActivities(options.activities, &activities_error)) {
    return ReportError(Error(StatusCode::kInvalidArgument, activities_error));
  }
  Status flight = ResolveFlightOptions(options);
  if (!flight.ok()) return ReportError(flight);
  // The shell's exit codes: 127 not found, 126 found but not runnable.
  if (const CommandCheck check = CheckCommand(options.command[0]); check.exit_code != 0) {
    ReportError(Error(StatusCode::kInvalidArgument, check.message));
    return check.exit_code;
  }
  auto library = FindInjectionLibrary(options.inject_lib);
  if (!library.ok()) return ReportError(library.status());
  auto dir = PrepareOutputDir(options, fs::path(options.command[0]).filename().string());
  if (!dir.ok()) return ReportError(dir.status());

  // Another CUDA profiler in this run: the one started first keeps the process (docs/recording.md).
  const std::optional<OtherProfiler> other = FindOtherProfiler(
      options.command, *library, [](const char* name) { return std::getenv(name); });
  std::vector<std::pair<std::string, std::string>> env;
  if (other) {
    std::fprintf(stderr, "%s\n", StepAsideLine(*other, options.command).c_str());
  } else {
    env = RecordEnvironment(options, *library, *dir);
  }
  std::unique_ptr<CpuRecording> cpu = CpuRecording::Start(options, *dir);
  // With the CPU profiler, the child waits until it is followed before it execs.
  int gate[2] = {-1, -1};
  if (cpu != nullptr && pipe2(gate, O_CLOEXEC) != 0) {
    return ReportError(Error(StatusCode::kInternal, std::string("pipe: ") + std::strerror(errno)));
  }

  const ChildGroup group = ChildGroupForThisRun();
  const pid_t record_pid = getpid();
  pid_t child = fork();
  if (child < 0) {
    return ReportError(Error(StatusCode::kInternal, std::string("fork: ") + std::strerror(errno)));
  }
  if (child == 0) {
    EnterChildGroup(group, record_pid);
    if (gate[0] >= 0) {
      close(gate[1]);
      char go;
      while (read(gate[0], &go, 1) < 0 && errno == EINTR) {
      }
    }
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& arg : options.command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "gpuperf: error: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  // Before the gate opens: the program execs in its group, and nothing sent meanwhile is lost.
  const FlightSettings& flight_settings = options.flight_settings;
  ForwardSignals(
      child, group,
      flight_settings.window_ms && flight_settings.signal > 0 ? flight_settings.signal : 0);
  if (cpu != nullptr) {
    cpu->Follow(child);
    cpu->Run();
    close(gate[0]);
    close(gate[1]);  // the child's read returns: it execs
  }

  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  StopForwarding();
  const int exit_code = RecordExitCode(status);
  const uint32_t flush_period_ms =
      options.flush_period_ms ? options.flush_period_ms : kDefaultFlushPeriodMs;

  const bool cpu_written = cpu != nullptr && cpu->Finish(static_cast<uint32_t>(child));
  const std::string cpu_file = cpu_written ? cpu->file_name() : std::string();
  if (other && !cpu_written) {
    std::error_code ec;
    if (options.output_dir.empty()) fs::remove(*dir, ec);  // leave no empty default dir
    return exit_code;
  }
  if (!HasTraceFiles(*dir, cpu_file) && cpu_written) {
    std::fprintf(stderr, "gpuperf: %s never initialized CUDA: CPU samples only\n",
                 options.command[0].c_str());
  } else if (!HasTraceFiles(*dir)) {
    if (!options.quiet) {
      std::fputs(DescribeSignalEnding(status, options.command[0], false, flush_period_ms).c_str(),
                 stderr);
    }
    // Without room for a file, a program that started CUDA leaves none either.
    const std::string full = FullFileSystem(*dir);
    if (!full.empty()) {
      std::fprintf(stderr,
                   "gpuperf: no trace in %s: %s never initialized CUDA, or its trace could not "
                   "be created: %s\n",
                   dir->c_str(), options.command[0].c_str(), full.c_str());
    } else {
      std::fprintf(stderr,
                   "gpuperf: no CUDA activity recorded: %s never initialized CUDA (no trace in "
                   "%s)\n",
                   options.command[0].c_str(), dir->c_str());
    }
    std::error_code ec;
    if (options.output_dir.empty()) fs::remove(*dir, ec);  // leave no empty default dir
    return exit_code;
  } else if (TraceFilesHoldNothing(*dir)) {
    if (!options.quiet) {
      std::fputs(DescribeSignalEnding(status, options.command[0], false, flush_period_ms).c_str(),
                 stderr);
    }
    std::fputs(DescribeUnwrittenTrace(*dir).c_str(), stderr);
    return exit_code;
  }
  if (recorded_dir != nullptr) *recorded_dir = *dir;
  if (!options.no_symbolize) {
    Status symbolized = SymbolizeRecording(*dir, options.quiet);
    if (!symbolized.ok()) {
      PrintWarning("symbolization failed: " + symbolized.message());
    }
  }
  if (options.pc_sampling) {
    Status lines = ResolvePcSampleLines(*dir, options.quiet);
    if (!lines.ok()) {
      PrintWarning("PC samples not mapped to lines: " + lines.message());
    }
  }
  if (!options.quiet && flight_settings.window_ms) {
    bool finished = false;
    std::fputs(DescribeFlightRecording(*dir, static_cast<uint32_t>(child), &finished).c_str(),
               stderr);
    std::fputs(DescribeSignalEnding(status, options.command[0], finished, flush_period_ms).c_str(),
               stderr);
  } else if (!options.quiet) {
    auto totals = SummarizeRecording(*dir);
    if (totals.ok()) {
      const std::string note =
          DescribeEmptyRange(*totals, options.delay_ms / 1e3, options.duration_ms / 1e3);
      std::fputs(FormatRecordSummary(*totals, *dir, note).c_str(), stderr);
    } else {
      std::fprintf(stderr, "gpuperf: error: cannot read the recording: %s\n",
                   DisplayText(totals.status().message()).c_str());
    }
    const bool finished = totals.ok() && totals->FinishedProcess(static_cast<uint32_t>(child));
    std::fputs(DescribeSignalEnding(status, options.command[0], finished, flush_period_ms).c_str(),
               stderr);
  }
  return exit_code;
}

namespace {

void RegisterRecord(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<RecordOptions>();
  auto* cmd = app.add_subcommand(
      "record",
      "Run a command and record its GPU activity and launch stacks.\n"
      "Works on any CUDA program (PyTorch, static cudart, ...) without recompiling or root.");
  cmd->formatter(std::make_shared<RecordHelpFormatter>());
  cmd->footer(
      "Exit status: the command's own; 128+N when signal N killed it (as shells report it).");
  AddRecordOptions(*cmd, *options);
  cmd->callback([options, exit_code] { *exit_code = RunRecord(*options); });
}

}  // namespace

GPUPERF_COMMAND(10, RegisterRecord);

}  // namespace gpuperf::cli
