// The numbers of `gpuperf report`: what a trace says about kernels, CUDA API calls,
// copies, synchronization, memory, GPU utilization, NVTX ranges, the profiler's own
// cost and what the recording lost. Built by streaming the trace once (BuildReport), so
// traces of any size fit; each section is built by its own file (section_*.cc, see
// report_builder.h); the renderers (src/export/report_*.cc) only format it.
//
// Times in the model are nanoseconds; "at" times are relative to the trace origin (the
// earliest timestamp of the trace), so reports of one run are comparable.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analyze/energy/energy_model.h"
#include "analyze/hardware/hardware_model.h"
#include "analyze/hardware/occupancy.h"
#include "analyze/ranks/rank_partial.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/ranks/ranks_model.h"
#include "analyze/report/insight.h"
#include "gpuperf/records.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

// What to include. Filters restrict GPU activity and API calls; memory, overhead and
// data-loss sections are per process and follow only the process filter.
struct ReportOptions {
  std::optional<uint32_t> pid;
  std::optional<uint32_t> device;
  std::optional<uint32_t> stream;
  std::string kernel_regex;  // ECMAScript, searched in the mangled and demangled name
  std::string api_regex;
  // [begin, end) relative to the trace origin. Needs a first pass over the trace.
  std::optional<uint64_t> begin_ns;
  std::optional<uint64_t> end_ns;
  // Only GPU work launched, and API calls made, inside NVTX ranges whose name matches.
  // Needs a first pass over the trace.
  std::string nvtx_regex;
  uint64_t gap_threshold_ns = 1'000'000;  // idle gaps at least this long are listed
  uint32_t max_gaps = 50;                 // longest gaps kept per device
  uint32_t max_leaks = 50;                // largest leaks kept
  uint32_t stack_frames = 5;              // frames shown per stack (innermost first)
  // Run the insight rules (analyze/insights/rules.h): findings ranked by time at stake.
  bool insights = false;
  // Keep the interpreter's own frames in stacks with Python frames (symbol_table.h).
  bool python_internals = false;
  // The report is one part of a job whose ranks the caller puts together from every part's
  // ReportModel::rank_partials: the ranks section keeps only those.
  bool part_of_job = false;
  // Only these sections are built (the builder's names: processes, kernels, api, copies,
  // sync, memory, utilization, nvtx, overhead, cpu, loss, hardware, ranks, energy,
  // insights); empty: all. A report of some parts costs only their time and memory: the
  // ranks section alone keeps no API call.
  std::vector<std::string> only_sections;
  // With `pid`: of a directory, only the files of that process are read (ReadOptions::
  // only_process): a run's rank reported without reading the other ranks' files.
  bool read_only_files_of_pid = false;
  // Threads of the reading (ReadOptions::threads; 0: every core). One when several reports
  // are built at once, each on a core of its own.
  unsigned read_threads = 0;
};

struct DurationStats {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  uint64_t median_ns = 0;  // kernels only (others leave 0)
  uint64_t avg_ns() const { return count ? total_ns / count : 0; }
};

struct KernelConfig {
  uint32_t grid[3] = {0, 0, 0};
  uint32_t block[3] = {0, 0, 0};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint64_t calls = 0;
  Occupancy occupancy;  // from the limits of the device that first ran it
};

struct KernelRow {
  std::string name;          // as recorded (mangled)
  std::string display_name;  // demangled and shortened
  std::string demangled;     // demangled in full
  DurationStats time;
  double gpu_time_fraction = 0;       // of all kernel time in the report
  std::vector<KernelConfig> configs;  // most calls first
};

struct ApiError {
  int32_t code = 0;
  std::string name;
  uint64_t count = 0;
};

struct ApiRow {
  std::string name;
  ApiDomain domain = ApiDomain::kUnknown;
  DurationStats time;
  uint64_t failures = 0;         // calls that returned an error (not "not ready")
  std::vector<ApiError> errors;  // every non-success code, most frequent first
};

struct MemcpyRow {
  MemcpyKind kind = MemcpyKind::kUnknown;
  DurationStats time;
  uint64_t bytes = 0;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
};

struct MemsetRow {
  MemoryKind memory_kind = MemoryKind::kUnknown;
  DurationStats time;
  uint64_t bytes = 0;
};

struct SyncRow {
  uint32_t pid = 0;
  uint32_t tid = 0;
  SyncKind kind = SyncKind::kUnknown;
  std::optional<uint32_t> stream;  // absent when the wait is not on a stream
  DurationStats time;
  std::vector<std::string> stack;  // where the CPU waited, innermost first, when known
};

struct MemoryDeviceRow {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t bytes_allocated = 0;
  uint64_t bytes_freed = 0;
  uint64_t peak_bytes = 0;
  uint64_t peak_at_ns = 0;
  uint64_t live_bytes_at_exit = 0;
  uint64_t live_allocations_at_exit = 0;
  uint64_t unmatched_frees = 0;  // frees of an address we never saw allocated
};

struct LeakRow {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  uint64_t at_ns = 0;
  std::string api;                 // the allocating call, when its stack was recorded
  std::vector<std::string> stack;  // innermost first
};

struct CpuActivity {
  uint32_t tid = 0;
  std::string api;  // empty: no CUDA API call on this thread during the gap
  uint64_t overlap_ns = 0;
};

struct IdleGap {
  uint64_t at_ns = 0;
  uint64_t duration_ns = 0;
  std::vector<CpuActivity> cpu;  // longest first; empty: CPU-side work only
};

struct UtilizationRow {
  uint32_t pid = 0;
  uint32_t device = 0;
  uint64_t span_ns = 0;  // the process's active span (first to last CUDA activity)
  uint64_t busy_ns = 0;  // union of kernel, memcpy and memset intervals
  uint64_t kernel_ns = 0;
  uint64_t gaps = 0;  // idle gaps >= the threshold
  uint64_t gap_ns = 0;
  std::vector<IdleGap> longest_gaps;
};

struct NvtxRow {
  std::string name;
  std::string domain;
  DurationStats time;
  uint64_t kernels = 0;       // kernels launched inside the range
  uint64_t gpu_time_ns = 0;   // their total GPU time
  uint64_t unterminated = 0;  // ranges that never ended (not in time)
};

struct OverheadRow {
  OverheadKind kind = OverheadKind::kUnknown;
  DurationStats time;
};

struct OverheadSummary {
  std::vector<OverheadRow> cupti;  // CUPTI's own overhead records, by kind
  uint64_t cupti_ns = 0;
  uint64_t callbacks = 0;
  uint64_t callback_ns = 0;  // gpuperf's API callbacks, on the application's threads
  uint64_t unwind_ns = 0;    // part of callback_ns
  uint64_t unique_stacks = 0;
  uint64_t fp_stacks_verified = 0;       // distinct frame-pointer stacks libunwind confirmed
  uint64_t fp_stacks_rejected = 0;       // ... and refused (those launches unwound otherwise)
  uint64_t stacks_unwound = 0;           // launch stacks taken
  uint64_t table_stacks = 0;             // ... of which from .eh_frame tables
  uint64_t table_fallback_no_table = 0;  // table walks that fell back: no table (yet) for a frame
  uint64_t table_fallback_rule = 0;      // ... a rule the tables do not hold
  uint64_t unwind_verified = 0;          // stacks checked by libunwind (verify mode)
  uint64_t translate_ns = 0;             // background threads: CUPTI buffers to records
  uint64_t compress_ns = 0;              // background threads: records to compressed chunks
  uint64_t memory_peak_bytes = 0;        // the largest process's recorder peak (0: not recorded)
  uint64_t memory_budget_grown = 0;      // times budgets doubled past the soft budget
  uint64_t python_codes = 0;             // Python code objects on launch stacks (0: no Python)
  uint64_t python_no_thread_state = 0;   // launches from threads without Python frames
  uint64_t wall_ns = 0;                  // sum of the processes' recorded wall time
  uint64_t in_app_ns() const { return cupti_ns + callback_ns; }
};

// CPU time (`record --cpu/--off-cpu`, analyze/join/cpu_time.h): where threads ran and where
// they blocked, with what waited for the GPU.
struct CpuFunctionRow {
  std::string function;     // as flame graphs show it
  uint64_t self_ns = 0;     // on-CPU samples with this function innermost
  uint64_t on_cpu_ns = 0;   // on-CPU samples with it anywhere on the stack
  uint64_t off_cpu_ns = 0;  // blocked time with it anywhere on the stack
};

struct CpuThreadRow {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string name;
  uint64_t on_cpu_ns = 0;
  uint64_t off_cpu_ns = 0;
  uint64_t gpu_wait_ns = 0;   // on- or off-CPU inside CUDA calls that wait for the GPU
  uint64_t preempted_ns = 0;  // runnable, waiting for a CPU
  std::string top_function;   // the most on-CPU self time
};

// Where threads blocked: one row per stack and reason.
struct CpuBlockRow {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string reason;  // "GPU sync", or the scheduler's: "sleep", "uninterruptible", ...
  uint64_t off_cpu_ns = 0;
  uint64_t intervals = 0;
  std::vector<std::string> stack;  // user frames, innermost first
};

struct CpuReport {
  uint64_t on_cpu_ns = 0;
  uint64_t samples = 0;
  uint64_t off_cpu_ns = 0;
  uint64_t intervals = 0;
  uint64_t gpu_wait_ns = 0;               // off-CPU inside CUDA calls that wait for the GPU
  uint64_t gpu_spin_ns = 0;               // on-CPU inside them
  std::vector<CpuThreadRow> threads;      // most time first
  std::vector<CpuFunctionRow> functions;  // most on-CPU self time first
  std::vector<CpuBlockRow> blocked;       // most blocked time first
  bool empty() const { return samples + intervals == 0; }
};

// A non-zero counter of what went wrong while recording or reading.
struct LossRow {
  std::optional<uint32_t> pid;  // absent for problems of the reader
  std::string stat;
  std::string severity;  // "data_loss" or "warning"
  uint64_t value = 0;
  std::string description;
};

struct ProcessRow {
  uint32_t pid = 0;
  std::string command;
  std::string hostname;
  uint64_t start_ns = 0;  // relative to the origin
  uint64_t wall_ns = 0;
  bool complete = true;    // the process wrote its final flush
  bool recording = false;  // not yet: its trace is still being written
};

struct DeviceRow {
  uint32_t pid = 0;
  uint32_t device = 0;
  std::string name;
  uint32_t compute_major = 0;
  uint32_t compute_minor = 0;
  uint32_t sm_count = 0;
};

struct ReportSummary {
  uint64_t origin_ns = 0;  // absolute CLOCK_MONOTONIC of the origin
  uint64_t span_ns = 0;    // first to last timestamp
  uint64_t kernels = 0;
  uint64_t kernel_ns = 0;
  uint64_t memcpys = 0;
  uint64_t memcpy_ns = 0;
  uint64_t memcpy_bytes = 0;
  uint64_t memsets = 0;
  uint64_t memset_ns = 0;
  uint64_t api_calls = 0;
  uint64_t api_ns = 0;
  uint64_t api_failures = 0;
  uint64_t gpu_ns() const { return kernel_ns + memcpy_ns + memset_ns; }
};

struct ReportModel {
  ReportSummary summary;
  std::vector<ProcessRow> processes;
  std::vector<DeviceRow> devices;
  std::vector<LossRow> loss;
  std::vector<std::string> read_warnings;
  std::vector<KernelRow> kernels;
  std::vector<ApiRow> runtime_api;
  std::vector<ApiRow> driver_api;  // and any other non-runtime domain
  std::vector<MemcpyRow> memcpy;
  std::vector<MemsetRow> memset;
  std::vector<SyncRow> sync;
  std::vector<MemoryDeviceRow> memory;
  std::vector<LeakRow> leaks;
  std::vector<UtilizationRow> utilization;
  std::vector<NvtxRow> nvtx;
  CpuReport cpu;
  OverheadSummary overhead;
  std::vector<HardwareRow> hardware;     // `gpuperf metrics`: kernels, then ranges
  std::vector<PcKernelRow> pc_sampling;  // `record --pc-sampling`: hot lines per kernel
  RanksModel ranks;                      // empty unless several ranks or NCCL kernels
  // With ReportOptions::part_of_job: the ranks analysis of this part's processes, times as
  // read (ranks/rank_partial.h); `ranks` is then empty.
  std::vector<RankPartial> rank_partials;
  EnergyModel energy;  // empty unless the recording read GPU power
  uint64_t gap_threshold_ns = 0;
  // False for a report merged from summaries (analyze/job/report_merge.h): its kernels' median_ns
  // are 0, not known.
  bool medians_known = true;
  bool insights_run = false;      // ReportOptions::insights was set
  std::vector<Insight> insights;  // most time at stake first
};

namespace report {
class ReportContext;
class ReportSection;
// Makes a section of the report (report_builder.h); may return nullptr when the options do
// not want it.
using SectionFactory = std::unique_ptr<ReportSection> (*)(ReportContext& context);
}  // namespace report

// Streams the trace at `path` (file or directory) once, or twice when a time-range or
// NVTX filter needs the whole trace first. `later_sections` come from the rooms above the
// report and run after its own sections, reading what they found: the insight rules
// (analyze/insights/insights_section.h), which ReportOptions::insights needs.
Result<ReportModel> BuildReport(const std::string& path, const ReportOptions& options,
                                std::span<const report::SectionFactory> later_sections = {});

// FILE or DIR as part of a job whose processes and clocks are known already (`scan` and
// `clocks` of the whole job; `job_ranks`: the job's ranks section, when analysed).
Result<ReportModel> BuildReport(const std::string& path, const ReportOptions& options,
                                std::shared_ptr<const RankScan> scan,
                                std::shared_ptr<const ClockAlignment> clocks,
                                std::optional<RanksModel> job_ranks,
                                std::span<const report::SectionFactory> later_sections = {});

// The same on a trace already in memory (tests, small traces).
Result<ReportModel> BuildReport(const Trace& trace, const ReportOptions& options,
                                std::span<const report::SectionFactory> later_sections = {});

enum class ReportSort { kTotal, kCalls, kAvg, kMedian, kMax, kName };

// Orders the kernel, API and NVTX tables and keeps the first `top` rows of every table
// (0 keeps all). Totals in the summary are not affected.
void SortAndTrim(ReportModel& model, ReportSort sort, uint32_t top);

}  // namespace gpuperf
