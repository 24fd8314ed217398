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

// What a GPU stream track holds.
enum class GpuWork : uint8_t { kKernels, kMemcpy, kMemset };

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
  GpuWork work = GpuWork::kKernels;        // GPU streams only
  // GPU, GPU stream and counter tracks: their process ("rank 1", "pid 123") when the
  // trace has several, for formats that list GPU tracks apart from the processes.
  std::string scope;
};

struct TimelineArg {
  enum class Type : uint8_t { kUint, kDouble, kString, kInternedString, kDim3 };
  // What the argument describes, for formats that have a place of their own for it
  // (Perfetto's compute kernels); the others show every role alike.
  enum class Role : uint8_t {
    kPlain,
    kGrid,            // a kernel's grid (kDim3)
    kBlock,           // a kernel's block (kDim3)
    kKernelProperty,  // the same for every launch of one compiled kernel (registers)
  };
  InternedText key;
  Type type = Type::kUint;
  Role role = Role::kPlain;
  uint64_t uint_value = 0;
  double double_value = 0;
  InternedText string_value;     // kString: text only; kInternedString: key and text
  uint32_t dims[3] = {0, 0, 0};  // kDim3: x, y, z
};

// One frame of a launch stack: as a stack listing shows it ("function (file.py:87)", or
// "..." where frames were left out) and in its parts.
struct TimelineFrame {
  InternedText text;
  InternedText function;
  InternedText file;  // the file's base name; key 0 when unknown
  uint32_t line = 0;
};

// A launch stack as drawn on an API slice. `key` identifies it: equal keys, equal frames.
struct TimelineStack {
  NameKey key = 0;
  std::span<const TimelineFrame> frames;  // innermost first
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
  // GPU work: the kernel's symbol as recorded (mangled), when it differs from `name`.
  InternedText symbol;
  // The launch stack of an API slice; both formats store stacks in tables of their own.
  const TimelineStack* stack = nullptr;
};

// A pair of readings of the trace's clock (CLOCK_MONOTONIC) and of wall-clock time taken
// together; zero when the trace has none.
struct TimelineClock {
  uint64_t monotonic_ns = 0;
  uint64_t realtime_ns = 0;
};

// What a timeline says about itself; formats with trace-level metadata store it there
// (the timeline also shows each as a marker on a track of its own).
struct TimelineNotes {
  std::string_view data_loss;  // DataLossSummary::line; empty when nothing was lost
  std::string_view window;     // DescribeWindow; empty when the whole trace is drawn
};

class TimelineWriter {
 public:
  virtual ~TimelineWriter() = default;
  virtual void Begin(const TimelineClock& clock, const TimelineNotes& notes) = 0;
  virtual void DefineTrack(const TimelineTrack& track) = 0;
  virtual void Slice(const TimelineSlice& slice) = 0;
  virtual void Instant(uint32_t track, uint64_t ts_ns, InternedText name,
                       InternedText category) = 0;
  virtual void Counter(uint32_t track, uint64_t ts_ns, double value) = 0;
  // Flushes what is buffered; reports an output error if one happened.
  virtual Status Finish() = 0;
};

}  // namespace gpuperf
