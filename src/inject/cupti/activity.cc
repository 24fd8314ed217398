#include "inject/cupti/activity.h"
#include "inject/cupti/window_edge.h"

#include <cupti.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

#include "inject/cupti/callback_gate.h"
#include "inject/cupti/cupti_call.h"
#include "inject/cupti/translate.h"
#include "inject/power/power_sampler.h"
#include "inject/recorder.h"
#include "inject/recorder_memory.h"
#include "inject/thread_buffers.h"

namespace gpuperf::inject {
namespace {

std::atomic<uint32_t> g_saved_buffers{0};

// Never freed: CUPTI may complete a buffer while the process exits, and the Recorder whose
// names it interns into is never freed once published either.
Translator* g_translator = nullptr;
const Recorder* g_translator_recorder = nullptr;  // whose names g_translator interns into
std::mutex g_translate_mutex;                     // CUPTI may complete buffers on several threads

// CUDA 13 gives every launching thread its own activity buffer. A thread's first one is
// small, so that many short-lived threads do not each pin a full buffer until the next flush.
thread_local bool t_had_buffer = false;

// The smallest record a linked call (launch, copy, set, allocation) yields when the default
// activity kinds are on (a Memset4 is 88 bytes, a Kernel10 216).
constexpr uint64_t kMinRecordBytes = 64;

uint64_t CUPTIAPI MonotonicTimestamp() {
  return MonotonicNs();
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  Recorder* recorder = GetRecorder();
  if (recorder == nullptr) return;
  const uint64_t bytes =
      t_had_buffer ? recorder->config.buffer_bytes : recorder->config.first_buffer_bytes;
  // CUDA 13 asks on the thread whose buffer is full: note it, so that a thread whose calls
  // outrun its last buffer shows that CUPTI now asks someone else (CheckActivityOwner).
  if (ThreadBuffers* thread = CurrentThreadBuffersIfAny()) {
    thread->calls_at_buffer.store(thread->stats[kCallbacks].load(std::memory_order_relaxed),
                                  std::memory_order_relaxed);
    thread->buffer_room_calls.store(bytes / kMinRecordBytes, std::memory_order_relaxed);
  }
  // Past the hard cap: give CUPTI no buffer. It then drops records and counts them, and we
  // report that count; the app is never slowed or grown without bound.
  const bool granted = ReserveRecorderMemory(bytes);
  // Many buffers out: ask the writer to collect the completed ones now, not at its period.
  if (!granted || RecorderMemoryUnderPressure()) recorder->writer.RequestEarlyFlush();
  if (!granted) return;
  void* memory = nullptr;
  if (posix_memalign(&memory, 8, bytes) != 0) {
    ReleaseRecorderMemory(bytes);
    return;
  }
  t_had_buffer = true;
  *buffer = static_cast<uint8_t*>(memory);
  *size = bytes;
}

void WriteFile(const std::string& path, const void* data, size_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = ::write(fd, data, size);
  (void)ignored;
  ::close(fd);
}

// Testing aid: keep the raw buffer, and the strings its records point to (CUPTI's
// memory, gone with the process), so CI can replay it through the translator.
void SaveBuffer(const std::string& dir, uint8_t* buffer, size_t valid_size) {
  const uint32_t n = g_saved_buffers.fetch_add(1);
  const std::string base = dir + "/buffer-" + std::to_string(getpid()) + "-" + std::to_string(n);
  WriteFile(base + ".bin", buffer, valid_size);
  std::string names;
  auto add = [&names](const char* text) {
    if (text == nullptr) return;
    char pointer[32];
    std::snprintf(pointer, sizeof(pointer), "%p\t", static_cast<const void*>(text));
    names += pointer;
    names += text;
    names += '\n';
  };
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL:
        add(reinterpret_cast<CUpti_ActivityKernel10*>(record)->name);
        break;
      case CUPTI_ACTIVITY_KIND_MARKER:
        add(reinterpret_cast<CUpti_ActivityMarker2*>(record)->name);
        add(reinterpret_cast<CUpti_ActivityMarker2*>(record)->domain);
        break;
      case CUPTI_ACTIVITY_KIND_DEVICE:
        add(reinterpret_cast<CUpti_ActivityDevice5*>(record)->name);
        break;
      default:
        break;
    }
  }
  WriteFile(base + ".names", names.data(), names.size());
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t size,
                              size_t valid_size) {
  // Counted as running (callback_gate.h): it reads the buffer with CUPTI's calls, so CUPTI is
  // not finalized under it. It runs whether the gate is open or not: the buffer is ours to
  // free and its records to keep or count.
  const EnteredCallback running;
  if (!running.open()) {
    // CUPTI is being finalized (cupti/detach.h) and hands back what it held: no CUPTI call
    // may be made under its teardown, not even to read the buffer. Everything was flushed
    // before the finalize was asked for, so this is rare: one count a buffer left unread.
    if (valid_size > 0) CountStat(StatId::records_after_close);
    std::free(buffer);
    ReleaseRecorderMemory(size);
    return;
  }
  Recorder* recorder = GetRecorder();
  // In a forked child the writer thread does not exist: nothing can be written there.
  const bool forked_child = recorder != nullptr && static_cast<uint32_t>(getpid()) != recorder->pid;
  const bool writable = recorder != nullptr && !forked_child && recorder->writer.running();
  if (valid_size > 0 && !writable) {
    // Never drop silently: count what we could not keep. A forked child's records are
    // copies of the parent's buffers: the parent keeps them, so they are no loss.
    uint64_t records = 0;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) ++records;
    CountStat(forked_child ? StatId::forked_child_records : StatId::records_after_close, records);
  }
  if (valid_size > 0 && writable) {
    try {
      if (!recorder->config.save_buffers_dir.empty()) {
        SaveBuffer(recorder->config.save_buffers_dir, buffer, valid_size);
      }
      auto batch = std::make_unique<RecordBatch>();
      const uint64_t start = MonotonicNs();
      TranslateCounts counts;
      {
        std::lock_guard<std::mutex> lock(g_translate_mutex);
        counts = g_translator->TranslateBuffer(buffer, valid_size, *batch);
      }
      CountStat(StatId::translate_ns, MonotonicNs() - start);
      CountStat(StatId::activity_buffers);
      CountStat(StatId::activity_records, counts.records);
      if (counts.incomplete) CountStat(StatId::incomplete_records, counts.incomplete);
      if (counts.untranslated) CountStat(StatId::untranslated_records, counts.untranslated);
      if (const uint64_t dropped = DropCallsBeforeWindow(*batch)) {
        CountStat(StatId::calls_before_window, dropped);
      }
      // Without our callbacks (another profiler subscribed) this is where a GPU in use is
      // first seen.
      for (const ContextRecord& c : batch->contexts) NotePowerDevice(c.device_id);
      recorder->writer.Enqueue(std::move(batch));
    } catch (...) {
      LogOnce("could not process an activity buffer (out of memory?)");
    }
  }
  CountDroppedRecords(context, stream_id);
  std::free(buffer);
  ReleaseRecorderMemory(size);
}

}  // namespace

void CountDroppedRecords(void* context, uint32_t stream_id) {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(static_cast<CUcontext>(context), stream_id, &dropped) ==
          CUPTI_SUCCESS &&
      dropped > 0) {
    CountStat(StatId::cupti_dropped_records, dropped);
  }
}

void PrepareTranslator(Recorder& recorder) {
  if (g_translator_recorder == &recorder) return;
  std::lock_guard<std::mutex> lock(g_translate_mutex);
  g_translator = new Translator(recorder.pid, recorder.names);  // the last one's: never freed
  g_translator_recorder = &recorder;
}

bool RegisterActivityCallbacks(Recorder& recorder) {
  PrepareTranslator(recorder);
  GP_CUPTI_CALL(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  // One clock for everything: CUPTI's default on Linux is CLOCK_REALTIME.
  GP_CUPTI_CALL(cuptiActivityRegisterTimestampCallback(MonotonicTimestamp));
  return GP_CUPTI_CALL(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted)) ==
         CUPTI_SUCCESS;
}

void DumpExistingDevicesAndContexts() {
  GP_CUPTI_CALL(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE));
  GP_CUPTI_CALL(cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_CONTEXT));
}

void EnableActivities(Recorder& recorder, bool enable, bool kernels) {
  const uint32_t a = recorder.config.activities & (kernels ? ~0u : ~kActKernel);
  auto set = [enable](CUpti_ActivityKind kind) {
    CUptiResult result = enable ? cuptiActivityEnable(kind) : cuptiActivityDisable(kind);
    if (result != CUPTI_SUCCESS) {
      CountStat(StatId::cupti_call_failed);
      LogVerbose("activity kind %d: %s", static_cast<int>(kind), CuptiErrorText(result));
    }
  };
  // Device and context records describe the hardware: always on.
  set(CUPTI_ACTIVITY_KIND_DEVICE);
  set(CUPTI_ACTIVITY_KIND_CONTEXT);
  // CONCURRENT_KERNEL, never KERNEL: KERNEL serializes kernel execution.
  if (a & kActKernel) set(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (a & kActMemcpy) {
    set(CUPTI_ACTIVITY_KIND_MEMCPY);
    set(CUPTI_ACTIVITY_KIND_MEMCPY2);
  }
  if (a & kActMemset) set(CUPTI_ACTIVITY_KIND_MEMSET);
  if (!recorder.ApiFromCallbacks()) {
    if (a & kActRuntime) set(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (a & kActDriver) set(CUPTI_ACTIVITY_KIND_DRIVER);
  }
  // Host waits come from our callbacks where API records do (host_waits.h says why).
  if ((a & kActSync) && !recorder.ApiFromCallbacks()) set(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (a & kActMemory) set(CUPTI_ACTIVITY_KIND_MEMORY2);
  if (a & kActNvtx) set(CUPTI_ACTIVITY_KIND_MARKER);
  if (a & kActOverhead) set(CUPTI_ACTIVITY_KIND_OVERHEAD);
  if (a & kActGraph) set(CUPTI_ACTIVITY_KIND_GRAPH_TRACE);
  set(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
}

void UseHardwareKernelTimes() {
  static std::atomic<bool> asked{false};
  if (asked.exchange(true)) return;
  const CUptiResult result = cuptiActivityEnableHWTrace(1);
  if (result == CUPTI_SUCCESS) {
    CountStat(StatId::kernel_times_from_hardware);
    LogVerbose("kernel times from the GPU's Hardware Event System");
    return;
  }
  CountStat(StatId::hw_trace_unavailable);
  // NOT_INITIALIZED: asked inside cuInit, where gpuperf initializes; only a recording without
  // callbacks gets there (injection.cc).
  LogOnce(
      "--hw-trace: no hardware kernel times here (%s; %s): CUPTI instruments the launches as "
      "usual",
      CuptiErrorText(result),
      result == CUPTI_ERROR_NOT_INITIALIZED
          ? "asked inside cuInit: --no-stacks with GPUPERF_API_SOURCE=cupti leaves out the "
            "callback it needs"
          : "Blackwell or newer needed");
}

void CheckActivityOwner() {
  // Writer thread only. Every linked call (launch, copy, set, allocation) yields at least one
  // record of at least this size when the default activity kinds are on.
  if (AnyThreadOutranItsBuffer()) ReportActivityBuffersTaken();
}

void ReportActivityBuffersTaken() {
  // Writer thread only.
  static bool reported = false;
  if (reported) return;
  reported = true;
  CountStat(StatId::activity_buffers_taken);
  LogOnce(
      "another CUPTI client (torch.profiler? Kineto?) replaced gpuperf's activity buffers: "
      "GPU activity from now on is missing from this trace; use one profiler at a time");
}

Translator& ActivityTranslator() {
  return *g_translator;
}

void SetActivityFlushPeriod(uint32_t period_ms) {
  // 0 leaves CUPTI's heuristics in place; any other value replaces them.
  if (period_ms != 0) GP_CUPTI_CALL(cuptiActivityFlushPeriod(period_ms));
}

void FlushActivities(bool forced) {
  cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  // Records CUPTI dropped for want of a buffer are not followed by a completed buffer when
  // we refuse every buffer (at the memory cap): read the count here too.
  CountDroppedRecords(nullptr, 0);
}

}  // namespace gpuperf::inject
