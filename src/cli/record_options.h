// Options of `gpuperf record` and the environment they become for the injection library.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

#include "cli/record_flight.h"
#include "gpuperf/status.h"

namespace gpuperf::cli {

struct RecordOptions {
  std::vector<std::string> command;
  std::string output_dir;
  bool force = false;
  std::string activities;  // empty = default
  bool no_stacks = false;
  bool no_python_stacks = false;
  bool full_native_stacks = false;
  bool hw_trace = false;  // kernel times from the Hardware Event System (Blackwell and newer)
  bool no_symbolize = false;
  bool quiet = false;
  bool verbose = false;
  uint32_t buffer_kb = 0;
  uint32_t max_memory_mb = 0;
  uint32_t flush_period_ms = 0;
  uint64_t delay_ms = 0;     // --delay
  uint64_t duration_ms = 0;  // --duration; 0: until the program ends
  uint32_t stack_depth = 0;
  int32_t power_hz = -1;        // -1: the injection library's default
  bool no_nccl_plugin = false;  // leave NCCL_PROFILER_PLUGIN unset (docs/multi-rank.md)
  std::string inject_lib;
  std::string save_buffers_dir;
  // CPU time beside GPU time (eBPF, docs/cpu-profiling.md)
  bool cpu = false;
  bool off_cpu = false;
  bool system = false;
  uint32_t cpu_frequency_hz = 99;
  // --flight and the options that go with it as given, then as checked (ResolveFlightOptions).
  uint64_t flight_ms = 0;  // 0: no flight recorder
  uint32_t flight_memory_mb = 0;
  std::string flight_signal;
  bool no_flight_on_error = false;
  uint32_t sample_launches = 0;  // --sample-launches N/s; 0: every launch's stack
  FlightSettings flight_settings;
  // Hardware profilers (docs/hardware-metrics.md): set by `gpuperf metrics`, and by
  // `record --pc-sampling`.
  std::string metric_set;     // empty: no range profiler
  std::string metric_kernel;  // regex: only these kernels (per-kernel mode)
  std::string metric_ranges;  // "kernel", "nvtx" or "window:MS"
  bool pc_sampling = false;
  uint32_t pc_period = 0;  // 2^N cycles; 0: CUPTI's default
};

// Runs the command under the injection library and finishes the recording (symbols, PC
// sample lines, the summary). Returns the command's exit status (or ours on our failure);
// `recorded_dir` receives the directory of the traces (empty when none was written).
int RunRecord(RecordOptions& options, std::string* recorded_dir = nullptr);

void AddRecordOptions(CLI::App& cmd, RecordOptions& options);

// The options of `record`, or of `attach` (docs/attach.md): those that make sense in a running
// process (no --delay, --hw-trace, --pc-sampling, NCCL plugin, ...; --duration is the window).
enum class OptionsFor { kRecord, kAttach };
void AddRecordingOptions(CLI::App& cmd, RecordOptions& options, OptionsFor command);

// Checks the --activities list; on error fills `error` with a message naming the valid ones.
bool ValidateActivities(const std::string& list, std::string* error);

// Checks --flight, --flight-* and --sample-launches and fills options.flight_settings.
Status ResolveFlightOptions(RecordOptions& options);

// The variables the child runs with.
std::vector<std::pair<std::string, std::string>> RecordEnvironment(const RecordOptions& options,
                                                                   const std::string& library,
                                                                   const std::string& dir);

// Resolves launch-stack PCs to names in every trace of `dir` (no-op when the symbolizer
// is not built in).
Status SymbolizeRecording(const std::string& dir, bool quiet);

}  // namespace gpuperf::cli
