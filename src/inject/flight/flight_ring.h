// The flight recorder's memory (docs/flight-recorder.md): instead of a file, the writer
// thread feeds this TraceWriter. It keeps two kinds of records:
//
//   - definitions, kept for the life of the process and repeated in every dump: strings,
//     stacks, Python code objects, symbols, and the process, thread, device, context,
//     module, clock and stat records (the last of each where only the latest matters);
//   - timed records (kernels, copies, API calls, launch links, ...), kept for the window
//     plus a grace period in a ring of segments. The open segment holds plain records; a
//     full or old one is sealed into trace chunks (encoded and compressed with zstd as a
//     trace file's are), which makes a kernel record about 16 bytes instead of 100.
//
// Past the memory cap the oldest segment goes first; the records of the window it held
// are counted (EvictedSince). Dump writes a complete trace of the window: every
// definition, then the records whose time reaches into [now - window, now] (the chunks of
// segments wholly inside it as they are), plus the API calls, launch links and external
// correlations of the GPU work kept, even when the call came just before the window.
//
// Not thread-safe: the writer thread alone feeds it and dumps it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/status.h"
#include "gpuperf/trace_writer.h"
#include "inject/record_batch.h"

namespace gpuperf::inject {

struct FlightRingOptions {
  uint64_t window_ns = 60'000'000'000ull;
  // Cap on everything the ring holds (segments and definitions). Definitions are never
  // evicted; segments are, oldest first.
  uint64_t memory_cap_bytes = 256ull << 20;
  // Timed records stay this long past the window, so that the launch of GPU work that ran
  // inside the window is still there when the call came a little before it.
  uint64_t grace_ns = 2'000'000'000ull;
  // A segment is sealed once it is this old or holds this many bytes of plain records
  // (0: derived from the window and the cap, see FlightRing's constructor).
  uint64_t segment_ns = 0;
  uint64_t segment_bytes = 0;
};

struct FlightDumpResult {
  uint64_t window_start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t records_written = 0;  // timed records of the window
  uint64_t bytes_written = 0;
};

class FlightRing final : public TraceWriter {
 public:
  using Clock = std::function<uint64_t()>;  // CLOCK_MONOTONIC ns, replaceable in tests
  FlightRing(FlightRingOptions options, Clock clock);
  ~FlightRing() override;

  StringId InternString(std::string_view text) override;  // unused by the recorder
  void AddString(StringId id, std::string_view text) override;
  void AddStack(const StackRecord& stack) override;
  void AddSymbol(const SymbolRecord& symbol) override;
  void AddPythonCode(const PythonCodeRecord& code) override;
  // Never sent: the configuration turns PC sampling off under the flight recorder.
  void AddPcSample(const PcSampleRecord&) override {}
  void AddCubin(const CubinRecord&) override {}
  void AddSassLine(const SassLineRecord&) override {}
#define GPUPERF_FLIGHT_ADD(Type, name, plural, number) \
  void Add(const Type##Record& record) override;
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_FLIGHT_ADD)
#undef GPUPERF_FLIGHT_ADD
  // Records in a framed chunk are taken one by one (the recorder never sends any).
  void AddChunk(std::string_view chunk) override;
  // Seals the open segment when it is due, lets old segments go and keeps the cap.
  Status Flush() override;
  Status Close() override {
    return Flush();
  }
  const TraceWriterStats& stats() const override {
    return stats_;
  }

  // Writes the window that ends at `now_ns` as a complete trace to `path` (created or
  // replaced). `stat_overrides` replace the kept stat of the same id (a zero value leaves
  // the stat out). The process record is written with start = max(its start, window start)
  // and end = `now_ns`: the trace covers the window, and it is complete.
  Result<FlightDumpResult> Dump(const std::string& path, uint64_t now_ns,
                                std::span<const StatRecord> stat_overrides);

  // Records that the cap evicted while they were inside a window that reaches back to
  // `cutoff_ns` (an estimate only for segments that straddled the window's start when
  // they were evicted: those are decoded and counted exactly against that start).
  uint64_t EvictedSince(uint64_t cutoff_ns) const;

  uint64_t bytes() const;
  uint64_t peak_bytes() const {
    return peak_bytes_;
  }
  size_t sealed_segments() const {
    return segments_.size();
  }

 private:
  struct Segment {
    // One trace chunk per record type (format::FrameChunk): a dump writes the chunks of a
    // segment wholly inside its window as they are.
    std::string chunks;
    uint64_t records = 0;
    uint64_t oldest_ns = UINT64_MAX;  // record times (untimed records count at sealing)
    uint64_t newest_ns = 0;
    // The correlation ids of its GPU work, lowest and highest: a dump looks for the work of
    // calls made just before its window only in segments whose range can hold it.
    uint32_t min_work_id = UINT32_MAX;
    uint32_t max_work_id = 0;
  };
  struct Eviction {
    uint64_t newest_ns;
    uint64_t records_in_window;
  };

  template <class T>
  void Take(const T& record, std::vector<T>& open);
  template <class T>
  void Keep(const T& record, std::vector<T>& open);
  void Define(const ProcessRecord& record);
  void Define(const ThreadRecord& record);
  void Define(const DeviceRecord& record);
  void Define(const ContextRecord& record);
  void Define(const ModuleRecord& record);
  void Define(const ClockRecord& record);
  void Define(const StatRecord& record);
  void Define(const RankRecord& record);
  void Define(const NcclCommRecord& record);
  void NoteOpenTime(uint64_t time_ns);
  void Seal(uint64_t now_ns);
  void AgeAndCap(uint64_t now_ns);
  void Evict(uint64_t now_ns);
  void UpdatePeak();
  // Decodes a sealed segment into `out`; false if it cannot be read back (cannot happen
  // unless memory was damaged: the segment is then skipped).
  bool Decode(const Segment& segment, RecordBatch& out) const;
  uint64_t CountFrom(const Segment& segment, uint64_t cutoff_ns) const;
  void GrowIdentity() const;

  FlightRingOptions options_;
  Clock clock_;
  TraceWriterStats stats_;
  void* cctx_ = nullptr;  // ZSTD_CCtx
  void* dctx_ = nullptr;  // ZSTD_DCtx

  // Definitions.
  std::vector<std::pair<StringId, std::string>> strings_;
  std::vector<StackRecord> stacks_;
  std::vector<PythonCodeRecord> python_codes_;
  std::vector<SymbolRecord> symbols_;
  std::map<uint32_t, ProcessRecord> processes_;
  std::map<std::pair<uint32_t, uint32_t>, ThreadRecord> threads_;
  std::vector<DeviceRecord> devices_;
  std::vector<ContextRecord> contexts_;
  std::vector<ModuleRecord> modules_;
  std::map<uint32_t, ClockRecord> clocks_;
  std::map<uint32_t, RankRecord> ranks_;
  std::vector<NcclCommRecord> nccl_comms_;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> stat_values_;
  uint64_t definition_bytes_ = 0;
  StringId max_string_id_ = 0;
  StackId max_stack_id_ = 0;
  mutable std::vector<uint32_t> identity_;  // id -> id, for decoding without remapping

  // Timed records.
  RecordBatch open_;
  uint64_t open_started_ns_ = 0;
  uint64_t open_records_ = 0;
  uint64_t open_bytes_ = 0;  // plain record bytes, counted as they come
  uint64_t open_oldest_ns_ = UINT64_MAX;
  uint64_t open_newest_ns_ = 0;
  bool open_untimed_ = false;
  uint32_t open_min_work_id_ = UINT32_MAX;
  uint32_t open_max_work_id_ = 0;
  std::deque<Segment> segments_;
  uint64_t segment_bytes_ = 0;
  std::deque<Eviction> evictions_;
  uint64_t peak_bytes_ = 0;
  std::string scratch_;  // one record list, encoded
};

}  // namespace gpuperf::inject
