// The model behind `gpuperf flamegraph`: every GPU activity joined to its launch stack
// (analyze/join/correlation.h), aggregated into unique paths
//
//   [context;] cpu frames (outermost first); launch API; [graph N;] [GPU<dev>] <kernel>
//
// each weighted by the GPU time (ns) and the number of activities under it; and, for
// recordings with CPU samples (`record --cpu/--off-cpu`, analyze/join/cpu_time.h),
//
//   [context;] cpu frames; kernel frames; [spin: GPU sync;] [cpu]
//   [context;] cpu frames; kernel frames; [wait: GPU sync] or [sleep] ...; [off-cpu]
//
// weighted by on-CPU and off-CPU time, so the three kinds of time share their frames.
// Exporters (export/folded.h, export/flamegraph_svg.h) draw it; they never re-read the
// trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/join/correlation.h"
#include "analyze/join/data_loss.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

enum class FlameWeight : uint8_t {
  kGpuTime,
  kCount,       // GPU activities
  kCpuTime,     // on-CPU samples' time
  kOffCpuTime,  // blocked time
  kAll,         // GPU + on-CPU + off-CPU time
  // GPU energy in microjoules, an estimate from the recording's power readings
  // (analyze/energy/energy.h).
  kEnergy,
};
// kRank: one root per process, named by its rank ("[rank 1 (node3, GPU 1)]").
enum class FlameSplit : uint8_t { kNone, kDevice, kStream, kThread, kRank };

struct FlameGraphOptions {
  FlameWeight weight = FlameWeight::kGpuTime;
  bool demangle = true;     // kernel names; CPU frames are stored demangled
  bool full_names = false;  // keep argument and template lists (else ShortName)
  FlameSplit split = FlameSplit::kNone;
  std::optional<uint32_t> pid;  // only this process
  // Only this thread: its CPU time and the GPU activities it launched (a process's main
  // thread without the idle pools beside it).
  std::optional<uint32_t> tid;
  std::string kernel_regex;  // only GPU frames whose name matches (ECMAScript, search)
  bool inverted = false;     // GPU frame first: "which CPU paths feed this kernel"
  // Keep the interpreter's native frames in stacks with Python frames (symbol_table.h).
  bool python_internals = false;
  // Root every path in its process ("[pid N] command") even when the trace has only one,
  // as a job of several has them (a host's part of a job: analyze/job/report_merge.h).
  bool process_roots = false;

  // Whether the pid and tid filters keep a thread's CPU time or launches.
  bool KeepsThread(uint32_t thread_pid, uint32_t thread_tid) const {
    return (!pid || thread_pid == *pid) && (!tid || thread_tid == *tid);
  }
};

enum class FlameFrameKind : uint8_t {
  kContext,    // process, thread, device/stream split, "[unknown launch]" and the like
  kCpu,        // a function of the launching call stack
  kLaunchApi,  // cudaLaunchKernel, cuGraphLaunch, cudaMemcpyAsync, ...
  kGraph,      // "[graph 3]": the graph a graph launch ran
  kKernel,
  kMemcpy,
  kMemset,
  kPython,  // a Python function: "qualname (file.py:87)"
  // CPU samples (analyze/join/cpu_time.h):
  kKernelCode,  // a function of the operating system kernel
  kOnCpu,       // the "[cpu]" leaf: on-CPU time
  kOffCpu,      // the "[off-cpu]" leaf: blocked time
  kGpuWait,     // "[wait: GPU sync]", "[spin: GPU sync]": inside a call that waits for the GPU
  // PC samples (analyze/pc_frames.h):
  kSourceLine,  // --pc-frames: "[line] file.cu:51", a kernel's share of PC samples
  kStall,       // --pc-frames: "[stall] long_scoreboard" above its line
};

struct FlameFrame {
  std::string name;
  FlameFrameKind kind = FlameFrameKind::kCpu;
};

// One unique path with its weights.
struct FlameStack {
  std::vector<uint32_t> frames;  // indexes into FlameGraph::frames, root first
  uint64_t gpu_ns = 0;
  uint64_t count = 0;   // GPU activities
  uint64_t cpu_ns = 0;  // on-CPU
  uint64_t offcpu_ns = 0;
  uint64_t energy_uj = 0;  // with FlameWeight::kEnergy only

  uint64_t weight(FlameWeight w) const {
    switch (w) {
      case FlameWeight::kCount:
        return count;
      case FlameWeight::kCpuTime:
        return cpu_ns;
      case FlameWeight::kOffCpuTime:
        return offcpu_ns;
      case FlameWeight::kAll:
        return gpu_ns + cpu_ns + offcpu_ns;
      case FlameWeight::kEnergy:
        return energy_uj;
      case FlameWeight::kGpuTime:
        break;
    }
    return gpu_ns;
  }
};

struct FlameSummary {
  uint64_t gpu_ns = 0;  // summed over activities (concurrent kernels add up)
  uint64_t kernels = 0;
  uint64_t memcpys = 0;
  uint64_t memsets = 0;
  uint64_t unmatched = 0;     // drawn activities without a launch stack
  uint64_t unmatched_ns = 0;  // their GPU time
  uint32_t processes = 0;
  uint32_t devices = 0;
  uint64_t filtered_out = 0;     // activities left out by --pid / --kernel
  CorrelationStats correlation;  // the join over the whole trace, before filtering
  uint64_t energy_uj = 0;        // FlameWeight::kEnergy: the kernels' estimated energy
  double power_rate_hz = 0;      // ... from power readings this often
  // CPU samples (zero without them):
  uint64_t cpu_ns = 0;
  uint64_t cpu_samples = 0;
  uint64_t offcpu_ns = 0;
  uint64_t offcpu_intervals = 0;
  uint64_t gpu_wait_ns = 0;  // off-CPU time inside CUDA calls that wait for the GPU
  uint64_t gpu_spin_ns = 0;  // on-CPU time inside them
  uint32_t cpu_threads = 0;

  bool has_cpu() const { return cpu_samples + offcpu_intervals > 0; }

  uint64_t activities() const { return kernels + memcpys + memsets; }
};

struct FlameGraph {
  std::vector<FlameFrame> frames;  // unique (name, kind)
  std::vector<FlameStack> stacks;  // sorted by frame names, no two with the same path
  FlameSummary summary;
  bool inverted = false;
  std::vector<RecordingLoss> recording_loss;  // what the recorders lost (see data_loss.h)
};

// Builds the flame graph of an in-memory trace.
Result<FlameGraph> BuildFlameGraph(const Trace& trace, const FlameGraphOptions& options);

// Streams a trace file or directory: memory grows with the number of launches (the link
// table, 24 bytes each), not with the size of the records.
Result<FlameGraph> BuildFlameGraphFromFile(const std::string& path,
                                           const FlameGraphOptions& options, ReadReport* report);

}  // namespace gpuperf
