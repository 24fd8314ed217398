// CPU samples and off-CPU time of a trace (`gpuperf record --cpu/--off-cpu`), joined with
// its CUDA calls: an on-CPU sample taken, or an off-CPU interval spent, inside a CUDA call
// that waits for the GPU (cudaStreamSynchronize, cudaDeviceSynchronize,
// cudaEventSynchronize, synchronous copies, their driver twins) is a GPU wait. Found by
// thread and time against the trace's API and synchronization records, or, where the
// trace has none (a CPU-only recording, a call gpuperf did not trace), by a frame of the
// stack that names such a call (IsGpuSyncFunction). Spinning on-CPU samples and blocked
// off-CPU intervals are told apart by their kind.
//
// Fed while a trace streams (strings arrive before the records that use them); Finish
// returns the weights added up per (process, thread, stack, kind, reason, GPU wait).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf {

enum class CpuTimeKind : uint8_t { kOnCpu, kOffCpu };

struct CpuTimeEntry {
  uint32_t pid = 0;
  uint32_t tid = 0;
  StackId stack = 0;
  CpuTimeKind kind = CpuTimeKind::kOnCpu;
  OffCpuReason reason = OffCpuReason::kOther;  // off-CPU only
  bool gpu_wait = false;  // inside a CUDA call that waits for the GPU (by thread and time)
  uint64_t ns = 0;
  uint64_t count = 0;  // samples, or off-CPU intervals
};

// Whether a function (or API) name is one of the CUDA calls that wait for the GPU.
bool IsGpuSyncFunction(std::string_view name);

class CpuTimeCollector {
 public:
  // `strings` is the trace's string table as it grows (the sink's).
  explicit CpuTimeCollector(const std::vector<std::string>& strings) : strings_(strings) {}

  void AddApis(std::span<const ApiRecord> records);
  void AddSyncs(std::span<const SyncRecord> records);
  void AddSamples(std::span<const CpuSampleRecord> records);
  void AddOffCpu(std::span<const OffCpuRecord> records);

  bool empty() const { return samples_.empty() && off_cpu_.empty(); }

  // The weights per (pid, tid, stack, kind, reason, gpu_wait), in that order.
  std::vector<CpuTimeEntry> Finish();

 private:
  struct Window {
    uint64_t start, end;
  };
  bool IsSyncApi(StringId name);
  std::vector<Window>& WindowsOf(uint32_t pid, uint32_t tid);
  // Time of [start, end) inside the thread's waits (sorted, merged).
  static uint64_t Inside(const std::vector<Window>& windows, uint64_t start, uint64_t end);

  const std::vector<std::string>& strings_;
  std::vector<int8_t> sync_api_;  // by StringId: -1 unknown, 0 no, 1 yes
  std::unordered_map<uint64_t, std::vector<Window>> windows_;  // (pid << 32 | tid)
  std::vector<CpuSampleRecord> samples_;
  std::vector<OffCpuRecord> off_cpu_;
};

}  // namespace gpuperf
