// gpuperf attach PID...: records a CUDA program that is already running, for a window, and
// leaves it as it was (docs/attach.md). Every process is checked before any is touched; the
// injection library is loaded into each (src/attach), records as `record` would into the
// output directory, and detaches from CUPTI when the window ends. Then the traces are
// symbolized and summed up as record's are.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "attach/attach_steps.h"
#include "attach/injector.h"
#include "attach/target.h"
#include "base/text_escape.h"
#include "cli/attach_session.h"
#include "cli/command.h"
#include "cli/injection_library.h"
#include "cli/quantity_options.h"
#include "cli/record_cpu.h"
#include "cli/record_dir.h"
#include "cli/record_flight.h"
#include "cli/record_options.h"
#include "cli/record_summary.h"
#include "cli/wall_clock.h"

namespace gpuperf::cli {
namespace {

struct AttachArgs {
  RecordOptions record;
  std::vector<int64_t> pids;
  bool all = false;
  std::string at;
  uint64_t grace_ms = kDefaultAttachGraceMs;
};

// How long after a window should have ended (its --duration, the grace the library gives the
// last kernels, writing the trace) gpuperf stops waiting for it. The window ends by itself
// once gpuperf is gone.
constexpr uint64_t kEndSlackMs = 60'000;
constexpr int kPollMs = 50;
// A second SIGINT or SIGTERM this long after the first means "leave now".
constexpr auto kSecondSignalAfter = std::chrono::seconds(1);

uint64_t RealtimeNs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(now.tv_nsec);
}

std::string LocalTime(uint64_t realtime_ns) {
  const time_t seconds = static_cast<time_t>(realtime_ns / 1'000'000'000ull);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof(millis), ".%03u",
                static_cast<unsigned>(realtime_ns / 1'000'000ull % 1000));
  return std::string(text) + millis;
}

std::string WindowLength(uint64_t duration_ms) {
  if (duration_ms == 0) return "until Ctrl-C";
  char text[48];
  std::snprintf(text, sizeof(text), "for %.3g s", duration_ms / 1e3);
  return text;
}

// The processes to attach to, each checked (attach::InspectTarget) before any is touched.
// With PIDs, any refusal refuses them all: a job's ranks are recorded together or not at
// all. With --all, a process that refuses is named and passed over.
Result<std::vector<attach::Target>> ChooseTargets(const AttachArgs& a) {
  std::vector<pid_t> pids;
  if (a.all) {
    pids = attach::CudaProcessesOf(getuid(), getpid());
    if (pids.empty()) {
      return Error(StatusCode::kNotFound,
                   "--all: no process of this user on this host has loaded libcuda");
    }
  } else {
    for (int64_t pid : a.pids) {
      if (pid <= 0 || pid > INT32_MAX) {
        return Error(StatusCode::kInvalidArgument,
                     "\"" + std::to_string(pid) + "\" is not a process id");
      }
      pids.push_back(static_cast<pid_t>(pid));
    }
  }
  std::vector<attach::Target> targets;
  std::vector<std::string> refusals;
  for (pid_t pid : pids) {
    bool seen = false;
    for (const attach::Target& t : targets) seen = seen || t.pid == pid;
    if (seen) continue;
    Result<attach::Target> target = attach::InspectTarget(pid);
    if (target.ok()) {
      targets.push_back(std::move(target).value());
    } else if (a.all) {
      std::fprintf(stderr, "gpuperf: passing over process %d: %s\n", static_cast<int>(pid),
                   DisplayText(target.status().message()).c_str());
    } else {
      refusals.push_back(target.status().message());
    }
  }
  if (!refusals.empty()) {
    for (size_t i = 0; i + 1 < refusals.size(); ++i) {
      std::fprintf(stderr, "gpuperf: error: %s\n", DisplayText(refusals[i]).c_str());
    }
    return Error(StatusCode::kInternal, refusals.back());
  }
  if (targets.empty()) return Error(StatusCode::kNotFound, "--all: no process could be attached");
  return targets;
}

// Waits for every window to end; the first SIGINT or SIGTERM asks them all to end now, a
// second one (a second Ctrl-C, not the same signal sent twice at once, as `timeout` does)
// leaves them to end by themselves. False when gpuperf leaves before they ended.
bool WaitForWindows(std::vector<std::unique_ptr<AttachSession>>& sessions, uint64_t limit_ms,
                    bool quiet) {
  sigset_t ending;
  sigemptyset(&ending);
  sigaddset(&ending, SIGINT);
  sigaddset(&ending, SIGTERM);
  const auto started = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point asked{};
  for (;;) {
    bool open = false;
    for (auto& session : sessions) {
      const AttachSession::Phase was = session->phase();
      const AttachSession::Phase now = session->Poll();
      if (was == AttachSession::Phase::kWaiting && now == AttachSession::Phase::kRecording &&
          !quiet) {
        std::fprintf(stderr, "gpuperf: %s: recording\n", DisplayText(session->Who()).c_str());
      }
      open = open || now != AttachSession::Phase::kEnded;
    }
    if (!open) return true;
    const timespec poll = {0, kPollMs * 1'000'000L};
    if (sigtimedwait(&ending, nullptr, &poll) > 0) {
      const auto now = std::chrono::steady_clock::now();
      if (asked == std::chrono::steady_clock::time_point{}) {
        asked = now;
        for (auto& session : sessions) session->AskToStop();
        attach::ReachStep(attach::AttachStep::kStopAsked);
        if (!quiet) std::fprintf(stderr, "gpuperf: ending the window (Ctrl-C again: leave now)\n");
      } else if (now - asked >= kSecondSignalAfter) {
        return false;
      }
    }
    if (limit_ms != 0 &&
        std::chrono::steady_clock::now() - started > std::chrono::milliseconds(limit_ms)) {
      PrintWarning("a window did not end in time");
      return false;
    }
  }
}

int RunAttach(AttachArgs& a) {
  RecordOptions& options = a.record;
  if (a.all == !a.pids.empty()) {
    return ReportError(Error(StatusCode::kInvalidArgument,
                             a.all ? "--all attaches to every CUDA process: give no PID with it"
                                   : "attach to what? give a PID (or several), or --all"));
  }
#if !defined(__x86_64__)
  return ReportError(Error(StatusCode::kInvalidArgument, attach::kOnlyOnX86_64));
#endif
  std::string activities_error;
  if (!ValidateActivities(options.activities, &activities_error)) {
    return ReportError(Error(StatusCode::kInvalidArgument, activities_error));
  }
  if (Status flight = ResolveFlightOptions(options); !flight.ok()) return ReportError(flight);
  uint64_t at_ns = 0;
  if (!a.at.empty()) {
    Result<uint64_t> at = ParseWallClock(a.at, RealtimeNs());
    if (!at.ok()) return ReportError(at.status());
    at_ns = *at;
  }
  auto library = FindInjectionLibrary(options.inject_lib);
  if (!library.ok()) return ReportError(library.status());
  Result<std::vector<attach::Target>> targets = ChooseTargets(a);
  if (!targets.ok()) return ReportError(targets.status());
  auto dir = PrepareOutputDir(options, targets->front().name);
  if (!dir.ok()) return ReportError(dir.status());

  // SIGINT and SIGTERM end the windows (WaitForWindows), never gpuperf in mid-injection.
  sigset_t ending;
  sigemptyset(&ending);
  sigaddset(&ending, SIGINT);
  sigaddset(&ending, SIGTERM);
  sigprocmask(SIG_BLOCK, &ending, nullptr);

  AttachRequest request;
  request.library = *library;
  request.dir = *dir;
  request.settings = AttachSettingsText(RecordEnvironment(options, *library, *dir));
  request.duration_ms = options.duration_ms;
  request.at_realtime_ns = at_ns;
  request.grace_ms = a.grace_ms;
  std::unique_ptr<CpuRecording> cpu = CpuRecording::Start(options, *dir);
  std::vector<std::unique_ptr<AttachSession>> sessions;
  int failed = 0;
  for (const attach::Target& target : *targets) {
    Result<std::unique_ptr<AttachSession>> session = AttachSession::Start(target, request);
    if (!session.ok()) {
      ReportError(session.status());
      ++failed;
      continue;
    }
    AttachSession& s = **session;
    if (cpu != nullptr) cpu->Follow(s.pid());
    if (options.verbose) {
      std::fprintf(stderr, "gpuperf: %s: %s\n", DisplayText(s.Who()).c_str(),
                   DisplayText(s.loaded_through()).c_str());
    }
    if (!options.quiet) {
      if (s.Poll() == AttachSession::Phase::kWaiting && at_ns != 0) {
        std::fprintf(stderr,
                     "gpuperf: attached to %s: its window opens at %s, then records into %s %s\n",
                     DisplayText(s.Who()).c_str(), LocalTime(at_ns).c_str(),
                     DisplayText(*dir).c_str(), WindowLength(options.duration_ms).c_str());
      } else {
        std::fprintf(stderr, "gpuperf: attached to %s: recording into %s %s\n",
                     DisplayText(s.Who()).c_str(), DisplayText(*dir).c_str(),
                     WindowLength(options.duration_ms).c_str());
      }
    }
    sessions.push_back(std::move(session).value());
  }
  if (cpu != nullptr) cpu->Run();
  if (!sessions.empty()) {
    uint64_t limit_ms = 0;
    if (options.duration_ms != 0) {
      const uint64_t now = RealtimeNs();
      const uint64_t wait_ms = at_ns > now ? (at_ns - now) / 1'000'000ull : 0;
      limit_ms = wait_ms + options.duration_ms + kEndSlackMs;
    }
    if (!WaitForWindows(sessions, limit_ms, options.quiet)) {
      // Each window ends by itself now that gpuperf is gone (it watches gpuperf's pid).
      for (auto& session : sessions) {
        if (session->Poll() == AttachSession::Phase::kEnded) continue;
        std::fprintf(
            stderr,
            "gpuperf: %s ends its window by itself; its trace: %s (then: gpuperf symbolize %s)\n",
            DisplayText(session->Who()).c_str(), DisplayText(session->trace()).c_str(),
            DisplayText(*dir).c_str());
        session->Abandon();
      }
      return kExitFailure;
    }
  }
  if (cpu != nullptr) cpu->Finish(static_cast<uint32_t>(getpid()));
  bool any_trace = false;
  for (auto& session : sessions) {
    std::fputs(session->LibraryLines().c_str(), stderr);
    const std::string outcome = session->Outcome();
    if (!outcome.empty()) std::fprintf(stderr, "gpuperf: %s\n", DisplayText(outcome).c_str());
    if (!options.quiet && session->Recorded()) {
      std::fprintf(stderr, "gpuperf: detached from %s%s\n", DisplayText(session->Who()).c_str(),
                   session->DetachNote().c_str());
    }
    any_trace = any_trace || session->Recorded();
  }
  if (any_trace && !options.no_symbolize) {
    Status symbolized = SymbolizeRecording(*dir, options.quiet);
    if (!symbolized.ok()) PrintWarning("symbolization failed: " + symbolized.message());
  }
  if (any_trace && !options.quiet) {
    if (options.flight_settings.window_ms) {
      bool finished = false;
      std::fputs(
          DescribeFlightRecording(*dir, static_cast<uint32_t>(sessions.front()->pid()), &finished)
              .c_str(),
          stderr);
    } else if (auto totals = SummarizeRecording(*dir); totals.ok()) {
      const std::string note =
          totals->kernels == 0 ? "  note      no kernel was launched during the window\n" : "";
      std::fputs(FormatRecordSummary(*totals, *dir, note).c_str(), stderr);
    } else {
      ReportError(totals.status());
    }
  }
  sessions.clear();  // their state files go
  return failed == 0 && any_trace ? kExitOk : kExitFailure;
}

void RegisterAttach(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<AttachArgs>();
  auto* cmd = app.add_subcommand(
      "attach",
      "Record a CUDA program that is already running, for a window, then leave it as it was:\n"
      "gpuperf loads its library into the process (ptrace), records what `record` records,\n"
      "and detaches from CUPTI at the window's end (docs/attach.md).");
  cmd->footer(
      "Exit status: 0 when every window was recorded; 1 when a process was refused, exited\n"
      "during the attach, or recorded nothing.");
  AddRecordingOptions(*cmd, args->record, OptionsFor::kAttach);
  cmd->add_flag("--all", args->all,
                "Every process of this user on this host that has loaded libcuda\n(the ranks of "
                "a job)");
  cmd->add_option("--at", args->at,
                  "Open the window at this wall-clock time, so that ranks on several hosts\n"
                  "record the same moment: HH:MM:SS[.FFF] (today, local time),\n"
                  "YYYY-MM-DDTHH:MM:SS[Z], @EPOCH_SECONDS or +DURATION (e.g. +10s)");
  TakesDuration(cmd->add_option("--grace", args->grace_ms,
                                "At the window's end, how long the work launched last gets to "
                                "finish\nbefore CUPTI is detached (default " +
                                    std::to_string(kDefaultAttachGraceMs) +
                                    "ms; up to 60s): kernels still running\nthen are recorded "
                                    "as CUPTI holds them"),
                kNsPerMs, DurationSpec{0, 0, 60 * kNsPerSecond});
  cmd->add_option("pids", args->pids, "The processes to record")->expected(0, -1);
  cmd->callback([args, exit_code] { *exit_code = RunAttach(*args); });
}

}  // namespace

GPUPERF_COMMAND(12, RegisterAttach);

}  // namespace gpuperf::cli
