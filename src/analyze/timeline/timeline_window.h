// A window of a timeline: the part of a trace a timeline draws when the whole would be
// too large to open. Asked for in time (`--from`/`--to`, from the trace's first
// timestamp, as `gpuperf report` counts), in steps the program marked (`--steps A:B`)
// or as a cap on kernels (`--max-kernels N`), and resolved against the trace by a first
// look at it (WindowScan) into one interval of time: the events that start in it are
// drawn, the others are left out and counted.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/join/trace_origin.h"
#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

struct TimelineWindowRequest {
  std::optional<uint64_t> from_ns;  // since the trace's first timestamp
  std::optional<uint64_t> to_ns;
  std::optional<std::pair<int64_t, int64_t>> steps;  // the first and the last step drawn
  uint64_t max_kernels = 0;                          // 0: no cap
  bool any() const { return from_ns || to_ns || steps || max_kernels; }
};

struct TimelineWindow {
  static constexpr uint64_t kEnd = std::numeric_limits<uint64_t>::max();
  bool active = false;
  uint64_t begin_ns = 0;  // absolute, on the trace's clock
  uint64_t end_ns = kEnd;
  uint64_t origin_ns = 0;  // the trace's first timestamp
  std::string what;        // "steps 3 to 5, the first 1,000 kernels"; empty for a time range

  bool Contains(uint64_t ns) const { return !active || (ns >= begin_ns && ns < end_ns); }
};

// Events of each kind a timeline draws, or leaves out of its window.
struct TimelineEventCounts {
  uint64_t api_calls = 0;
  uint64_t kernels = 0;
  uint64_t copies = 0;
  uint64_t sets = 0;
  uint64_t nvtx = 0;  // ranges and marks
};

// "steps 3 to 5 (1.20 s to 1.85 s after the start): left out 5,678 kernels, 12 copies,
// 0 sets, 5,700 API calls, 40 NVTX ranges and marks".
std::string DescribeWindow(const TimelineWindow& window, const TimelineEventCounts& left_out);

// Whether an NVTX range name marks a program step, and its number if it carries one:
// "ProfilerStep#12" (PyTorch's profiler), "step 3", "train_step", "Iteration 7".
// Its last word is "step" or "iteration", maybe followed by a number.
struct StepName {
  bool is_step = false;
  std::optional<int64_t> number;
};
StepName ParseStepName(std::string_view name);

// Pass zero of a windowed timeline: the trace's first timestamp, its step ranges and,
// for a kernel cap, kernel start times.
class WindowScan final : public RecordSink {
 public:
  explicit WindowScan(const TimelineWindowRequest& request);
  // The record types it reads (records.h numbers), for ReadTraceChunks.
  static std::span<const uint16_t> ChunkTypes();

  void OnString(StringId id, std::string_view text) override;
  void OnProcess(std::span<const ProcessRecord> records) override;
  void OnApi(std::span<const ApiRecord> records) override;
  void OnKernel(std::span<const KernelRecord> records) override;
  void OnMemcpy(std::span<const MemcpyRecord> records) override;
  void OnMemset(std::span<const MemsetRecord> records) override;
  void OnSync(std::span<const SyncRecord> records) override;
  void OnNvtx(std::span<const NvtxRecord> records) override;

  // The window, or why the request cannot be met (no step ranges, no such steps).
  Result<TimelineWindow> Resolve();

 private:
  struct Step {
    uint64_t start_ns, end_ns;
    uint32_t pid, tid;
    std::optional<int64_t> number;
  };
  // The time window before the kernel cap: [begin, end) in absolute time.
  Result<std::pair<uint64_t, uint64_t>> TimeWindow(std::string& what);
  // "1 to 12": the numbers the trace's steps have (once numbered).
  std::string StepNumbers() const;
  // The start of the (cap + 1)-th kernel in [begin, end), or `end` when fewer start there.
  uint64_t CapEnd(uint64_t begin, uint64_t end);

  TimelineWindowRequest request_;
  TraceOrigin origin_;
  std::vector<std::string> strings_;
  std::vector<Step> steps_;
  std::vector<uint64_t> kernel_starts_;
};

}  // namespace gpuperf
