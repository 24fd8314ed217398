// The first of the two passes of the timeline analysis: one cheap read of the trace that
// learns what the second pass needs before it meets the records that use it.
//
// - which (pid, correlation id) pairs have both a launch API call and GPU work, so that
//   every flow arrow written has both ends, and how many GPU activities each launch
//   produced (a graph launch produces many);
// - the launch stack of every correlation id (LaunchLinkRecord), so the API slice can
//   carry it even when the link is read after the API record;
// - names: strings, processes, threads, devices; symbols for the launch stacks;
// - per GPU, how busy it was in each time bucket.
//
// Memory stays bounded by the trace's shape, not its length: four bytes per correlation
// id, each distinct stack, and one counter per busy-% bucket.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyze/join/correlation_table.h"
#include "analyze/join/data_loss.h"
#include "analyze/symbols/symbol_table.h"
#include "analyze/timeline/timeline_window.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

struct TimelineOptions {
  // Innermost frames of the launch stack shown on an API slice (and, when the stack has
  // Python frames further out, as many of its innermost Python frames).
  uint32_t stack_frames = 8;
  StackDisplayOptions display;
  // Width of the GPU busy-% buckets; widened when a long trace would need too many.
  uint64_t busy_bucket_ns = 1'000'000;
  // Only part of the trace (timeline_window.h); an extra first look at the trace finds it.
  TimelineWindowRequest window;
  // Called once pass one has counted what the timeline will draw, before anything is
  // drawn (to say how large the output will be).
  std::function<void(const TimelineEventCounts& drawn)> on_counted;
};

// At most this many flow arrows leave one launch (graph launches run many kernels).
inline constexpr uint32_t kMaxFlowsPerLaunch = 15;

// What pass one learned about one (process, correlation id), kept in the shared
// CorrelationTable: four bytes per id.
struct CorrelationSlot {
  uint32_t stack_id : 22;       // launch stack; 0 when unknown or beyond 2^22
  uint32_t has_launch_api : 1;  // an ApiRecord with this correlation id exists
  uint32_t gpu_total : 4;       // GPU activities with this id, saturating at 15
  uint32_t gpu_seen : 4;        // pass two: activities already written
  uint32_t unused : 1;
};
static_assert(sizeof(CorrelationSlot) == 4);

// Time during which at least one kernel ran, per fixed-width bucket. Kernels are merged
// against a running frontier, exact when they arrive in start order (the scan sorts each
// batch); the bucket width doubles whenever the trace would need more than kMaxBuckets.
class BusyHistogram {
 public:
  explicit BusyHistogram(uint64_t bucket_ns) : bucket_ns_(bucket_ns) {}
  void AddInterval(uint64_t start_ns, uint64_t end_ns);
  uint64_t bucket_ns() const { return bucket_ns_; }
  uint64_t origin_ns() const { return origin_ns_; }
  const std::vector<uint64_t>& busy_ns() const { return busy_ns_; }

 private:
  static constexpr size_t kMaxBuckets = 1 << 20;
  void AddCovered(uint64_t start_ns, uint64_t end_ns);
  void Widen();

  uint64_t bucket_ns_;
  uint64_t origin_ns_ = 0;
  uint64_t frontier_ns_ = 0;
  std::vector<uint64_t> busy_ns_;
};

struct ScannedProcess {
  uint32_t index = 0;  // dense, in order of first sight
  StringId command = 0;
  StringId hostname = 0;
  int32_t rank = -1;  // from its RankRecord; -1: not a rank of a distributed job
};

struct ScannedDevice {
  StringId name = 0;
  std::unique_ptr<BusyHistogram> busy;
};

struct TimelineIndex {
  std::vector<std::string> strings{std::string()};
  std::unordered_map<uint32_t, ScannedProcess> processes;          // by pid
  std::vector<uint32_t> pids;                                      // by process index
  std::map<std::pair<uint32_t, uint32_t>, StringId> thread_names;  // (pid, tid)
  std::map<std::pair<uint32_t, uint32_t>, ScannedDevice> devices;  // (pid, device)
  std::unordered_map<StackId, StackRecord> stacks;
  std::unique_ptr<SymbolTable> symbols;
  // By (pid, correlation id), in pages of 64 Ki slots (256 KiB).
  CorrelationTable<CorrelationSlot, 16> correlations;
  uint64_t first_clock_monotonic_ns = 0;
  uint64_t first_clock_realtime_ns = 0;
  RecordingLossCollector recording_loss;
  // What the timeline draws: all, or its window (then pass one counts only what lies in
  // it, and what it leaves out).
  TimelineWindow window;
  TimelineEventCounts drawn;
  TimelineEventCounts left_out;

  std::string_view str(StringId id) const {
    return id < strings.size() ? std::string_view(strings[id]) : std::string_view();
  }
  // Dense index of a pid; assigns the next one on first sight.
  uint32_t ProcessIndex(uint32_t pid);
  // Where a process's tracks sort: ranks in rank order, then the other processes in the
  // order of first sight.
  uint32_t ProcessOrder(uint32_t pid);
  int32_t max_rank = -1;

 private:
  uint32_t last_pid_ = 0;  // ProcessIndex's last answer
  uint32_t last_process_index_ = 0;
};

// Pass one, as a RecordSink. Feed it every record (ReadTrace or ReplayTrace), then take
// the index.
class TimelineScan final : public RecordSink {
 public:
  TimelineScan(const TimelineOptions& options, const TimelineWindow& window = {});
  TimelineIndex& index() { return *index_; }
  std::unique_ptr<TimelineIndex> TakeIndex() { return std::move(index_); }

  void OnString(StringId id, std::string_view text) override;
  void OnStack(const StackRecord& stack) override;
  void OnSymbol(const SymbolRecord& symbol) override;
  void OnPythonCode(const PythonCodeRecord& code) override;
  void OnProcess(std::span<const ProcessRecord> records) override;
  void OnThread(std::span<const ThreadRecord> records) override;
  void OnDevice(std::span<const DeviceRecord> records) override;
  void OnModule(std::span<const ModuleRecord> records) override;
  void OnApi(std::span<const ApiRecord> records) override;
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override;
  void OnKernel(std::span<const KernelRecord> records) override;
  void OnMemcpy(std::span<const MemcpyRecord> records) override;
  void OnMemset(std::span<const MemsetRecord> records) override;
  void OnClock(std::span<const ClockRecord> records) override;
  void OnStat(std::span<const StatRecord> records) override;
  void OnRank(std::span<const RankRecord> records) override;
  void OnNvtx(std::span<const NvtxRecord> records) override;

 private:
  // Counts a GPU activity where it is drawn; true when it is.
  bool CountGpuActivity(uint32_t pid, uint32_t correlation_id, uint64_t start_ns);
  ScannedDevice& Device(uint32_t pid, uint32_t device);

  TimelineOptions options_;
  std::unique_ptr<TimelineIndex> index_;
  std::vector<uint32_t> order_;  // scratch
  std::vector<std::pair<uint64_t, uint64_t>> intervals_;
};

}  // namespace gpuperf
