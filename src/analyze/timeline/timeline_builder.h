// The second pass of the timeline analysis: turns trace records into TimelineWriter calls.
//
// Tracks are made on first use. Slices that would partially overlap on one track go to
// an extra lane of it ("worker-0 (lane 2)"): both viewers demand strictly nested slices
// per track, and a lane holds only slices that follow each other, so it is valid whatever
// the input. Each batch is sorted by start time first, so a runtime call and the driver
// call nested in it land on lanes 1 and 2 of their thread.
//
// Flow arrows join a launch API call to its GPU work only where pass one saw both ends.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyze/timeline/timeline_events.h"
#include "analyze/timeline/timeline_scan.h"
#include "base/demangle.h"

namespace gpuperf {

struct TimelineStats {
  uint64_t slices = 0;
  uint64_t flows = 0;  // arrows, each with both ends
  uint64_t instants = 0;
  uint64_t counter_values = 0;
  uint32_t tracks = 0;
  uint32_t extra_lanes = 0;        // lanes made for overlapping slices
  uint64_t unfinished_ranges = 0;  // NVTX ranges that never ended: not drawn
  // A window: what it drew and left out, and DescribeWindow's line; empty without one.
  TimelineEventCounts drawn;
  TimelineEventCounts left_out;
  std::string window;
};

// Dense keys for the texts a timeline uses; a trace's StringIds map to their display
// (demangled) text once.
class TimelineNames {
 public:
  InternedText Intern(std::string_view text);
  InternedText ForString(StringId id, const TimelineIndex& index);
  // The text of `id` as recorded when demangling changes it (a kernel's symbol); key 0
  // otherwise.
  InternedText SymbolFor(StringId id, const TimelineIndex& index);

 private:
  std::deque<std::string> texts_;  // a deque keeps the views stable
  std::unordered_map<std::string_view, NameKey> keys_;
  std::vector<NameKey> by_string_id_;
  std::vector<NameKey> symbol_by_string_id_;  // 0: the same as the display text
};

class TimelineBuilder final : public RecordSink {
 public:
  // Each of `notes` goes to the writer's metadata and, when set, to a marker on a track
  // of its own: data loss at the trace's start, a window at its beginning.
  TimelineBuilder(TimelineIndex& index, const TimelineOptions& options, TimelineWriter& writer,
                  const TimelineNotes& notes = {});

  void OnApi(std::span<const ApiRecord> records) override;
  void OnKernel(std::span<const KernelRecord> records) override;
  void OnMemcpy(std::span<const MemcpyRecord> records) override;
  void OnMemset(std::span<const MemsetRecord> records) override;
  void OnNvtx(std::span<const NvtxRecord> records) override;
  void OnMemory(std::span<const MemoryRecord> records) override;

  // Writes what only the whole trace determines (GPU busy %) and finishes the writer.
  Status Finish();
  const TimelineStats& stats() const { return stats_; }

 private:
  enum class LaneKind : uint8_t { kApi, kNvtx, kKernels, kMemcpy, kMemset };
  struct LaneGroupKey {
    LaneKind kind;
    uint32_t pid;
    uint32_t a;  // tid, or device
    uint32_t b;  // stream
    auto operator<=>(const LaneGroupKey&) const = default;
  };
  struct Lane {
    uint64_t last_end_ns;
    uint32_t track;
  };

  uint32_t NewTrack(TimelineTrack track);
  // A marker named "gpuperf: TITLE — TEXT" at `ns` on a track of its own above the others.
  void Note(std::string_view title, std::string_view text, uint64_t ns, int32_t sort_rank);
  uint32_t ProcessTrack(uint32_t pid);
  uint32_t ThreadTrack(uint32_t pid, uint32_t tid);
  uint32_t GpuTrack(uint32_t pid, uint32_t device);
  uint32_t CounterTrack(uint32_t pid, uint32_t device, CounterUnit unit);
  std::string ThreadName(uint32_t pid, uint32_t tid) const;
  std::string GpuName(uint32_t pid, uint32_t device) const;
  // "rank 1" or "pid 123" when the trace has several processes, else empty.
  std::string ProcessScope(uint32_t pid) const;
  std::string RankTrackName(uint32_t pid) const;
  // The lane of a group where [start, end) fits after every slice already there.
  uint32_t PlaceSlice(const LaneGroupKey& key, uint64_t start_ns, uint64_t end_ns);
  uint32_t NewLaneTrack(const LaneGroupKey& key, uint32_t lane);

  CorrelationSlot* Slot(uint32_t pid, uint32_t correlation_id);
  uint64_t FlowIn(uint32_t pid, uint32_t correlation_id);
  // The launch stack drawn on API slices of `tid` whose launch recorded `stack_id`;
  // nullptr when the stack is unknown or shows no frame.
  const TimelineStack* LaunchStack(StackId stack_id, uint32_t tid);
  void EmitGpuSlice(const LaneGroupKey& key, uint64_t start_ns, uint64_t end_ns, InternedText name,
                    InternedText category, uint64_t flow_in, InternedText symbol = {});

  TimelineIndex& index_;
  TimelineOptions options_;
  TimelineWriter& writer_;
  TimelineStats stats_;
  TimelineNames names_;
  uint32_t next_track_ = 1;

  std::unordered_map<uint32_t, uint32_t> process_tracks_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> thread_tracks_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> gpu_tracks_;
  std::map<std::tuple<uint32_t, uint32_t, CounterUnit>, uint32_t> counter_tracks_;
  std::map<LaneGroupKey, std::vector<Lane>> lanes_;
  LaneGroupKey last_lane_key_{};
  std::vector<Lane>* last_lanes_ = nullptr;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> memory_in_use_;
  struct StoredStack {
    TimelineStack stack;
    std::vector<TimelineFrame> frames;
  };
  std::deque<StoredStack> stored_stacks_;  // a deque keeps the stacks where they are
  std::unordered_map<NameKey, const TimelineStack*> stacks_by_label_;
  std::unordered_map<uint64_t, const TimelineStack*> launch_stacks_;  // (stack << 32 | tid)

  // Scratch reused across batches.
  std::vector<uint32_t> order_;
  std::vector<TimelineArg> args_;
  std::vector<uint64_t> flows_;
  std::vector<Frame> frames_;

  // Texts used on every event, interned once.
  InternedText cat_runtime_, cat_driver_, cat_api_, cat_kernel_, cat_memcpy_, cat_memset_,
      cat_nvtx_;
  InternedText key_correlation_, key_return_code_, key_grid_, key_block_, key_registers_,
      key_static_shared_, key_dynamic_shared_, key_bytes_, key_bandwidth_, key_src_kind_,
      key_dst_kind_, key_memory_kind_, key_graph_id_, key_domain_;
};

// Feeds the records of a trace to `sink`: every record, or, when `chunk_types` is not
// empty, only records of those types (record type numbers of gpuperf/records.h; a reader
// may give more).
using TimelineRead = std::function<Status(RecordSink& sink, std::span<const uint16_t> chunk_types)>;

// The whole timeline analysis: pass one (TimelineScan) reads everything, then pass two
// (TimelineBuilder) reads the records it draws, drawing on `writer`. `read_report`, when
// given, is what pass one's reading found: with the recorders' loss counters it makes
// the data-loss marker.
Status BuildTimeline(const TimelineRead& read, const TimelineOptions& options,
                     TimelineWriter& writer, TimelineStats* stats = nullptr,
                     const ReadReport* read_report = nullptr);

}  // namespace gpuperf
