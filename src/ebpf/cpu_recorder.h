// Writes what the CPU profiler sees (cpu_profile.h events) into a trace file of its own,
// cpu.<gpuperf's pid>.gpt in the recording's directory, next to the processes' GPU traces:
// `report DIR` and `flamegraph DIR` read them as one trace.
//
// The file holds, for every process that was sampled: CpuSample and OffCpu records, their
// interned stacks (kernel frames first, gpuperf/kernel_frame_word.h), the process's ELF
// modules from /proc/PID/maps (read when it is first seen and again when a PC falls
// outside them), its threads' names, symbols for the kernel frames (from /proc/kallsyms),
// a ProcessRecord for processes without a GPU trace of their own, and the collector's
// counters (stats 60-69, 101-104, 110). Samples and off-CPU stacks of Python processes carry
// the thread's Python frames after the user PCs, as launch stacks do, with PythonCodeRecords
// naming them. User frames
// are named afterwards by the same symbolizer as launch stacks, so CPU and GPU frames come out
// identical.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ebpf/cpu_profile.h"
#include "gpuperf/status.h"
#include "gpuperf/trace_writer.h"

namespace gpuperf::ebpf {

struct CpuRecorderOptions {
  std::string path;
};

struct CpuRecordingTotals {
  uint64_t samples = 0;
  uint64_t on_cpu_ns = 0;
  uint64_t off_cpu_records = 0;
  uint64_t off_cpu_intervals = 0;
  uint64_t off_cpu_ns = 0;
  uint64_t stacks = 0;
  uint32_t processes = 0;
  uint32_t threads = 0;
  // Stack copies unwound with .eh_frame (sample_unwinder.h): how many, the time the walks
  // took (ns), and of that time, the files indexed and FDEs compiled for them and what
  // that and the lookups not cached took (ns).
  uint64_t unwound = 0;
  uint64_t unwind_ns = 0;
  uint64_t unwind_tables = 0;
  uint64_t unwind_fdes = 0;
  uint64_t unwind_tables_ns = 0;
};

class CpuRecorder final : public CpuEventSink {
 public:
  static Result<std::unique_ptr<CpuRecorder>> Create(const CpuRecorderOptions& options);
  ~CpuRecorder() override;

  void OnCpuSample(const gp_on_cpu_event& event) override;
  void OnStacks(const gp_stacks_event& event) override;
  void OnOffCpu(const gp_off_cpu_event& event) override;
  void OnExec(const gp_event_header& event) override;

  // Python processes: the recorder finds their interpreters (python_target.h) and hands
  // each one's layout to `sink` (CpuProfile::SetPythonTarget; null: forget the pid), so
  // their samples carry Python frames, which it names. Without a sink, none do.
  using PythonTargetSink = std::function<void(uint32_t pid, const gp_py_target* target)>;
  void SetPythonTargetSink(PythonTargetSink sink);

  // Reads the maps of processes whose stacks had PCs outside them at a time when the
  // back-off did not allow a read, once it does. The draining thread calls it after each
  // poll.
  void ReadDueMaps();

  // Reads /proc/kallsyms (a fifth of a second): call it once the profiler's programs are
  // loaded and before the recorded command runs; else the first kernel frame does.
  void LoadKernelSymbols();

  // Names the kernel frames, adds the processes that have no GPU trace in `output_dir`
  // and the counters (filed under process `stats_pid`), and closes the file.
  Status Finish(const CpuProfileCounters& counters, const std::string& output_dir,
                uint32_t stats_pid);

  const CpuRecordingTotals& totals() const { return totals_; }

  struct State;  // defined in the .cc

 private:
  explicit CpuRecorder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  CpuRecordingTotals totals_;
};

}  // namespace gpuperf::ebpf
