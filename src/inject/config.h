// The injection library's settings, read once from the environment that
// `gpuperf record` prepares (documented in docs/recording.md), or from the settings
// `gpuperf attach` hands the library in a running process (docs/attach.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "base/activities.h"
#include "base/record_defaults.h"
#include "inject/stack/unwind_mode.h"

namespace gpuperf::inject {

// What `gpuperf metrics` measures one range of: each kernel (kernel replay, serialized), or
// each NVTX range, or each time window (one pass, kernels stay concurrent).
enum class MetricRanges { kKernels, kNvtx, kWindows };

struct Config {
  std::string output_dir = ".";
  uint32_t activities = kDefaultActivities;
  bool stacks = true;
  uint32_t max_stack_depth = 64;
  // API records from gpuperf's own callbacks (one callback pair per call, which stacks
  // need anyway) rather than CUPTI's RUNTIME/DRIVER activity kinds, which add their own
  // cost per call (docs/performance.md). GPUPERF_API_SOURCE=cupti selects CUPTI's.
  bool api_from_callbacks = true;
  // Which unwinders launch stacks try (stack_capture.cc): GPUPERF_UNWIND=auto (checked
  // frame pointers, .eh_frame tables, libunwind), table, fp or libunwind.
  UnwindMode unwind = UnwindMode::kAuto;
  // GPUPERF_UNWIND_VERIFY=1: libunwind checks every stack another unwinder took.
  bool unwind_verify = false;
  // Launch stacks carry the launching thread's Python frames where a CPython interpreter
  // runs (docs/recording.md "Python frames"). GPUPERF_PYTHON=off leaves them out.
  bool python_stacks = true;
  // Launch stacks with Python frames keep the native frames up to the innermost eval-loop
  // frame only (stack_capture.cc). GPUPERF_NATIVE_STACKS=full keeps them all.
  bool cut_native_at_python = true;
  // Launch stacks repeated from the same registers and stack words are reused from a
  // per-thread memo (stack/stack_memo.h). GPUPERF_STACK_MEMO=off unwinds every one.
  bool stack_memo = true;
  // Kernel start and end times from the GPU's Hardware Event System instead of CUPTI's
  // instrumentation of each launch, which is most of what CUPTI's kernel records cost a
  // launch-bound program (docs/performance.md). Blackwell and newer only, and NVIDIA calls it
  // opt-in: GPUPERF_HW_TRACE=on (record --hw-trace). Elsewhere one notice, and the usual way.
  bool hw_trace = false;
  // A live page for gpuperf top and serve (docs/live.md). GPUPERF_LIVE=off leaves it out;
  // GPUPERF_LIVE_DIR moves it.
  bool live_page = true;
  // CUDA 13 keeps one buffer per launching thread, so buffers are kept small, and a
  // thread's first one smaller still (docs/recording.md, "Memory").
  uint64_t buffer_bytes = uint64_t{kDefaultBufferKiB} << 10;  // one CUPTI activity buffer
  uint64_t first_buffer_bytes = uint64_t{kFirstBufferKiB} << 10;
  // CUPTI buffers + batches queued for the writer: the soft budget grows under load up to
  // the hard cap (GPUPERF_MAX_MEMORY_MB, else DefaultMemoryCap()).
  uint64_t soft_memory_bytes = uint64_t{kSoftMemoryMiB} << 20;
  uint64_t max_memory_bytes = uint64_t{kMaxMemoryCapMiB} << 20;
  uint32_t flush_period_ms = kDefaultFlushPeriodMs;
  // CUPTI's worker hands back full buffers this often (0: CUPTI's own heuristics).
  uint32_t cupti_flush_period_ms = kDefaultCuptiFlushPeriodMs;
  // GPU power readings per second (NVML; docs/energy.md). GPUPERF_POWER_HZ=0: none.
  uint32_t power_hz = 20;
  uint64_t delay_ms = 0;         // capture range: start recording after this long
  uint64_t duration_ms = 0;      // ... and stop after this long (0 = until exit)
  std::string save_buffers_dir;  // raw CUPTI buffers for replay fixtures (testing)
  // Flight recorder (docs/flight-recorder.md): the last flight_window_ms of records stay in
  // memory (at most flight_memory_bytes) and a trace is written only on a trigger; 0 = off.
  uint64_t flight_window_ms = 0;
  uint64_t flight_memory_bytes = uint64_t{kFlightMemoryMiB} << 20;
  int flight_signal = kFlightDefaultSignal;  // 0: no signal trigger
  bool flight_on_error = true;               // dump when a CUDA call returns an error
  // --sample-launches: at most this many launch stacks per second per thread (0: all).
  uint32_t sample_launches_per_s = 0;

  // Hardware profilers (docs/hardware-metrics.md). `gpuperf metrics` names a metric set;
  // `gpuperf record --pc-sampling` turns PC sampling on. One of the two per process: CUPTI
  // refuses PC sampling once its profiler API is initialized.
  std::string metric_set;           // GPUPERF_METRICS=basic|memory|compute|tensor; empty: off
  std::string metric_kernel_regex;  // GPUPERF_METRICS_KERNEL: per-kernel mode, matching kernels
  MetricRanges metric_ranges = MetricRanges::kKernels;  // GPUPERF_METRICS_RANGES
  uint32_t metric_window_ms = 0;                        // ... =window:MS
  bool pc_sampling = false;                             // GPUPERF_PC_SAMPLING=1
  uint32_t pc_sampling_period = 0;  // GPUPERF_PC_PERIOD: 2^N cycles, 5..31; 0: CUPTI's default
  uint64_t cubin_cap_bytes = uint64_t{4} << 30;  // GPUPERF_CUBIN_CAP_MB: cubins saved, at most
};

// A setting's text by its variable name (GPUPERF_STACKS), or null when unset.
using ConfigLookup = std::function<const char*(const char* name)>;

// Parses GPUPERF_* settings from `get`. `error` receives a description of the first bad
// value (the setting keeps its default).
Config ReadConfig(const ConfigLookup& get, std::string* error);
// The same from the environment that `gpuperf record` prepares.
Config ReadConfigFromEnvironment(std::string* error);

// The hard memory cap when none is given: kMaxMemoryCapMiB, or 1/kMaxMemoryPhysicalFraction of
// `physical_bytes` on a smaller machine, never below the soft budget.
uint64_t DefaultMemoryCap(uint64_t physical_bytes);

}  // namespace gpuperf::inject
