// The format-neutral timeline that the Perfetto and Chrome JSON exporters draw: tracks,
// slices with arguments and flows, instants and counter values. TimelineBuilder turns
// trace records into these calls; each format (src/export/) implements TimelineWriter.
//
// Every name, category and argument key arrives with a dense key (NameKey) next to its
// text, so a writer can intern by key without hashing strings millions of times.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gpuperf/status.h"

namespace gpuperf {

// Dense id of a distinct text (event name, category, argument key or interned value).
using NameKey = uint32_t;

struct InternedText {
  NameKey key = 0;
  std::string_view text;
};

enum class TrackKind : uint8_t {
  kProcess,    // a recorded process: groups its threads
  kThread,     // API calls of one thread (lane 0 is the thread itself)
  kNvtx,       // NVTX ranges of one thread
  kGpu,        // one GPU of one process: groups its streams and counters
  kGpuStream,  // kernels, copies or sets of one stream
  kCounter,    // a value over time, under a GPU
  kNote,       // top level, above the processes: gpuperf's own notes (data loss)
};

enum class CounterUnit : uint8_t { kBytes, kPercent };

// A track, announced once before its first event. Ids are dense, starting at 1.
struct TimelineTrack {
  uint32_t id = 0;
  uint32_t parent_id = 0;  // 0: top level
  TrackKind kind = TrackKind::kThread;
  uint32_t pid = 0;
  uint32_t tid = 0;   // threads; the stream id for GPU streams
  uint32_t lane = 0;  // >0: an extra lane that holds slices overlapping lane 0's
  uint32_t device = 0;
  int32_t sort_rank = 0;  // order among siblings (and of processes/GPUs at top level)
  std::string name;
  CounterUnit unit = CounterUnit::kBytes;  // counters only
};

struct TimelineArg {
  enum class Type : uint8_t { kUint, kDouble, kString, kInternedString };
  InternedText key;
  Type type = Type::kUint;
  uint64_t uint_value = 0;
  double double_value = 0;
  InternedText string_value;  // kString: text only; kInternedString: key and text
};

struct TimelineSlice {
  uint32_t track = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  InternedText name;
  InternedText category;
  std::span<const TimelineArg> args;
  std::span<const uint64_t> flows_out;  // arrows that start here (launch -> GPU work)
  uint64_t flow_in = 0;                 // the arrow that ends here; 0: none
  // The launch stack: an interned string argument, innermost frame first, one frame per
  // line. Kept apart from `args` because JSON stores stacks in its own table.
  const TimelineArg* stack = nullptr;
};

// A pair of readings of the trace's clock (CLOCK_MONOTONIC) and of wall-clock time taken
// together; zero when the trace has none.
struct TimelineClock {
  uint64_t monotonic_ns = 0;
  uint64_t realtime_ns = 0;
};

class TimelineWriter {
 public:
  virtual ~TimelineWriter() = default;
  // `data_loss`: DataLossSummary::line, empty when nothing was lost; formats with
  // trace-level metadata store it there.
  virtual void Begin(const TimelineClock& clock, std::string_view data_loss) = 0;
  virtual void DefineTrack(const TimelineTrack& track) = 0;
  virtual void Slice(const TimelineSlice& slice) = 0;
  virtual void Instant(uint32_t track, uint64_t ts_ns, InternedText name,
                       InternedText category) = 0;
  virtual void Counter(uint32_t track, uint64_t ts_ns, double value) = 0;
  // Flushes what is buffered; reports an output error if one happened.
  virtual Status Finish() = 0;
};

}  // namespace gpuperf
