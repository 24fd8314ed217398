// libgpuperf_inject.so: loaded into the target by libcuda through CUDA_INJECTION64_PATH
// (works with static cudart and any framework). No CUPTI calls happen before
// InitializeInjection; no exception, abort or blocking wait ever reaches the host.
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "gpuperf/trace_lock.h"
#include "inject/cupti/activity.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/detach.h"
#include "inject/cupti/hardware.h"
#include "inject/log.h"
#include "inject/nccl/nccl_plugin.h"
#include "inject/power/power_sampler.h"
#include "inject/preload_stats.h"
#include "inject/record_batch.h"
#include "inject/recorder.h"
#include "inject/recorder_memory.h"
#include "inject/recorder_setup.h"
#include "inject/signal_flush.h"
#include "inject/stack/stack_capture.h"
#include "inject/stats.h"
#include "inject/thread_buffers.h"
#include "inject/torch/autograd_link.h"

namespace gpuperf::inject {

std::atomic<uint64_t> g_stats[kStatSlots];

namespace {

// Published once by InitializeInjection, or by each attach window (PublishRecorder).
std::atomic<Recorder*> g_recorder{nullptr};
std::atomic<PowerSampler*> g_power{nullptr};
std::once_flag g_init_once;

void FinishRecording(const char* why) {
  Recorder* recorder = g_recorder;
  if (recorder == nullptr || recorder->disabled.load() ||
      static_cast<uint32_t>(getpid()) != recorder->pid || recorder->finished.exchange(true)) {
    return;
  }
  // The last power readings go to the writer before it finishes.
  if (PowerSampler* power = g_power.load()) power->Stop(1000);
  // The exit path's forced flush must be the last delivery: a periodic flush still
  // running on the writer thread would otherwise race with shutdown.
  recorder->writer.StopCuptiFlushes(2000);
  // Detached after a capture range: everything was delivered then, and a CUPTI call now would
  // only attach CUPTI again.
  if (!CuptiDetached()) {
    // Ranges still being measured, the last PC samples.
    FinishHardwareProfilers();
    // Forced: CUPTI also hands over records of work that had not finished.
    FlushActivities(true);
  }
  DrainNcclEvents(*recorder, true);
  recorder->disabled.store(true);
  if (!recorder->writer.Finish(10000)) {
    LogOnce("the trace writer did not finish in 10 s (%s); the trace may lack its end", why);
  }
}

void OnExit() {
  try {
    FinishRecording("exit");
  } catch (...) {
  }
}

// Counted in the parent: the child writes no trace, so only the parent's can tell.
void OnForkParent() {
  CountStat(StatId::forked_children_ignored);
}

void OnForkChild() {
  // The child has no CUPTI worker and no writer thread; flushing CUPTI there hangs
  // (HPCToolkit #195). A child that execs gets injected afresh through the environment.
  if (Recorder* recorder = g_recorder.load()) recorder->disabled.store(true);
  // Its copies of the trace's descriptor would keep the writer's lock after the parent
  // ends: the trace would read as still being recorded for as long as the child lives.
  CloseTraceFilesInForkedChild();
}

// PyTorch loaded after CUDA started (rare: torch normally comes first) is found once new
// modules appear in launch stacks; never from an app thread (the probe takes the loader's
// lock).
void ProbeAutogradLinkAfterLoads(const Recorder& recorder) {
  static uint64_t refreshes_probed = 0;
  if (!recorder.config.stacks || !recorder.config.python_stacks || AutogradLinkReady()) return;
  const uint64_t refreshes = GetStat(StatId::module_refreshes);
  if (refreshes == refreshes_probed) return;
  refreshes_probed = refreshes;
  ProbeAutogradLink();
}

// A capture range (record --duration) ended: nothing will be recorded again, so once the
// work launched inside it has had time to finish, CUPTI is detached altogether; attached with
// everything off, it would keep costing a launch-bound program 3-6% (cupti/detach.h). Not
// with a hardware profiler, which has its own CUPTI sessions to end at exit.
constexpr uint64_t kDetachGraceNs = 500'000'000;  // kernels launched at the end finish first

void DetachAfterCaptureRange(Recorder& recorder, uint64_t since_end_ns) {
  if (CuptiDetached() || since_end_ns < kDetachGraceNs || !recorder.config.metric_set.empty() ||
      recorder.config.pc_sampling) {
    return;
  }
  // On the writer's thread: the finalize is only asked for here, the program's next CUDA
  // call makes it (detach.h).
  DetachCupti(recorder, /*wait_ms=*/0);
  CountStat(StatId::cupti_detached_after_range);
  LogVerbose("capture range over: CUPTI detached");
}

// The capture range (record --delay/--duration), monotonic ns; `end` UINT64_MAX: none.
struct CaptureRange {
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;
};

CaptureRange CaptureRangeOf(const Recorder& recorder) {
  CaptureRange range;
  range.begin = recorder.start_ns + recorder.config.delay_ms * 1000000ull;
  if (recorder.config.duration_ms != 0) {
    range.end = range.begin + recorder.config.duration_ms * 1000000ull;
  }
  return range;
}

// When OnPeriod must run besides its period: the capture range's start and end, and the
// detach after it, to the millisecond.
std::vector<uint64_t> CaptureRangeEdges(const Recorder& recorder) {
  const CaptureRange range = CaptureRangeOf(recorder);
  std::vector<uint64_t> edges;
  if (recorder.config.delay_ms != 0) edges.push_back(range.begin);
  if (range.end != UINT64_MAX) {
    edges.push_back(range.end);
    edges.push_back(range.end + kDetachGraceNs);
  }
  return edges;
}

// Capture range: switches recording on after the delay and off after the duration.
void OnPeriod(Recorder& recorder, uint64_t now_ns) {
  const auto [begin, end] = CaptureRangeOf(recorder);
  const bool inside = now_ns >= begin && now_ns < end;
  if (inside != recorder.capturing.load()) {
    // Links before kernels at the start, kernels before links at the end, so that every
    // kernel recorded has its launch link (on the H100, launch_bound's range had 71 of 126,115
    // kernels without one when the kinds came on first).
    if (inside) {
      recorder.capturing.store(true);
      SetApiCallbacks(true);
      EnableActivities(recorder, true);
    } else {
      EnableActivities(recorder, false);
      QuietApiCallbacks();  // not off by id: CUPTI is finalized after the range (callbacks.h)
      recorder.capturing.store(false);
    }
    LogVerbose("capture range %s", inside ? "started" : "ended");
  }
  if (end != UINT64_MAX && now_ns >= end) DetachAfterCaptureRange(recorder, now_ns - end);
  CollectHardwareData();
  DrainNcclEvents(recorder, false);
  PeriodicChecks(recorder, inside);
}

void Initialize() {
  if (const char* level = std::getenv("GPUPERF_LOG")) {
    if (std::strcmp(level, "quiet") == 0) SetLogLevel(LogLevel::kQuiet);
    if (std::strcmp(level, "verbose") == 0) SetLogLevel(LogLevel::kVerbose);
  }
  auto recorder = std::make_unique<Recorder>();
  std::string config_error;
  recorder->config = ReadConfigFromEnvironment(&config_error);
  if (!config_error.empty()) LogOnce("ignoring a bad setting: %s", config_error.c_str());
  recorder->pid = static_cast<uint32_t>(getpid());
  recorder->start_ns = MonotonicNs();
  Recorder& r = *recorder;

  if (!RegisterActivityCallbacks(r)) {
    LogOnce("CUPTI activity tracing is unavailable: nothing will be recorded");
    return;
  }
  ConfigureRecorderMemory(r.config);
  const std::string path = NewTracePath(r.config.output_dir, r.pid);
  std::string command;
  ProcessRecord process = DescribeProcess(r, &command);
  InitStacksFor(r.config);
  WriterHooks hooks;
  hooks.flush_cupti = [](bool forced) { FlushActivities(forced); };
  hooks.on_period = [&r](uint64_t now) { OnPeriod(r, now); };
  hooks.wake_times = CaptureRangeEdges(r);
  if (r.config.live_page) {
    r.live.Start({r.pid, process.parent_pid, r.start_ns, command, r.names.TextOf(process.hostname)},
                 r.names);
    hooks.on_records = [&r](const auto& batches, const auto& api_calls) {
      r.live.Fold(batches, api_calls);
    };
    hooks.on_stats = [&r](uint64_t now, bool closing) {
      if (closing) {
        r.live.Close(now, r.capturing.load());
      } else {
        r.live.Publish(now, r.capturing.load());
      }
    };
  }
  Status status = r.writer.Start(path, r.config, r.pid, r.names, process, std::move(hooks));
  if (!status.ok()) {
    LogOnce("cannot record: %s", status.message().c_str());
    return;
  }
  auto* power = new PowerSampler();  // lives as long as the process, like the recorder
  PublishRecorder(recorder.release(), power);
  r.writer.Enqueue(RankBatch(r));
  power->Start(r.config.power_hz, r.pid, r.writer);
  SetThreadExitHook([] {
    if (Recorder* recorder = GetRecorder()) recorder->writer.RequestWrite();
  });

  // Callbacks take the stacks and the API records (cheaper than CUPTI's API activity
  // kinds, so --no-stacks keeps them). Only with neither, or GPUPERF_API_SOURCE=cupti and
  // no stacks, is CUPTI's single subscriber slot left free for another tool.
  const bool api_records = (r.config.activities & (kActRuntime | kActDriver)) != 0;
  const bool hardware = !r.config.metric_set.empty() || r.config.pc_sampling;
  if (r.config.stacks || (r.config.api_from_callbacks && api_records) || hardware) {
    r.subscribed = EnableCallbacks(r);
  }
  // Without a subscriber no CU_INIT_FINISHED callback comes: ask now (CUPTI may refuse it
  // inside cuInit, and says why).
  if (r.config.hw_trace && !r.subscribed) UseHardwareKernelTimes();
  if (hardware) StartHardwareProfilers(r);
  if (r.config.delay_ms == 0) {
    EnableActivities(r, true);
    r.capturing.store(true);
  }
  SetActivityFlushPeriod(r.config.cupti_flush_period_ms);
  InstallProcessHooks();
  if (r.writer.flight() && r.config.flight_signal != 0) {
    // The handler only sets a bit and wakes the writer (async-signal-safe); the writer dumps.
    InstallFlightSignal(r.config.flight_signal, [] {
      Recorder* recorder = g_recorder;
      if (recorder != nullptr && !recorder->disabled.load() &&
          static_cast<uint32_t>(getpid()) == recorder->pid) {
        recorder->writer.RequestFlightDump(kFlightSignal);
      }
    });
  }
  // After the flight signal's handler, which the final flush then leaves in place.
  InstallSignalFlush();
  LogVerbose("%s %s (stacks: %s)",
             r.writer.flight() ? "flight recorder, dumps named after" : "recording to",
             path.c_str(), r.config.stacks ? StackUnwinderName() : "off");
}

}  // namespace

void PeriodicChecks(Recorder& r, bool capturing) {
  ProbeAutogradLinkAfterLoads(r);
  // Every linked call yields a record only when these kinds are all on (the default).
  constexpr uint32_t kLinkedKinds = kActKernel | kActMemcpy | kActMemset | kActMemory;
  if (capturing && r.subscribed && (r.config.activities & kLinkedKinds) == kLinkedKinds) {
    CheckActivityOwner();
  }
  // Without callbacks, only the preload library sees a takeover.
  if (PreloadSawBufferTakeover()) ReportActivityBuffersTaken();
}

Recorder* GetRecorder() {
  return g_recorder.load(std::memory_order_acquire);
}

void PublishRecorder(Recorder* r, PowerSampler* power) {
  g_power.store(power);
  g_recorder.store(r, std::memory_order_release);
}

void InstallProcessHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    atexit(OnExit);
    pthread_atfork(nullptr, OnForkParent, OnForkChild);
  });
}

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

}  // namespace gpuperf::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  try {
    std::call_once(gpuperf::inject::g_init_once, gpuperf::inject::Initialize);
  } catch (...) {
    gpuperf::inject::LogOnce("initialization failed; the program runs unprofiled");
  }
  return 1;
}

// NVTX ranges reach CUPTI when NVTX_INJECTION64_PATH names a library exporting this;
// `record` points it at us, and we hand NVTX to the libcupti we are linked against.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(void* get_table) {
  using Fn = int (*)(void*);
  static Fn forward = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2"));
  if (forward == nullptr || forward == reinterpret_cast<Fn>(&InitializeInjectionNvtx2)) {
    void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (cupti == nullptr) cupti = dlopen("libcupti.so.13", RTLD_NOW);
    forward = cupti ? reinterpret_cast<Fn>(dlsym(cupti, "InitializeInjectionNvtx2")) : nullptr;
  }
  if (forward == nullptr || forward == reinterpret_cast<Fn>(&InitializeInjectionNvtx2)) return 0;
  return forward(get_table);
}
