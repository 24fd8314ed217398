// gpuperf top: every recorded process on this machine, live, from the pages the injection
// library keeps (docs/live.md): GPU activity, launches, copies, API calls and failures,
// memory, drops and top kernels, joined with NVML's device readings when NVML is there.
#include <unistd.h>

#include <memory>

#include "base/text_table.h"
#include "cli/command.h"
#include "cli/output_file.h"
#include "cli/quantity_options.h"
#include "cli/terminal.h"
#include "live/live_json.h"
#include "live/top_screen.h"

namespace gpuperf::cli {
namespace {

struct TopArgs {
  int64_t pid = 0;
  bool once = false;
  std::string format = "text";
  uint64_t interval_ms = 1000;
  std::string sort = "active";
  std::string dir;
  bool no_nvml = false;
};

Result<live::TopSort> ParseTopSort(const std::string& text) {
  if (text == "active") return live::TopSort::kActive;
  if (text == "launches") return live::TopSort::kLaunches;
  if (text == "memory") return live::TopSort::kMemory;
  if (text == "api") return live::TopSort::kApi;
  if (text == "pid") return live::TopSort::kPid;
  return Error(StatusCode::kInvalidArgument,
               "unknown --sort '" + text + "' (active, launches, memory, api, pid)");
}

// The key that picks a sort, and the order 's' steps through.
constexpr std::pair<char, live::TopSort> kSortKeys[] = {{'g', live::TopSort::kActive},
                                                        {'k', live::TopSort::kLaunches},
                                                        {'m', live::TopSort::kMemory},
                                                        {'a', live::TopSort::kApi},
                                                        {'p', live::TopSort::kPid}};

live::TopSort NextSort(live::TopSort sort) {
  const size_t count = std::size(kSortKeys);
  for (size_t i = 0; i < count; ++i) {
    if (kSortKeys[i].second == sort) return kSortKeys[(i + 1) % count].second;
  }
  return live::TopSort::kActive;
}

int PrintOnce(const TopArgs& a, const live::LiveModel& model, live::TopSort sort) {
  if (a.pid > 0 && model.scan.processes.empty()) {
    // Its page may be there and not be one to trust: say why it was skipped.
    std::string why = "not running, or not recorded by gpuperf";
    const std::string page = "/" + std::to_string(a.pid) + ".live:";
    for (const std::string& line : model.scan.skipped) {
      if (line.find(page) != std::string::npos) why = "skipped " + line;
    }
    ReportError(Error(StatusCode::kNotFound,
                      "no live page for pid " + std::to_string(a.pid) + " (" + why + ")"));
    return kExitFailure;  // nothing to show, not a bad input file
  }
  auto out = OutputFile::Open("-");
  if (!out.ok()) return ReportError(out.status());
  if (a.format == "json") {
    (*out)->stream() << live::LiveModelJson(model);
  } else {
    live::TopScreenOptions options;
    options.sort = sort;
    options.width = TerminalWidth(STDOUT_FILENO);  // 0 (no limit) when not a terminal
    for (const std::string& line : live::RenderTopScreen(model, options)) {
      (*out)->stream() << line << '\n';
    }
  }
  Status status = (*out)->Finish();
  return status.ok() ? kExitOk : ReportError(status);
}

int RunInteractive(const TopArgs& a, const live::ScanOptions& scan, const Nvml* nvml,
                   const std::string& nvml_why, live::TopSort sort) {
  Terminal terminal;
  const int interval_ms = static_cast<int>(a.interval_ms);
  while (!StopRequested()) {
    const live::LiveModel model = live::ReadLiveModel(scan, nvml, nvml_why);
    live::TopScreenOptions options;
    options.sort = sort;
    options.interactive = true;
    terminal.Size(&options.height, &options.width);
    terminal.Paint(live::RenderTopScreen(model, options));
    const int key = terminal.WaitKey(interval_ms);
    if (key == 'q' || key == 'Q') break;
    if (key == 's') sort = NextSort(sort);
    for (const auto& [letter, choice] : kSortKeys) {
      if (key == letter) sort = choice;
    }
    TakeResized();  // the next paint asks for the size anyway
  }
  return kExitOk;
}

int RunTop(const TopArgs& a) {
  if (a.format != "text" && a.format != "json") {
    return ReportError(
        Error(StatusCode::kInvalidArgument, "unknown --format '" + a.format + "' (text, json)"));
  }
  if (a.format == "json" && !a.once) {
    return ReportError(Error(StatusCode::kInvalidArgument, "--format json needs --once"));
  }
  auto sort = ParseTopSort(a.sort);
  if (!sort.ok()) return ReportError(sort.status());
  live::ScanOptions scan;
  if (!a.dir.empty()) scan.dirs = {a.dir};
  scan.only_pid = static_cast<uint32_t>(a.pid);
  std::string nvml_why = "--no-nvml";
  std::unique_ptr<Nvml> nvml;
  if (!a.no_nvml) nvml = Nvml::Open(&nvml_why);
  // Not a terminal (a pipe, a file, a script): one picture, as --once.
  if (a.once || !isatty(STDOUT_FILENO)) {
    return PrintOnce(a, live::ReadLiveModel(scan, nvml.get(), nvml_why), *sort);
  }
  InstallStopSignals();
  return RunInteractive(a, scan, nvml.get(), nvml_why, *sort);
}

void RegisterTop(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "top", "Watch every recorded process on this machine live (GPU activity, kernels, memory)");
  cmd->footer(
      "Keys: g (GPU active), k (launches), m (memory), a (API calls), p (pid) sort; s steps "
      "through them; q quits.\nEvery process recorded by 'gpuperf record' keeps a live page "
      "(docs/live.md); rates average the last 5 s of GPU time.");
  auto a = std::make_shared<TopArgs>();
  TakesCount(cmd->add_option("--pid", a->pid, "Only this process"), kPidSpec);
  cmd->add_flag("--once", a->once, "Print one picture and exit (for scripts)");
  cmd->add_option("--format", a->format, "With --once: text (default) or json");
  TakesDuration(cmd->add_option("--interval", a->interval_ms,
                                "Time between refreshes: seconds, or with a unit (100ms to 1h; "
                                "default 1)"),
                kNsPerMs, {kNsPerSecond, 100 * kNsPerMs, kNsPerHour});
  cmd->add_option("--sort", a->sort, "active (default), launches, memory, api, pid");
  cmd->add_option("--dir", a->dir,
                  "Directory of live pages (default $GPUPERF_LIVE_DIR or /dev/shm/gpuperf-UID)");
  cmd->add_flag("--no-nvml", a->no_nvml, "Do not read device state through NVML");
  cmd->callback([a, exit_code] { *exit_code = RunTop(*a); });
}

}  // namespace

GPUPERF_COMMAND(70, RegisterTop);

}  // namespace gpuperf::cli
