#include "cli/record_options.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "base/activities.h"
#include "base/record_defaults.h"
#include "cli/command.h"
#include "cli/quantity_options.h"
#include "cli/record_preload.h"
#include "symbolize/symbolizer.h"

namespace gpuperf::cli {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * 1024;

}  // namespace

void AddRecordOptions(CLI::App& cmd, RecordOptions& o) {
  AddRecordingOptions(cmd, o, OptionsFor::kRecord);
}

void AddRecordingOptions(CLI::App& cmd, RecordOptions& o, OptionsFor command) {
  const bool record = command == OptionsFor::kRecord;
  cmd.add_option("-o,--output", o.output_dir,
                 "Directory for the trace files, one <program>.<pid>.gpt per process\n"
                 "(default: gpuperf-<program>, numbered if taken)");
  cmd.add_flag("-f,--force", o.force, "Replace the trace files of an earlier recording in -o");
  cmd.add_option("-a,--activities", o.activities,
                 "What to record, comma-separated: kernel,memcpy,memset,runtime,driver,\n"
                 "sync,memory,nvtx,overhead,graph, or all (default: all but graph;\n"
                 "'graph' records one span per graph launch instead of its kernels)");
  cmd.add_flag("--no-stacks", o.no_stacks, "Do not take CPU stacks at launches (lowest overhead)");
  cmd.add_flag("--no-python-stacks", o.no_python_stacks,
               "Leave the launching thread's Python frames out of launch stacks");
  cmd.add_flag("--full-native-stacks", o.full_native_stacks,
               "Where a launch has Python frames, keep every native frame too: by default\n"
               "the native frames end at the innermost Python call (the interpreter's\n"
               "frames further out, which outputs replace by Python frames, cost time\n"
               "to unwind; C code between two Python frames is left out with them)");
  if (record) {
    cmd.add_flag("--no-nccl-plugin", o.no_nccl_plugin,
                 "Do not load gpuperf as NCCL's profiler plugin (also GPUPERF_NCCL_PLUGIN=0); "
                 "NCCL\ncollectives are then known by their kernels only (docs/multi-rank.md)");
  }
  cmd.add_flag("--no-symbolize", o.no_symbolize,
               "Skip resolving stack addresses to function names after the run");
  if (record) {
    cmd.add_flag("--hw-trace", o.hw_trace,
                 "Take kernel times from the GPU's Hardware Event System instead of CUPTI's\n"
                 "instrumentation of each launch: less cost per launch (Blackwell and newer;\n"
                 "elsewhere one notice, and kernels are timed the usual way)");
  }
  TakesCount(cmd.add_option("--stack-depth", o.stack_depth,
                            "Deepest stack kept, in frames (1 to " +
                                std::to_string(kMaxStackDepth) + "; default 64)"),
             {1, kMaxStackDepth});
  const SizeSpec buffer{kKiB, kMinBufferKiB * kKiB, uint64_t{kMaxBufferKiB} * kKiB};
  TakesSize(
      cmd.add_option("--buffer-size", o.buffer_kb,
                     "CUPTI activity buffer size: KiB, or with a unit (default " +
                         std::to_string(kDefaultBufferKiB) + " KiB;\n" +
                         SizeText(buffer.min_bytes) + " to " + SizeText(buffer.max_bytes) + ")"),
      kKiB, buffer);
  const SizeSpec memory{kMiB, kMinMaxMemoryMiB * kMiB, uint64_t{kMaxMaxMemoryMiB} * kMiB};
  TakesSize(cmd.add_option("--max-memory", o.max_memory_mb,
                           "Most memory the recorder may hold in the target: MiB, or with a\n"
                           "unit (default " +
                               std::to_string(kMaxMemoryCapMiB) + " MiB, or 1/" +
                               std::to_string(kMaxMemoryPhysicalFraction) + " of RAM if less; " +
                               SizeText(memory.min_bytes) + " to " + SizeText(memory.max_bytes) +
                               "). It\nuses " + std::to_string(kSoftMemoryMiB) +
                               " MiB and grows past that only under load, saying so\nonce; past "
                               "the cap, records are dropped and counted, never silently"),
            kMiB, memory);
  const DurationSpec flush{kNsPerMs, kMinFlushPeriodMs * kNsPerMs, kMaxFlushPeriodMs * kNsPerMs};
  TakesDuration(
      cmd.add_option("--flush-period", o.flush_period_ms,
                     "How often the trace file is brought up to date: ms, or with a\n"
                     "unit (default " +
                         std::to_string(kDefaultFlushPeriodMs) + "ms; " +
                         DurationText(flush.min_ns) + " to " + DurationText(flush.max_ns) +
                         "); a process that is killed\nloses at most this much"),
      kNsPerMs, flush);
  const DurationSpec capture{kNsPerSecond, 0, kMaxDurationNs};
  if (record) {
    TakesDuration(cmd.add_option("--delay", o.delay_ms,
                                 "Start recording this long after CUDA starts: seconds, or with a\n"
                                 "unit (ms, s, m, h; e.g. 2.5, 500ms, 1.5s, 2m)"),
                  kNsPerMs, capture);
  }
  TakesDuration(cmd.add_option("--duration", o.duration_ms,
                               record ? "Stop recording this long after it started (as --delay)"
                                      : "Record for this long, then detach: seconds, or with a "
                                        "unit\n(ms, s, m, h; default: until Ctrl-C)"),
                kNsPerMs, capture);
  TakesDuration(cmd.add_option("--flight", o.flight_ms,
                               record ? "Flight recorder: keep only the last WINDOW (e.g. 60s, 5m; "
                                        "100ms to\n24h) in memory; write it as a trace on SIGUSR2, "
                                        "gpuperf dump-now PID,\na CUDA error and at exit "
                                        "(PROG.PID.flight-N.gpt;\ndocs/flight-recorder.md)"
                                      : "Flight recorder: keep only the last WINDOW (e.g. 60s, 5m; "
                                        "100ms to\n24h) of the attach window in memory; write it "
                                        "as a trace when a CUDA call\nfails and when the window "
                                        "ends (PROG.PID.flight-N.gpt; docs/flight-recorder.md)"),
                kNsPerMs,
                {kNsPerSecond, kMinFlightWindowMs * kNsPerMs, kMaxFlightWindowMs * kNsPerMs});
  TakesSize(cmd.add_option("--flight-memory", o.flight_memory_mb,
                           "Most memory the flight recorder's window may take: MiB, or with a\n"
                           "unit (default " +
                               std::to_string(kFlightMemoryMiB) +
                               " MiB); past it the oldest records go first, counted"),
            kMiB, {kMiB, kMiB, uint64_t{kMaxFlightMemoryMiB} * kMiB});
  if (record) {
    cmd.add_option("--flight-signal", o.flight_signal,
                   "Signal that asks for a dump (default USR2; or USR1, RTMIN+2, none);\n"
                   "a handler the program installed first still gets it");
  }
  cmd.add_flag("--no-flight-on-error", o.no_flight_on_error,
               "Do not dump when a CUDA call returns an error");
  TakesCount(cmd.add_option("--sample-launches", o.sample_launches,
                            "Take at most N launch stacks per second per thread (N or N/s); "
                            "every\nkernel is still recorded, the others under [launch not "
                            "sampled]"),
             {1, kMaxSampleLaunchesPerSecond, "/s"});
  TakesCount(cmd.add_option("--power-hz", o.power_hz,
                            "GPU power readings per second through NVML, for energy estimates\n"
                            "(0 to 1000; default 20; 0: none; docs/energy.md)"),
             {0, kMaxPowerHz});
  cmd.add_flag("-q,--quiet", o.quiet, "Print nothing but errors");
  cmd.add_flag("-v,--verbose", o.verbose, "Let the injection library explain what it does");
  cmd.add_option("--inject-lib", o.inject_lib,
                 "Path of libgpuperf_inject.so (default: next to the gpuperf binary)");
  if (record) {
    cmd.add_option("--save-buffers", o.save_buffers_dir,
                   "Also save raw CUPTI buffers in this directory (for gpuperf's own tests)");
  }
  cmd.add_flag("--cpu", o.cpu,
               "Also sample where the CPU runs (user and kernel stacks, eBPF; needs root or\n"
               "CAP_BPF+CAP_PERFMON), for `flamegraph --weight cpu|all` and the report's CPU part");
  TakesCount(cmd.add_option("--freq", o.cpu_frequency_hz,
                            "--cpu samples per second of CPU time (1 to 10000; default 99)"),
             {1, 10000});
  cmd.add_flag("--off-cpu", o.off_cpu,
               "Also time where threads block (sleeps, locks, I/O, waits for the GPU), with\n"
               "their stacks (eBPF, as --cpu)");
  if (!record) return;
  cmd.add_flag("--system", o.system,
               "--cpu/--off-cpu: every process on the machine, not only the command's (root);\n"
               "without a command, for --duration seconds");
  cmd.add_flag("--pc-sampling", o.pc_sampling,
               "Sample the GPU's program counters with their stall reasons; `report`, `source` "
               "and `flamegraph --pc-frames` then show the hot source lines of each kernel "
               "(kernels built with nvcc -lineinfo)");
  TakesCount(cmd.add_option("--pc-period", o.pc_period,
                            "PC sampling period: one sample per SM every 2^N cycles (5 to 31; "
                            "default: CUPTI's choice)"),
             {kMinPcPeriod, kMaxPcPeriod});
  cmd.add_option("command", o.command, "The command to record, after --")->expected(-1);
}

bool ValidateActivities(const std::string& list, std::string* error) {
  uint32_t bits = 0;
  std::string bad;
  if (ParseActivities(list, &bits, &bad)) return true;
  *error = "unknown activity '" + bad +
           "' (choose from kernel, memcpy, memset, runtime, driver, sync, memory, nvtx, "
           "overhead, graph, all)";
  return false;
}

Status ResolveFlightOptions(RecordOptions& o) {
  FlightSettings& f = o.flight_settings;
  f.window_ms = o.flight_ms;
  if (!f.window_ms && (o.flight_memory_mb || !o.flight_signal.empty() || o.no_flight_on_error)) {
    return Error(StatusCode::kInvalidArgument,
                 "--flight-memory, --flight-signal and --no-flight-on-error need --flight WINDOW");
  }
  f.memory_mb = o.flight_memory_mb;
  f.signal = kFlightDefaultSignal;
  if (!o.flight_signal.empty()) {
    GP_ASSIGN_OR_RETURN(f.signal, ParseFlightSignal(o.flight_signal));
  }
  f.on_error = !o.no_flight_on_error;
  if (f.window_ms && o.pc_sampling) {
    return Error(StatusCode::kInvalidArgument,
                 "--pc-sampling does not go with --flight: PC samples are totals of the whole "
                 "run, not records of a window (record them without --flight)");
  }
  if (o.sample_launches != 0 && o.no_stacks) {
    return Error(StatusCode::kInvalidArgument,
                 "--sample-launches samples launch stacks, and --no-stacks takes none");
  }
  f.sample_launches_per_s = o.sample_launches;
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> RecordEnvironment(const RecordOptions& o,
                                                                   const std::string& library,
                                                                   const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> env;
  env.emplace_back("CUDA_INJECTION64_PATH", library);
  // Lets gpuperf say when a profiler inside the program is refused CUPTI (src/preload).
  if (auto preload = PreloadForChild(library)) env.emplace_back("LD_PRELOAD", *preload);
  uint32_t activities = kDefaultActivities;
  std::string ignored;
  if (!o.activities.empty()) ParseActivities(o.activities, &activities, &ignored);
  const bool nvtx = (activities & kActNvtx) != 0;
  // NVTX ranges reach CUPTI only through NVTX's own injection hook.
  if (nvtx) env.emplace_back("NVTX_INJECTION64_PATH", library);
  env.emplace_back("GPUPERF_OUTPUT_DIR", dir);
  if (!o.activities.empty()) env.emplace_back("GPUPERF_ACTIVITIES", o.activities);
  env.emplace_back("GPUPERF_STACKS", o.no_stacks ? "0" : "1");
  if (o.no_python_stacks) env.emplace_back("GPUPERF_PYTHON", "off");
  if (o.full_native_stacks) env.emplace_back("GPUPERF_NATIVE_STACKS", "full");
  if (o.hw_trace) env.emplace_back("GPUPERF_HW_TRACE", "on");
  if (o.stack_depth) env.emplace_back("GPUPERF_STACK_DEPTH", std::to_string(o.stack_depth));
  if (o.buffer_kb) env.emplace_back("GPUPERF_BUFFER_KB", std::to_string(o.buffer_kb));
  if (o.max_memory_mb) env.emplace_back("GPUPERF_MAX_MEMORY_MB", std::to_string(o.max_memory_mb));
  if (o.flush_period_ms)
    env.emplace_back("GPUPERF_FLUSH_PERIOD_MS", std::to_string(o.flush_period_ms));
  if (o.delay_ms > 0) env.emplace_back("GPUPERF_DELAY_MS", std::to_string(o.delay_ms));
  if (o.duration_ms > 0) env.emplace_back("GPUPERF_DURATION_MS", std::to_string(o.duration_ms));
  if (o.power_hz >= 0) env.emplace_back("GPUPERF_POWER_HZ", std::to_string(o.power_hz));
  if (o.quiet) env.emplace_back("GPUPERF_LOG", "quiet");
  if (o.verbose) env.emplace_back("GPUPERF_LOG", "verbose");
  if (!o.save_buffers_dir.empty()) env.emplace_back("GPUPERF_SAVE_BUFFERS", o.save_buffers_dir);
  const FlightSettings& f = o.flight_settings;
  if (f.window_ms) {
    env.emplace_back("GPUPERF_FLIGHT_MS", std::to_string(f.window_ms));
    if (f.memory_mb) env.emplace_back("GPUPERF_FLIGHT_MEMORY_MB", std::to_string(f.memory_mb));
    env.emplace_back("GPUPERF_FLIGHT_SIGNAL", std::to_string(f.signal < 0 ? 0 : f.signal));
    if (!f.on_error) env.emplace_back("GPUPERF_FLIGHT_ON_ERROR", "off");
  }
  if (f.sample_launches_per_s) {
    env.emplace_back("GPUPERF_SAMPLE_LAUNCHES", std::to_string(f.sample_launches_per_s));
  }
  if (!o.metric_set.empty()) {
    env.emplace_back("GPUPERF_METRICS", o.metric_set);
    env.emplace_back("GPUPERF_METRICS_KERNEL", o.metric_kernel);
    env.emplace_back("GPUPERF_METRICS_RANGES",
                     o.metric_ranges.empty() ? "kernel" : o.metric_ranges);
    // NVTX ranges reach CUPTI's callbacks only through NVTX's injection hook.
    if (o.metric_ranges == "nvtx" && !nvtx) env.emplace_back("NVTX_INJECTION64_PATH", library);
  }
  // The injection library is also NCCL's profiler plugin: NCCL dlopens the same path and gets
  // the copy already loaded. A plugin the user chose (or "none") is left alone.
  const char* nccl_off = std::getenv("GPUPERF_NCCL_PLUGIN");
  if (!o.no_nccl_plugin && std::getenv("NCCL_PROFILER_PLUGIN") == nullptr &&
      !(nccl_off != nullptr && std::string_view(nccl_off) == "0")) {
    env.emplace_back("NCCL_PROFILER_PLUGIN", library);
  }
  if (o.pc_sampling) {
    env.emplace_back("GPUPERF_PC_SAMPLING", "1");
    if (o.pc_period) env.emplace_back("GPUPERF_PC_PERIOD", std::to_string(o.pc_period));
  }
  return env;
}

Status SymbolizeRecording(const std::string& dir, bool quiet) {
  SymbolizeOptions options;
  SymbolizeSummary summary;
  GP_RETURN_IF_ERROR(SymbolizeTraceFile(dir, options, &summary));
  if (!quiet) {
    for (const std::string& warning : summary.warnings) {
      PrintWarning(warning);
    }
  }
  return Status::Ok();
}

}  // namespace gpuperf::cli
