// Loads and runs the CPU profiler's BPF programs (cpu_profile.bpf.c): on-CPU timer
// samples and off-CPU intervals of the followed processes (or of every process), with
// kernel and user stacks, delivered as the events of cpu_profile_abi.h.
//
// Needs root, or CAP_BPF and CAP_PERFMON (CheckCpuProfilePrivileges says which is
// missing and what to run). One thread drains the ring buffer (Drain), typically every
// few milliseconds; the programs never wake it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ebpf/cpu_profile_abi.h"
#include "gpuperf/status.h"

namespace gpuperf::ebpf {

struct CpuProfileOptions {
  bool on_cpu = true;
  bool off_cpu = false;
  uint32_t frequency_hz = 99;  // on-CPU samples per second of CPU time
  bool system_wide = false;    // every process but gpuperf's own
  // Off-CPU: reuse stacks a thread sent before while its saved user registers match
  // (cpu_profile.bpf.c); off only to measure what it saves.
  bool reuse_stacks = true;
  // Off-CPU intervals of a thread in a row at one stack merge into one event while the
  // on-CPU time between them stays under merge_gap_ns and the run spans less than
  // merge_span_ns (0 and 0: one event per interval).
  uint64_t merge_gap_ns = 1'000'000;
  uint64_t merge_span_ns = 20'000'000;
  uint32_t ring_buffer_mib = 8;
  // Off-CPU: time context switches by the run queue's clock where the kernel has it
  // (cpu_profile.bpf.c switch_clock); false: bpf_ktime_get_ns, to measure the difference.
  bool run_queue_clock = true;
  // On-CPU samples carry a copy of the top of the user stack (GP_STACK_COPY_BYTES), which
  // the recorder unwinds with each module's .eh_frame; false: frame pointers only.
  bool copy_user_stacks = true;
  // Keep the kernel's run-time statistics of BPF programs on while profiling (a little
  // cost on every program run, machine-wide), for KernelCost: benchmarks only.
  bool measure_cost = false;
};

// Time the profiler's programs ran in the kernel (with CpuProfileOptions::measure_cost).
struct CpuProfileCost {
  uint64_t kernel_ns = 0;
  uint64_t runs = 0;
};

// Receives events on the thread that calls Drain.
class CpuEventSink {
 public:
  virtual ~CpuEventSink() = default;
  virtual void OnCpuSample(const gp_on_cpu_event& event) = 0;
  // Stacks that later off-CPU events name by stack_id.
  virtual void OnStacks(const gp_stacks_event& event) = 0;
  virtual void OnOffCpu(const gp_off_cpu_event& event) = 0;
  // A followed process ran a new program (execve): its maps changed.
  virtual void OnExec(const gp_event_header& event) = 0;
};

// What the BPF programs counted (cpu_profile_abi.h gp_counter), summed over CPUs.
struct CpuProfileCounters {
  uint64_t values[GP_COUNTERS] = {};
  uint64_t operator[](gp_counter which) const { return values[which]; }
};

// Empty when this process may load the profiler; otherwise one line that says what is
// missing and what to run.
std::string CheckCpuProfilePrivileges();

class CpuProfile {
 public:
  // Loads the programs and attaches them. Nothing is followed until Follow (unless
  // system_wide); events go to `sink`, which must outlive the profile.
  static Result<std::unique_ptr<CpuProfile>> Start(const CpuProfileOptions& options,
                                                   CpuEventSink& sink);
  ~CpuProfile();
  CpuProfile(const CpuProfile&) = delete;
  CpuProfile& operator=(const CpuProfile&) = delete;

  // Follows process `pid` and, from now on, the processes it forks.
  Status Follow(uint32_t pid);
  // Makes on-CPU samples of process `pid` carry its threads' Python frames, read with
  // `target` (python_target.h); null forgets the process.
  Status SetPythonTarget(uint32_t pid, const gp_py_target* target);
  // Hands every event in the ring buffer to the sink; returns how many.
  int Drain();
  // Waits up to `timeout_ms` for an event that wakes the loader (a followed process ran a
  // new program; the others are sent without wake-ups), then drains like Drain.
  int Poll(int timeout_ms);
  // Detaches the programs, has every followed thread still alive send what it holds (its
  // pending off-CPU runs, and the interval so far of a thread that is off CPU now), and
  // drains what is left. Idempotent.
  void Stop();
  CpuProfileCounters counters() const;
  // Zero without measure_cost. Read it before Stop: stopped programs are gone.
  CpuProfileCost KernelCost() const;

  struct State;  // libbpf objects, defined in the .cc

 private:
  explicit CpuProfile(std::unique_ptr<State> state);
  void FlushThreads();  // runs the flush_threads task iterator once
  std::unique_ptr<State> state_;
};

}  // namespace gpuperf::ebpf
