// The table of counters a recording keeps about itself: what it dropped and what it
// cost. Every drop is counted here and shown by `gpuperf report`; nothing is lost
// silently. Stat ids are stored in traces: append new ones, never renumber.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuperf/records.h"

namespace gpuperf {

enum class StatSeverity : uint8_t {
  kInfo,      // a cost or a count, nothing wrong
  kWarning,   // something degraded, but no data was lost
  kDataLoss,  // records that the trace does not have
};

// X(name, id, severity, description)
#define GPUPERF_STATS(X)                                                                           \
  X(cupti_dropped_records, 1, kDataLoss, "activity records CUPTI dropped (its buffers were full)") \
  X(incomplete_records, 2, kDataLoss, "activity records without timestamps (never completed)")     \
  X(untranslated_records, 3, kInfo, "activity records of kinds gpuperf does not keep")             \
  X(writer_queue_full, 4, kDataLoss,                                                               \
    "activity records dropped because the writer's queue was over its memory budget")              \
  X(launch_links_dropped, 5, kDataLoss, "launch stacks dropped (per-thread buffer full)")          \
  X(unwind_failed, 6, kDataLoss, "launches whose CPU stack could not be unwound")                  \
  X(stack_table_full, 7, kDataLoss, "launch stacks not interned (stack table at its limit)")       \
  X(write_errors, 8, kDataLoss, "chunks that could not be written to disk")                        \
  X(cupti_subscribe_failed, 9, kWarning,                                                           \
    "CUPTI callbacks unavailable (another profiler subscribed): no API stacks")                    \
  X(cupti_call_failed, 10, kWarning, "CUPTI calls that failed (see the log)")                      \
  X(callbacks, 11, kInfo, "CUPTI API callbacks handled")                                           \
  X(callback_ns, 12, kInfo,                                                                        \
    "time spent in gpuperf's API callbacks (ns, sampled 1 in 16 and scaled)")                      \
  X(stacks_unwound, 13, kInfo, "CPU stacks unwound at launches")                                   \
  X(unwind_ns, 14, kInfo, "time spent unwinding (ns)")                                             \
  X(activity_buffers, 15, kInfo, "CUPTI activity buffers processed")                               \
  X(activity_records, 16, kInfo, "CUPTI activity records processed")                               \
  X(translate_ns, 17, kInfo, "time spent translating activity records (ns)")                       \
  X(bytes_written, 18, kInfo, "bytes written to the trace file")                                   \
  X(chunks_written, 19, kInfo, "chunks written to the trace file")                                 \
  X(compress_ns, 20, kInfo,                                                                        \
    "time the writer thread spent encoding, compressing and writing chunks (ns)")                  \
  X(unique_stacks, 21, kInfo, "distinct launch stacks")                                            \
  X(module_refreshes, 22, kInfo, "module table refreshes (after dlopen)")                          \
  X(forked_children_ignored, 23, kInfo,                                                            \
    "forked children in which recording was switched off (until they exec)")                       \
  X(api_calls_dropped, 24, kDataLoss, "API calls not recorded (per-thread buffer could not grow)") \
  X(api_calls_from_callbacks, 25, kInfo,                                                           \
    "API records taken in gpuperf's callbacks instead of CUPTI activity records")                  \
  X(fp_stacks_verified, 26, kInfo,                                                                 \
    "frame-pointer stacks that libunwind confirmed (walked by frame pointers from then on)")       \
  X(fp_stacks_rejected, 27, kInfo,                                                                 \
    "frame-pointer stacks that differed from libunwind's (those are unwound with libunwind)")      \
  X(records_after_close, 28, kDataLoss,                                                            \
    "activity records that arrived after the trace was closed")                                    \
  X(forked_child_records, 29, kInfo,                                                               \
    "activity records a forked child was handed (copies of the parent's, which records them)")     \
  /* 30-34: how launch stacks were unwound (docs/recording.md "How stacks are unwound") */         \
  X(table_stacks, 30, kInfo, "launch stacks unwound from .eh_frame tables (without libunwind)")    \
  X(table_fallback_no_table, 31, kInfo,                                                            \
    "launch stacks unwound with libunwind: a frame's code had no table yet (being built, or "      \
    "loaded since), no .eh_frame, or no FDE")                                                      \
  X(table_fallback_rule, 32, kInfo,                                                                \
    "launch stacks unwound with libunwind: a frame's unwind rule is one the tables do not hold, "  \
    "or it led outside the stack")                                                                 \
  X(unwind_verified, 33, kInfo,                                                                    \
    "launch stacks unwound once more with libunwind to check them (GPUPERF_UNWIND_VERIFY=1)")      \
  X(unwind_disagreements, 34, kWarning,                                                            \
    "launch stacks whose frame-pointer or table walk differed from libunwind's (verify mode)")     \
  /* 40-: the recorder's memory, thread churn and other CUPTI clients (docs/recording.md) */       \
  X(memory_peak_bytes, 40, kInfo,                                                                  \
    "most memory the recorder held at once (CUPTI buffers and batches for the writer), bytes")     \
  X(memory_budget_grown, 41, kInfo,                                                                \
    "times the recorder's memory budget doubled past its soft budget under load")                  \
  X(memory_cap_refusals, 42, kWarning,                                                             \
    "CUPTI buffers refused at the hard memory cap (their records count as dropped by CUPTI)")      \
  X(thread_buffers_freed, 43, kInfo, "exited threads whose record buffers were freed")             \
  X(activity_buffers_taken, 44, kDataLoss,                                                         \
    "another CUPTI client took over the activity buffers: later GPU activity is missing")          \
  X(thread_buffer_bytes, 45, kInfo,                                                                \
    "bytes of per-thread record buffers allocated at the last flush")                              \
  /* 46-49: the flight recorder and sampled stacks (docs/flight-recorder.md) */                    \
  X(flight_dumps, 46, kInfo, "flight-recorder dumps this process wrote (this trace is the last)")  \
  X(flight_evicted_records, 47, kDataLoss,                                                         \
    "records of this dump's window dropped because the flight recorder's memory was full")         \
  X(flight_memory_peak_bytes, 48, kInfo,                                                           \
    "most memory the flight recorder's ring held (compressed records and tables), bytes")          \
  X(launch_stacks_unsampled, 49, kInfo,                                                            \
    "launches whose stack --sample-launches did not take (their GPU work is still recorded)")      \
  /* 50-59: Python frames at launches (src/inject/python, docs/recording.md) */                    \
  X(python_codes, 50, kInfo, "Python code objects copied (names, file, line table)")               \
  X(python_no_thread_state, 51, kInfo,                                                             \
    "launches from threads without a Python thread state (native frames only)")                    \
  X(python_refused, 52, kWarning,                                                                  \
    "launches without Python frames because the interpreter was refused (see the log)")            \
  X(python_truncated, 53, kWarning, "Python stacks cut at 128 frames (outermost frames lost)")     \
  X(python_broken, 54, kWarning,                                                                   \
    "Python stacks ended early by a frame pointer that made no sense")                             \
  X(python_skipped_frames, 55, kWarning,                                                           \
    "Python frames left out: their code was not a code object")                                    \
  X(python_intern_failed, 56, kDataLoss, "Python frames without a name (code table full or busy)") \
  X(python_unreadable_names, 57, kWarning,                                                         \
    "Python code objects whose name or file could not be read")                                    \
  /* 60-69: CPU samples and off-CPU time (gpuperf record --cpu/--off-cpu, docs/cpu-profiling.md)   \
   */                                                                                              \
  X(cpu_samples, 60, kInfo, "on-CPU samples recorded")                                             \
  X(off_cpu_intervals, 61, kInfo, "off-CPU intervals recorded")                                    \
  X(cpu_events_lost, 62, kDataLoss,                                                                \
    "CPU samples and off-CPU intervals lost (eBPF ring buffer full, or unreadable)")               \
  X(cpu_stacks_truncated, 63, kWarning,                                                            \
    "CPU stacks cut at 127 user frames (outermost frames lost)")                                   \
  X(cpu_stacks_failed, 64, kWarning, "CPU stacks whose kernel or user part could not be read")     \
  X(off_cpu_untimed, 65, kDataLoss,                                                                \
    "off-CPU intervals not timed (no per-thread state, a clock behind, or a context switch the "   \
    "scheduler's tracepoint did not bring)")                                                       \
  X(off_cpu_stack_reuse_wrong, 66, kWarning,                                                       \
    "off-CPU stack reuses found wrong when checked (1 in 256 is checked)")                         \
  X(cpu_processes_followed, 67, kInfo, "child processes the CPU profiler followed at fork")        \
  X(cpu_unmapped_pcs, 68, kWarning,                                                                \
    "user PCs of CPU samples in no mapped file (JIT code, or the process exited first)")           \
  X(off_cpu_stack_walks, 69, kInfo,                                                                \
    "off-CPU stacks walked (the rest reused a thread's last ones)")                                \
  /* 70-74: the live page that gpuperf top and serve read (src/live, docs/live.md) */              \
  X(live_page_unavailable, 70, kWarning,                                                           \
    "no live page: gpuperf top and serve cannot see this process (see the log)")                   \
  X(live_updates, 71, kInfo, "live page updates")                                                  \
  X(live_update_ns, 72, kInfo,                                                                     \
    "CPU time the writer thread spent folding records into the live page (ns)")                    \
  X(live_records_left_out, 73, kInfo,                                                              \
    "records of devices past the live page's 16 (in the trace, not on the page)")                  \
  /* 75-84: hardware metrics and PC sampling (src/inject/cupti, docs/hardware-metrics.md) */       \
  X(metric_ranges, 75, kInfo,                                                                      \
    "ranges (kernels, NVTX ranges, windows) the range profiler measured")                          \
  X(metric_ranges_lost, 76, kDataLoss,                                                             \
    "measured ranges whose values were lost (CUPTI dropped them or could not evaluate them)")      \
  X(metric_names_unmatched, 77, kWarning,                                                          \
    "kernel ranges whose kernel could not be named (launches and ranges did not pair up)")         \
  X(hardware_unavailable, 78, kWarning,                                                            \
    "contexts where counters or PC sampling could not be used (the log line says how to fix it)")  \
  X(profiler_ns, 79, kInfo,                                                                        \
    "time the range profiler and PC sampling took on the application's threads (ns)")              \
  X(pc_samples, 80, kInfo, "PC samples collected")                                                 \
  X(pc_samples_dropped, 81, kDataLoss, "PC samples the hardware dropped (its buffer was full)")    \
  X(pc_samples_unattributed, 82, kInfo,                                                            \
    "PC samples CUPTI does not attribute to an instruction (kernels of the driver and libraries)") \
  X(cubins_saved, 83, kInfo, "cubins saved beside the trace for line mapping")                     \
  X(cubins_not_saved, 84, kWarning,                                                                \
    "cubins not saved (disk error, or over the size cap): their samples stay at SASS offsets")     \
  /* 85-94: ranks and GPU power (src/inject/power, docs/energy.md) */                              \
  X(power_samples, 85, kInfo, "GPU power readings taken through NVML")                             \
  X(power_unavailable, 86, kInfo,                                                                  \
    "NVML could not be used (no libnvidia-ml.so.1, or it failed): no power readings")              \
  X(power_read_failed, 87, kWarning, "NVML power readings that failed")                            \
  X(power_read_ns, 88, kInfo, "time the power sampler spent in NVML (ns)")                         \
  X(power_device_unmatched, 89, kWarning,                                                          \
    "GPUs in use that NVML could not be matched to (no power readings for them)")                  \
  X(power_matched_by_index, 90, kInfo,                                                             \
    "GPUs matched to NVML by index, not by UUID (libcuda did not say their UUID)")                 \
  /* 91-94: other CUPTI clients in the process (src/preload, docs/recording.md) */                 \
  X(cupti_clients_refused, 91, kWarning,                                                           \
    "CUPTI clients (torch.profiler?) refused CUPTI because gpuperf held it: their traces lack "    \
    "CUDA events")                                                                                 \
  /* 95-104: NCCL's profiler plugin (src/inject/nccl, docs/multi-rank.md) */                       \
  X(nccl_collectives, 95, kInfo, "NCCL collectives recorded through NCCL's profiler plugin")       \
  X(nccl_collectives_dropped, 96, kDataLoss,                                                       \
    "NCCL collectives not recorded (the plugin's event table was full)")                           \
  X(nccl_events_ignored, 97, kInfo,                                                                \
    "NCCL profiler events of types gpuperf does not record, or with unusable descriptors")         \
  X(nccl_plugin_ns, 98, kInfo, "time spent in the NCCL profiler plugin's calls (ns)")              \
  X(nccl_communicators, 99, kInfo, "NCCL communicators that initialized the profiler plugin")      \
  X(nccl_unfinished, 100, kDataLoss,                                                               \
    "NCCL collectives started but never stopped by the end of the recording")                      \
  /* 101-104: Python frames in CPU samples (src/ebpf/python_target.h, docs/cpu-profiling.md) */    \
  X(cpu_python_samples, 101, kInfo, "on-CPU samples that carry the thread's Python frames")        \
  X(cpu_python_frames_lost, 102, kWarning,                                                         \
    "on-CPU samples and off-CPU stacks of Python threads whose Python frames could not be read "   \
    "or named")                                                                                    \
  X(cpu_python_truncated, 103, kWarning,                                                           \
    "on-CPU samples and off-CPU stacks whose Python frame chain went deeper than the walk (64 "    \
    "frames)")                                                                                     \
  X(cpu_python_refused, 104, kWarning,                                                             \
    "processes with a CPython interpreter whose layout is not known: CPU samples without "         \
    "Python frames")                                                                               \
  /* 105-109: on-CPU user stacks unwound with .eh_frame (src/ebpf/sample_unwinder.h) */            \
  X(cpu_stacks_unwound, 105, kInfo,                                                                \
    "on-CPU samples whose user stack was unwound from its copy with .eh_frame")                    \
  X(cpu_stacks_unwind_fallback, 106, kInfo,                                                        \
    "on-CPU samples whose .eh_frame walk stopped early: their frame-pointer stack was kept")       \
  X(cpu_stacks_end_of_copy, 107, kInfo,                                                            \
    "on-CPU samples whose .eh_frame walk reached the end of the stack's copy (outer frames cut)")  \
  X(cpu_stack_copy_failed, 108, kWarning,                                                          \
    "on-CPU samples whose user stack could not be copied: frame-pointer stack only")               \
  X(cpu_unwind_ns, 109, kInfo,                                                                     \
    "time the recorder spent unwinding stack copies and building their tables (ns)")               \
  /* 110: Python frames in off-CPU stacks (docs/cpu-profiling.md) */                               \
  X(off_cpu_python_stacks, 110, kInfo,                                                             \
    "distinct off-CPU stacks that carry the thread's Python frames")                               \
  X(stack_memo_hits, 111, kInfo,                                                                   \
    "launch stacks reused from the thread's stack memo (same registers and stack words)")          \
  X(stack_memo_entries, 112, kInfo, "launch stacks kept in the threads' stack memos")              \
  X(stack_memo_checked, 113, kInfo,                                                                \
    "stack memo hits unwound again and compared (GPUPERF_UNWIND_VERIFY=1)")                        \
  X(stack_memo_disagreements, 114, kWarning,                                                       \
    "stack memo hits whose stack differed from a fresh unwind (GPUPERF_UNWIND_VERIFY=1)")          \
  X(autograd_backward_linked, 115, kInfo,                                                          \
    "backward launches given their forward op's Python frames (PyTorch autograd)")                 \
  X(autograd_backward_unlinked, 116, kInfo,                                                        \
    "backward launches whose forward op launched nothing, or was forgotten (PyTorch autograd)")    \
  X(autograd_nodes_unreadable, 117, kWarning,                                                      \
    "backward launches whose autograd node's fields made no sense (not linked)")                   \
  X(stack_memo_miss_registers, 118, kInfo,                                                         \
    "stack memo lookups that found no entry from the same registers")                              \
  X(stack_memo_miss_python, 119, kInfo, "stack memo lookups whose entry had other Python frames")  \
  X(stack_memo_miss_words, 120, kInfo, "stack memo lookups whose entry's stack words had changed") \
  X(stack_memo_not_kept, 121, kInfo,                                                               \
    "launch stacks the memo did not keep (too many words, an odd walk, or entries paused)")        \
  X(cupti_detached_after_range, 122, kInfo,                                                        \
    "CUPTI detached after the capture range (record --duration): no cost left in the program")     \
  X(kernel_times_from_hardware, 123, kInfo,                                                        \
    "kernel times taken by the GPU's Hardware Event System (record --hw-trace)")                   \
  X(hw_trace_unavailable, 124, kWarning,                                                           \
    "record --hw-trace refused by CUPTI (needs Blackwell or newer): kernels timed the usual way")  \
  X(off_cpu_switches_repaired, 125, kInfo,                                                         \
    "switches in that the scheduler's tracepoint did not bring, timed by the scheduler's record "  \
    "of when the thread's turn on a CPU began")                                                    \
  X(calls_before_window, 126, kInfo,                                                               \
    "GPU work of calls made before an attach window opened (left out: no launch stack)")

enum class StatId : uint32_t {
#define GPUPERF_STAT_ENUM(name, id, severity, description) name = id,
  GPUPERF_STATS(GPUPERF_STAT_ENUM)
#undef GPUPERF_STAT_ENUM
};

// Stat ids are below this: the injection library keeps this many counters, readers this
// many values (ids of a newer gpuperf beyond it are ignored).
inline constexpr uint32_t kStatSlots = 128;

// Counters read back from a trace. The injection library writes cumulative snapshots
// (every non-zero counter, each flush period, values that only grow), so one process's
// counter is its largest snapshot: the final one, in whatever order the reader meets the
// snapshots (files of a directory, chunks of a damaged file). Counters of several
// processes add up.
struct StatCounters {
  uint64_t values[kStatSlots] = {};

  // One snapshot of one process's counter.
  void Fold(uint32_t id, uint64_t value) {
    if (id < kStatSlots && value > values[id]) values[id] = value;
  }
  // The counters of another process.
  StatCounters& operator+=(const StatCounters& other) {
    for (uint32_t id = 0; id < kStatSlots; ++id) values[id] += other.values[id];
    return *this;
  }
  uint64_t operator[](StatId id) const { return values[static_cast<uint32_t>(id)]; }
};

struct StatInfo {
  std::string_view name;
  StatSeverity severity;
  std::string_view description;
};

// Records left out of a trace, by kind: chunks that a full disk, the file size limit or a
// failed write kept out whole (their count is write_errors). Stat id kNotWrittenStats + the
// chunk type of the records (records.h; format/file_format.h for names, stacks, symbols,
// Python code and PC samples). Past kStatSlots: the writer thread writes them from its own
// counts, and a gpuperf that does not know them skips them.
inline constexpr uint32_t kNotWrittenStats = 1024;
inline constexpr uint32_t kNotWrittenKinds = 64;  // chunk types below this

#define GPUPERF_NOT_WRITTEN_TEXT " records not written (full disk, file size limit or failed write)"
inline constexpr StatInfo kNotWrittenInfo[] = {{},  // chunk type 0: none
#define GPUPERF_NOT_WRITTEN_INFO(Type, snake, plural, number) \
  {#plural "_not_written", StatSeverity::kDataLoss, #Type GPUPERF_NOT_WRITTEN_TEXT},
                                               GPUPERF_FIXED_RECORD_TYPES(GPUPERF_NOT_WRITTEN_INFO)
#undef GPUPERF_NOT_WRITTEN_INFO
};
// Chunk types 30-35 of the format's variable-length records.
inline constexpr StatInfo kNotWrittenVariableInfo[] = {
    {"strings_not_written", StatSeverity::kDataLoss, "String" GPUPERF_NOT_WRITTEN_TEXT},
    {"stacks_not_written", StatSeverity::kDataLoss, "Stack" GPUPERF_NOT_WRITTEN_TEXT},
    {"symbols_not_written", StatSeverity::kDataLoss, "Symbol" GPUPERF_NOT_WRITTEN_TEXT},
    {"python_codes_not_written", StatSeverity::kDataLoss, "PythonCode" GPUPERF_NOT_WRITTEN_TEXT},
    {},
    {"gpu_profile_not_written", StatSeverity::kDataLoss,
     "PcSample, Cubin and SassLine" GPUPERF_NOT_WRITTEN_TEXT},
};
#undef GPUPERF_NOT_WRITTEN_TEXT
// kNotWrittenInfo is indexed by chunk type: the fixed types are numbered 1, 2, 3... in order.
#define GPUPERF_NOT_WRITTEN_CHECK(Type, snake, plural, number) \
  static_assert(kNotWrittenInfo[number].name == #plural "_not_written");
GPUPERF_FIXED_RECORD_TYPES(GPUPERF_NOT_WRITTEN_CHECK)
#undef GPUPERF_NOT_WRITTEN_CHECK

// Name, severity and description of a stat id; a placeholder for ids from a newer gpuperf.
inline StatInfo GetStatInfo(uint32_t id) {
  if (id >= kNotWrittenStats && id < kNotWrittenStats + kNotWrittenKinds) {
    const uint32_t type = id - kNotWrittenStats;
    constexpr uint32_t kFixed = sizeof(kNotWrittenInfo) / sizeof(kNotWrittenInfo[0]);
    constexpr uint32_t kVariableFirst = 30;
    constexpr uint32_t kVariable = sizeof(kNotWrittenVariableInfo) / sizeof(StatInfo);
    StatInfo info = {};
    if (type < kFixed) info = kNotWrittenInfo[type];
    if (type >= kVariableFirst && type < kVariableFirst + kVariable) {
      info = kNotWrittenVariableInfo[type - kVariableFirst];
    }
    if (!info.name.empty()) return info;
  }
  switch (id) {
#define GPUPERF_STAT_INFO(name, id, severity, description) \
  case id:                                                 \
    return {#name, StatSeverity::severity, description};
    GPUPERF_STATS(GPUPERF_STAT_INFO)
#undef GPUPERF_STAT_INFO
  }
  return {"unknown_stat", StatSeverity::kInfo, "a counter from a newer gpuperf"};
}

}  // namespace gpuperf
