// `gpuperf attach`'s side in the running process (docs/attach.md): gpuperf_attach_start,
// which the injector calls once it has loaded this library, opens a recording window on a
// thread of its own; the window subscribes to CUPTI (long after CUDA started, as Kineto's
// on-demand mode does), records as `record` does into a trace of its own, and at its end
// finalizes CUPTI, so that the program runs on as it did before. A later attach calls
// gpuperf_attach_start again in the library already loaded.
//
// gpuperf_attach_start runs on one of the program's threads, which the injector borrowed at a
// safe point with every signal blocked: it only reads its settings and starts the window's
// thread. Everything else, CUPTI included, happens on that thread. Nothing is printed to the
// program's stdout or stderr: the library's lines go to a log file gpuperf prints, and how the
// window goes to a state file (one "key=value ..." line, replaced whole).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "inject/attach_settings.h"
#include "inject/cupti/activity.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/detach.h"
#include "inject/cupti/window_edge.h"
#include "inject/log.h"
#include "inject/power/power_sampler.h"
#include "inject/recorder.h"
#include "inject/recorder_memory.h"
#include "inject/recorder_setup.h"
#include "inject/stack/stack_capture.h"
#include "inject/stats.h"
#include "inject/thread_buffers.h"
#include "unwind/table_builder.h"

namespace gpuperf::inject {
namespace {

// One window at a time. Its recorder and power sampler stay allocated after it ends: CUPTI or
// a thread may still hold a pointer to them (as InitializeInjection's, they are never freed).
std::atomic<bool> g_window_open{false};
std::mutex g_close_mutex;  // the window's thread and the exit hook: one closes, the other waits
std::atomic<Recorder*> g_window{nullptr};
PowerSampler* g_window_power = nullptr;
AttachSettings* g_window_settings = nullptr;
int g_log_fd = -1;  // the window's log file, closed with the window
// How long the end of a window waits for the program's next CUDA call to finalize CUPTI
// (detach.h); a program that makes none in it is finalized at its next call all the same.
constexpr uint64_t kFinalizeWaitMs = 2000;

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// The state file: one key=value per line, "state" first; replaced whole (written beside it,
// then renamed), so gpuperf never reads half of one.
using StateLines = std::initializer_list<std::pair<const char*, std::string>>;
void WriteState(const AttachSettings& settings, const char* state, StateLines more = {}) {
  const std::string part = settings.state_path + ".part";
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return;
  std::string text = std::string("state=") + state + "\n";
  for (const auto& [key, value] : more) {
    std::string line = value;
    for (char& c : line) {
      if (c == '\n') c = ' ';
    }
    text += std::string(key) + "=" + line + "\n";
  }
  const ssize_t written = ::write(fd, text.data(), text.size());
  ::close(fd);
  if (written == static_cast<ssize_t>(text.size()))
    ::rename(part.c_str(), settings.state_path.c_str());
}

enum class StopReason { kNone, kDuration, kAsked, kInjectorGone, kExit };

const char* ReasonName(StopReason why) {
  switch (why) {
    case StopReason::kDuration:
      return "duration";
    case StopReason::kAsked:
      return "asked";
    case StopReason::kInjectorGone:
      return "gpuperf_gone";
    case StopReason::kExit:
      return "exit";
    case StopReason::kNone:
      break;
  }
  return "none";
}

// Watches for the end of a wait: `deadline_ns` (CLOCK_MONOTONIC, 0: none), the stop file,
// or the injector's exit (a pidfd, readable once it is gone; polled with kill(0) where the
// kernel has no pidfd).
class StopWatch {
 public:
  explicit StopWatch(const AttachSettings& settings) : settings_(settings) {
    if (settings.injector_pid != 0) {
      pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, settings.injector_pid, 0));
    }
  }
  ~StopWatch() {
    if (pidfd_ >= 0) ::close(pidfd_);
  }

  StopReason Wait(uint64_t deadline_ns) {
    for (;;) {
      if (access(settings_.stop_path.c_str(), F_OK) == 0) return StopReason::kAsked;
      if (InjectorGone()) return StopReason::kInjectorGone;
      const uint64_t now = ClockNs(CLOCK_MONOTONIC);
      if (deadline_ns != 0 && now >= deadline_ns) return StopReason::kDuration;
      // 20 ms: how late a stop request or a vanished gpuperf is seen; the deadline itself is
      // kept to the millisecond.
      uint64_t wait_ms = 20;
      if (deadline_ns != 0 && (deadline_ns - now) / 1000000 < wait_ms) {
        wait_ms = (deadline_ns - now + 999999) / 1000000;
      }
      pollfd fd = {pidfd_, POLLIN, 0};
      ::poll(&fd, pidfd_ >= 0 ? 1 : 0, static_cast<int>(wait_ms));
    }
  }

 private:
  bool InjectorGone() const {
    if (settings_.injector_pid == 0) return false;
    if (pidfd_ >= 0) {
      pollfd fd = {pidfd_, POLLIN, 0};
      return ::poll(&fd, 1, 0) > 0;
    }
    return kill(static_cast<pid_t>(settings_.injector_pid), 0) != 0 && errno == ESRCH;
  }

  const AttachSettings& settings_;
  int pidfd_ = -1;
};

// No descriptor of ours stays open in the program after the window, and no later line can
// land in a file the program opened under the same number.
void EndLog() {
  SetLogFd(-1);
  if (g_log_fd >= 0) ::close(g_log_fd);
  g_log_fd = -1;
}

// Each window's trace is a whole trace: the counters start at zero, and every thread, stack
// and Python code object the library knows is written to it again.
// Without stacks (--no-stacks) no launch links to them: the earlier windows' stacks stay out.
void StartNewTrace(const Config& config) {
  for (auto& stat : g_stats) stat.store(0, std::memory_order_relaxed);
  RestartThreadReports();
  if (config.stacks) RewindStackDrains();
}

// Subscribes first: when another client (Kineto, Nsight Systems) holds CUPTI, nothing else
// is touched (its activity buffers stay its own) and nothing is finalized.
bool OpenWindow(Recorder& r, const AttachSettings& settings, std::string* trace) {
  // The last window's finalize, where the program made no CUDA call since, is withdrawn.
  if (!SettlePendingFinalize(kFinalizeWaitMs)) {
    WriteState(settings, "refused", {{"reason", "cupti_failed"}});
    return false;
  }
  MarkCuptiAttached();  // the last window finalized CUPTI; it attaches again at the first call
  PrepareTranslator(r);
  InitStacksFor(r.config);  // before the callbacks: sampled launches link to its marker stack
  SetTableBuilderIdle(false);
  // Always subscribed, even where neither stacks nor API records need the callbacks: the
  // subscription is how another CUPTI client (Kineto, Nsight Systems) is found before its
  // activity buffers could be taken over.
  r.subscribed = EnableCallbacks(r);
  if (!r.subscribed) {
    const std::string holder = OtherSubscriberName();
    if (holder.empty()) {
      WriteState(settings, "refused", {{"reason", "cupti_failed"}});
    } else {
      WriteState(settings, "refused", {{"reason", "cupti_in_use"}, {"holder", holder}});
    }
    // Nothing of ours is in CUPTI: do not finalize what belongs to the other client.
    return false;
  }
  if (!RegisterActivityCallbacks(r)) {
    if (r.subscribed) UnsubscribeCallbacks();
    WriteState(settings, "refused", {{"reason", "cupti_failed"}});
    return false;
  }
  ConfigureRecorderMemory(r.config);
  *trace = NewTracePath(r.config.output_dir, r.pid);
  const ProcessRecord process = DescribeProcess(r);
  StartNewTrace(r.config);
  WriterHooks hooks;
  hooks.flush_cupti = [](bool forced) { FlushActivities(forced); };
  hooks.on_period = [&r](uint64_t) { PeriodicChecks(r, r.capturing.load()); };
  Status status = r.writer.Start(*trace, r.config, r.pid, r.names, process, std::move(hooks));
  if (!status.ok()) {
    DetachCupti(r, kFinalizeWaitMs);
    WriteState(settings, "refused", {{"reason", "writer"}, {"message", status.message()}});
    return false;
  }
  r.writer.Enqueue(RankBatch(r));
  g_window_power = new PowerSampler();
  PublishRecorder(&r, g_window_power);
  g_window_power->Start(r.config.power_hz, r.pid, r.writer);
  InstallProcessHooks();
  // Links before kernels, as a capture range starts (injection.cc): every kernel recorded has
  // its launch link.
  r.capturing.store(true);
  StartWindowEdge(true);  // before the callbacks: a call they find running is noted
  SetApiCallbacks(true);
  EnableActivities(r, true);
  DumpExistingDevicesAndContexts();  // else the window's trace would name no GPU
  SetActivityFlushPeriod(r.config.cupti_flush_period_ms);
  return true;
}

// Ends the window once (the window's thread, or the exit hook if the program ends first):
// kernels before links, as a capture range ends; the work launched last gets `grace_ms` to
// finish; then CUPTI is detached altogether and the trace closed. At exit CUPTI is only
// flushed: the process ends anyway.
void CloseWindow(StopReason why) {
  std::lock_guard<std::mutex> lock(g_close_mutex);
  Recorder* r = g_window.load();
  if (r == nullptr || r->finished.load()) return;
  EnableActivities(*r, false);
  QuietApiCallbacks();  // not off by id: CUPTI is finalized next (cupti/callbacks.h)
  r->capturing.store(false);
  if (why != StopReason::kExit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(g_window_settings->grace_ms));
  }
  if (g_window_power != nullptr) g_window_power->Stop(1000);
  const char* cupti = "exit";
  if (why == StopReason::kExit) {
    r->writer.StopCuptiFlushes(2000);
    FlushActivities(true);
  } else {
    cupti = FinalizeOutcomeName(DetachCupti(*r, kFinalizeWaitMs));
  }
  r->finished.store(true);
  r->disabled.store(true);
  SetTableBuilderIdle(true);  // the tables stay for the next window; the thread sleeps
  const bool closed = r->writer.Finish(10000);
  WriteState(*g_window_settings, "done",
             {{"reason", ReasonName(why)},
              {"closed", closed ? "1" : "0"},
              {"cupti", cupti},
              {"end_ns", std::to_string(ClockNs(CLOCK_MONOTONIC))}});
  EndLog();
  g_window_open.store(false);
}

void CloseAtExit() {
  StopWaitingForFinalize();  // a window ending now gives up waiting for the next CUDA call
  if (g_window_open.load()) CloseWindow(StopReason::kExit);
}

void RunWindow(std::unique_ptr<AttachSettings> owned) {
  AttachSettings& settings = *owned;
  g_log_fd = ::open(settings.log_path.c_str(),
                    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  SetLogFd(g_log_fd);  // -1 when it cannot be opened: the lines are lost, never the program's
  std::string config_error;
  auto recorder = std::make_unique<Recorder>();
  recorder->config = AttachConfig(settings, &config_error);
  if (!config_error.empty()) LogOnce("ignoring a bad setting: %s", config_error.c_str());
  recorder->pid = static_cast<uint32_t>(getpid());
  StopWatch watch(settings);
  if (settings.at_realtime_ns != 0) {
    WriteState(settings, "waiting");
    const uint64_t now_real = ClockNs(CLOCK_REALTIME);
    const uint64_t wait_ns =
        settings.at_realtime_ns > now_real ? settings.at_realtime_ns - now_real : 0;
    const StopReason early = watch.Wait(ClockNs(CLOCK_MONOTONIC) + wait_ns);
    if (early != StopReason::kDuration) {
      WriteState(settings, "done", {{"reason", ReasonName(early)}, {"empty", "1"}});
      EndLog();
      g_window_open.store(false);
      return;
    }
  }
  recorder->start_ns = MonotonicNs();
  std::string trace;
  Recorder& r = *recorder;
  g_window_settings = owned.release();
  g_window.store(recorder.release());
  if (!OpenWindow(r, settings, &trace)) {
    EndLog();
    g_window_open.store(false);
    return;
  }
  WriteState(settings, "recording", {{"trace", trace}, {"start_ns", std::to_string(r.start_ns)}});
  static std::once_flag exit_hook;
  std::call_once(exit_hook, [] { atexit(CloseAtExit); });
  const uint64_t deadline =
      settings.duration_ms != 0 ? r.start_ns + settings.duration_ms * 1000000ull : 0;
  CloseWindow(watch.Wait(deadline));
}

int Start(const char* text) {
  if (GetRecorder() != nullptr && g_window.load() == nullptr) return kAttachRecordedByRecord;
  auto settings = std::make_unique<AttachSettings>();
  std::string error;
  if (!ParseAttachSettings(text, settings.get(), &error)) return kAttachBadSettings;
  if (g_window_open.exchange(true)) return kAttachWindowOpen;
  try {
    // Its signal mask is the borrowed thread's now: every signal blocked, which the window's
    // threads keep (the writer's and CUPTI's own inherit it).
    std::thread(RunWindow, std::move(settings)).detach();
  } catch (...) {
    g_window_open.store(false);
    return kAttachFailed;
  }
  return kAttachStarted;
}

}  // namespace
}  // namespace gpuperf::inject

extern "C" __attribute__((visibility("default"))) int gpuperf_attach_start(const char* settings) {
  try {
    return gpuperf::inject::Start(settings);
  } catch (...) {
    return gpuperf::kAttachFailed;
  }
}
