#include "cli/record_cpu.h"

#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "base/units.h"
#include "cli/command.h"
#include "symbolize/symbolizer.h"

#if GPUPERF_HAVE_EBPF
#include "ebpf/cpu_profile.h"
#include "ebpf/cpu_recorder.h"
#endif

namespace gpuperf::cli {

bool WantsCpuRecording(const RecordOptions& options) {
  return options.cpu || options.off_cpu;
}

#if GPUPERF_HAVE_EBPF
namespace {

class EbpfCpuRecording final : public CpuRecording {
 public:
  EbpfCpuRecording(const RecordOptions& options, std::string dir)
      : quiet_(options.quiet),
        symbolize_(!options.no_symbolize),
        duration_ns_(options.duration_ms * 1000000),
        dir_(std::move(dir)),
        file_("cpu." + std::to_string(getpid()) + ".gpt") {}

  ~EbpfCpuRecording() override { StopDraining(); }

  Status Begin(const RecordOptions& options) {
    ebpf::CpuRecorderOptions recorder_options;
    recorder_options.path = dir_ + "/" + file_;
    GP_ASSIGN_OR_RETURN(recorder_, ebpf::CpuRecorder::Create(recorder_options));
    ebpf::CpuProfileOptions profile_options;
    profile_options.on_cpu = options.cpu;
    profile_options.off_cpu = options.off_cpu;
    profile_options.frequency_hz = options.cpu_frequency_hz;
    profile_options.system_wide = options.system;
    // Benchmarks (bench/cpu_overhead/run.sh) ask what the profiler cost.
    const char* cost = std::getenv("GPUPERF_CPU_COST");
    measure_cost_ = cost != nullptr && *cost != '\0' && *cost != '0';
    profile_options.measure_cost = measure_cost_;
    // ... and what the run queue's clock saves (GPUPERF_CPU_CLOCK=ktime: the other clock).
    const char* clock = std::getenv("GPUPERF_CPU_CLOCK");
    profile_options.run_queue_clock = clock == nullptr || std::string_view(clock) != "ktime";
    // User stacks of on-CPU samples: unwound from a copy of the stack with .eh_frame
    // (default), or by frame pointers alone (GPUPERF_CPU_UNWIND=fp), to compare. The copies
    // make an on-CPU event ~18 KiB instead of ~2 KiB: a larger ring holds as many.
    const char* unwind = std::getenv("GPUPERF_CPU_UNWIND");
    profile_options.copy_user_stacks = unwind == nullptr || std::string_view(unwind) != "fp";
    if (profile_options.copy_user_stacks && options.cpu) profile_options.ring_buffer_mib = 32;
    Result<std::unique_ptr<ebpf::CpuProfile>> profile =
        ebpf::CpuProfile::Start(profile_options, *recorder_);
    if (!profile.ok()) {
      unlink(recorder_options.path.c_str());
      return profile.status();
    }
    profile_ = std::move(*profile);
    if (options.cpu || options.off_cpu) {  // Python frames in samples and off-CPU stacks
      const bool verbose = options.verbose;
      recorder_->SetPythonTargetSink([this, verbose](uint32_t pid, const gp_py_target* target) {
        Status set = profile_->SetPythonTarget(pid, target);
        if (!set.ok()) {
          PrintWarning(set.message());
        } else if (verbose && target != nullptr) {
          // Samples taken before this moment have no Python frames: say when it came.
          std::fprintf(stderr, "gpuperf: pid %u: its CPU stacks carry Python frames from now on\n",
                       pid);
        }
      });
    }
    recorder_->LoadKernelSymbols();  // now that the programs are in it, before the command runs
    return Status::Ok();
  }

  void Run() override {
    if (drainer_.joinable()) return;
    started_ = std::chrono::steady_clock::now();
    drainer_ = std::thread([this] { DrainLoop(); });
  }

  void Follow(pid_t pid) override {
    Status followed = profile_->Follow(static_cast<uint32_t>(pid));
    if (!followed.ok()) PrintWarning(followed.message());
  }

  bool Finish(uint32_t stats_pid) override {
    StopDraining();
    const ebpf::CpuProfileCost cost = profile_->KernelCost();
    profile_->Stop();
    Status written = recorder_->Finish(profile_->counters(), dir_, stats_pid);
    const ebpf::CpuRecordingTotals& t = recorder_->totals();
    if (measure_cost_) {
      // drain_ns: the draining thread, which also compiles the unwind rules it needs.
      std::fprintf(stderr, "gpuperf: CPU profiler cost: kernel_ns=%llu runs=%llu drain_ns=%llu\n",
                   static_cast<unsigned long long>(cost.kernel_ns),
                   static_cast<unsigned long long>(cost.runs),
                   static_cast<unsigned long long>(drain_cpu_ns_));
    }
    if (!written.ok()) {
      PrintWarning("CPU samples not written: " + written.message());
      return false;
    }
    if (symbolize_) {
      // Samples are interrupted instructions, not return addresses: named at their own
      // address (SymbolizeOptions). The directory's symbolization then skips them.
      SymbolizeOptions options;
      options.innermost_is_return_address = false;
      Status named = SymbolizeTraceFile(dir_ + "/" + file_, options, nullptr);
      if (!named.ok()) {
        PrintWarning("CPU samples not symbolized: " + named.message());
      }
    }
    if (measure_cost_) {
      // tables: files indexed; fdes: FDEs compiled; tables_ns (part of unwind_ns): both,
      // and the lookups no cache answered.
      std::fprintf(stderr,
                   "gpuperf: CPU stack unwinding: unwound=%llu unwind_ns=%llu tables=%llu "
                   "fdes=%llu tables_ns=%llu\n",
                   static_cast<unsigned long long>(t.unwound),
                   static_cast<unsigned long long>(t.unwind_ns),
                   static_cast<unsigned long long>(t.unwind_tables),
                   static_cast<unsigned long long>(t.unwind_fdes),
                   static_cast<unsigned long long>(t.unwind_tables_ns));
    }
    if (!quiet_) {
      std::fprintf(stderr,
                   "gpuperf: CPU: %s samples (%s on CPU), %s off-CPU intervals (%s blocked) in %s "
                   "processes, %s threads -> %s\n",
                   FormatCount(t.samples).c_str(), FormatDuration(t.on_cpu_ns).c_str(),
                   FormatCount(t.off_cpu_intervals).c_str(), FormatDuration(t.off_cpu_ns).c_str(),
                   FormatCount(t.processes).c_str(), FormatCount(t.threads).c_str(), file_.c_str());
    }
    return true;
  }

  std::string file_name() const override { return file_; }

 private:
  // Hands the ring buffer to the recorder every 50 ms, or every 10 ms while it fills fast
  // (a drain that found many events: on many CPUs or at high --freq), and at once when a
  // followed process runs a new program (its maps are read then); stops sampling once
  // --duration has passed (the command may run on). Each wake-up of this thread costs the
  // machine a context switch and a pass over the ring: at 10 ms, that was half of the
  // draining thread's CPU time in a context-switch-heavy run (docs/cpu-profiling.md).
  void DrainLoop() {
    constexpr int kBusyEvents = 256;  // ~600 KB of on-CPU samples (4.7 MB with stack copies)
    using std::chrono::milliseconds;
    const auto end = started_ + std::chrono::nanoseconds(duration_ns_);
    int drained = 0;
    while (!stop_.load()) {
      milliseconds wait(drained >= kBusyEvents ? 10 : 50);
      if (duration_ns_ != 0) {  // stop on time: wait no longer than the window has left
        wait =
            std::min(wait, std::chrono::ceil<milliseconds>(end - std::chrono::steady_clock::now()));
      }
      drained = profile_->Poll(static_cast<int>(std::max<int64_t>(wait.count(), 0)));
      recorder_->ReadDueMaps();
      if (duration_ns_ != 0 && std::chrono::steady_clock::now() >= end) {
        profile_->Stop();
        break;
      }
    }
    timespec used;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &used);
    drain_cpu_ns_ = static_cast<uint64_t>(used.tv_sec) * 1000000000ull + used.tv_nsec;
  }

  void StopDraining() {
    stop_.store(true);
    if (drainer_.joinable()) drainer_.join();
  }

  bool quiet_;
  bool symbolize_;
  bool measure_cost_ = false;
  uint64_t drain_cpu_ns_ = 0;  // the draining thread's CPU time
  uint64_t duration_ns_;
  std::string dir_;
  std::string file_;
  std::unique_ptr<ebpf::CpuRecorder> recorder_;
  std::unique_ptr<ebpf::CpuProfile> profile_;
  std::chrono::steady_clock::time_point started_;
  std::atomic<bool> stop_{false};
  std::thread drainer_;
};

}  // namespace

std::unique_ptr<CpuRecording> CpuRecording::Start(const RecordOptions& options,
                                                  const std::string& dir) {
  if (!WantsCpuRecording(options)) return nullptr;
  auto recording = std::make_unique<EbpfCpuRecording>(options, dir);
  Status started = recording->Begin(options);
  if (!started.ok()) {
    std::fprintf(stderr, "gpuperf: %s; %s\n", started.message().c_str(),
                 options.command.empty() ? "nothing recorded" : "recording the GPU only");
    return nullptr;
  }
  return recording;
}

#else

std::unique_ptr<CpuRecording> CpuRecording::Start(const RecordOptions& options,
                                                  const std::string&) {
  if (!WantsCpuRecording(options)) return nullptr;
  std::fprintf(stderr,
               "gpuperf: this gpuperf was built without its eBPF CPU profiler (it needs libbpf, "
               "bpftool and clang at build time); %s\n",
               options.command.empty() ? "nothing recorded" : "recording the GPU only");
  return nullptr;
}

#endif

}  // namespace gpuperf::cli
