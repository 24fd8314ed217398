#include "export/perfetto_writer.h"

#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "export/perfetto_bundles.h"
#include "export/perfetto_fields.h"
#include "export/protobuf_writer.h"

namespace gpuperf {
namespace {

namespace pf = perfetto_fields;

// Sequence 1 holds the trace-wide clock snapshot and the track descriptors; each track
// with events gets a sequence of its own from 2 on.
constexpr uint32_t kGlobalSequence = 1;

// Interned-text kinds: each has its own iid space in InternedData, and a sequence sends
// each (kind, text) once.
namespace intern {
enum Kind : uint16_t {
  kCategory = 1 << 0,
  kEventName = 1 << 1,
  kAnnotationName = 1 << 2,
  kAnnotationValue = 1 << 3,
  kFunctionName = 1 << 4,
  kSourcePath = 1 << 5,
  kFrame = 1 << 6,
  kCallstack = 1 << 7,
};
}  // namespace intern

// GpuRenderStageSpecification iids: one stage per kind of GPU work, then one hardware
// queue per GPU stream track (its track id past the stages).
constexpr uint32_t kStageKernel = 1;
constexpr uint32_t kStageMemcpy = 2;
constexpr uint32_t kStageMemset = 3;
constexpr uint32_t kFirstQueueIid = 4;

// The one counter of a GPU counter track's sequence.
constexpr uint32_t kCounterDescriptorIid = 1;
constexpr uint32_t kCounterId = 1;

struct Sequence {
  uint32_t id = 0;
  uint64_t last_ns = 0;            // the incremental clock: the last timestamp sent
  std::vector<uint16_t> sent;      // intern::Kind bits, by NameKey
  std::vector<bool> kernels_sent;  // by compute kernel iid
  std::vector<bool> arg_names_sent;
  bool described = false;  // GPU queue, stage and context, or the counter's descriptor
};

struct Track {
  TimelineTrack definition;
  Sequence* sequence = nullptr;  // made on the first event
};

// A compute kernel as Perfetto describes it: its name, symbol and the properties all its
// launches share (registers, static shared memory).
struct KernelDescription {
  NameKey symbol = 0;
  std::vector<std::pair<NameKey, uint64_t>> properties;
  uint32_t iid = 0;
};

bool IsKernelProperty(const TimelineArg& arg) {
  return arg.role == TimelineArg::Role::kKernelProperty;
}

class PerfettoWriter final : public TimelineWriter {
 public:
  PerfettoWriter(std::ostream& out, const PerfettoOptions& options)
      : bundles_(out, options.compress) {
    buffer_.reserve(PerfettoBundles::kBundleBytes + (64 << 10));
  }

  // Perfetto has no trace-level note a viewer shows: the builder's note tracks say it.
  void Begin(const TimelineClock& clock, const TimelineNotes& /*notes*/) override {
    auto p = w_.BeginNested(pf::trace::kPacket);
    w_.Varint(pf::packet::kTrustedPacketSequenceId, kGlobalSequence);
    w_.Varint(pf::packet::kSequenceFlags, pf::packet::kSeqIncrementalStateCleared);
    auto snapshot = w_.BeginNested(pf::packet::kClockSnapshot);
    WriteClock(pf::clock::kBuiltinMonotonic, clock.monotonic_ns, false);
    if (clock.realtime_ns) WriteClock(pf::clock::kBuiltinRealtime, clock.realtime_ns, false);
    w_.Varint(pf::clock::kPrimaryTraceClock, pf::clock::kBuiltinMonotonic);
    w_.EndNested(snapshot);
    EndPacket(p);
  }

  void DefineTrack(const TimelineTrack& t) override {
    if (tracks_.size() <= t.id) tracks_.resize(t.id + 1);
    tracks_[t.id].definition = t;
    // GPU work and counters go on Perfetto's own GPU tracks, made from their events.
    if (t.kind == TrackKind::kGpu || t.kind == TrackKind::kGpuStream ||
        t.kind == TrackKind::kCounter) {
      return;
    }
    auto p = w_.BeginNested(pf::trace::kPacket);
    w_.Varint(pf::packet::kTrustedPacketSequenceId, kGlobalSequence);
    auto d = w_.BeginNested(pf::packet::kTrackDescriptor);
    w_.Varint(pf::track::kUuid, t.id);
    if (t.parent_id) w_.Varint(pf::track::kParentUuid, t.parent_id);
    if (t.kind == TrackKind::kProcess) {
      auto process = w_.BeginNested(pf::track::kProcess);
      w_.Varint(pf::track::kProcessPid, t.pid);
      w_.String(pf::track::kProcessName, t.name);
      w_.EndNested(process);
    } else if (t.kind == TrackKind::kThread && t.lane == 0) {
      auto thread = w_.BeginNested(pf::track::kThread);
      w_.Varint(pf::track::kThreadPid, t.pid);
      w_.Varint(pf::track::kThreadTid, t.tid);
      w_.String(pf::track::kThreadName, t.name);
      w_.EndNested(thread);
      w_.Varint(pf::track::kChildOrdering, pf::track::kChildOrderingExplicit);
    } else {
      w_.String(pf::track::kName, t.name);
      w_.Int(pf::track::kSiblingOrderRank, t.sort_rank);
    }
    w_.EndNested(d);
    EndPacket(p);
  }

  void Slice(const TimelineSlice& s) override {
    Track& track = tracks_[s.track];
    if (track.definition.kind == TrackKind::kGpuStream) {
      GpuSlice(track, s);
    } else {
      TrackEventSlice(track, s);
    }
  }

  void Instant(uint32_t track_id, uint64_t ts_ns, InternedText name,
               InternedText category) override {
    Track& track = tracks_[track_id];
    Sequence& q = SequenceOf(track, ts_ns);
    auto p = BeginPacket(q, ts_ns);
    InternText(q, name, intern::kEventName, pf::interned::kEventNames);
    InternText(q, category, intern::kCategory, pf::interned::kEventCategories);
    CloseInterned();
    auto e = w_.BeginNested(pf::packet::kTrackEvent);
    w_.Varint(pf::event::kType, pf::event::kTypeInstant);
    w_.Varint(pf::event::kNameIid, name.key);
    w_.Varint(pf::event::kCategoryIids, category.key);
    w_.EndNested(e);
    EndPacket(p);
  }

  void Counter(uint32_t track_id, uint64_t ts_ns, double value) override {
    Track& track = tracks_[track_id];
    const TimelineTrack& t = track.definition;
    Sequence& q = SequenceOf(track, ts_ns);
    auto p = BeginPacket(q, ts_ns);
    if (!q.described) {
      q.described = true;
      OpenInterned();
      auto entry = w_.BeginNested(pf::interned::kGpuCounterDescriptors);
      w_.Varint(pf::interned::kIid, kCounterDescriptorIid);
      auto descriptor = w_.BeginNested(pf::counter::kInternedDescriptor);
      auto spec = w_.BeginNested(pf::counter::kSpecs);
      w_.Varint(pf::counter::kCounterId, kCounterId);
      w_.String(pf::counter::kSpecName, ScopedName(t));
      w_.Varint(pf::counter::kSpecNumeratorUnits,
                t.unit == CounterUnit::kBytes ? pf::counter::kUnitByte : pf::counter::kUnitPercent);
      // A value holds from its timestamp until the next one.
      w_.Varint(pf::counter::kSpecValueDirection, pf::counter::kForwardsLooking);
      w_.EndNested(spec);
      w_.EndNested(descriptor);
      w_.Varint(pf::counter::kInternedGpuId, t.device);
      w_.EndNested(entry);
      CloseInterned();
    }
    auto e = w_.BeginNested(pf::packet::kGpuCounterEvent);
    w_.Varint(pf::counter::kDescriptorIid, kCounterDescriptorIid);
    auto counter = w_.BeginNested(pf::counter::kCounters);
    w_.Varint(pf::counter::kCounterId, kCounterId);
    if (t.unit == CounterUnit::kBytes) {
      w_.Int(pf::counter::kIntValue, static_cast<int64_t>(value));
    } else {
      w_.Double(pf::counter::kDoubleValue, value);
    }
    w_.EndNested(counter);
    w_.EndNested(e);
    EndPacket(p);
  }

  Status Finish() override {
    bundles_.Write(buffer_);
    return bundles_.Finish();
  }

 private:
  // "GPU 0 busy % (rank 1)": Perfetto lists GPU tracks by GPU, apart from the processes.
  static std::string ScopedName(const TimelineTrack& t) {
    return t.scope.empty() ? t.name : t.name + " (" + t.scope + ")";
  }

  void WriteClock(uint32_t id, uint64_t ts, bool incremental) {
    auto c = w_.BeginNested(pf::clock::kClocks);
    w_.Varint(pf::clock::kClockId, id);
    w_.Varint(pf::clock::kTimestamp, ts);
    if (incremental) w_.Bool(pf::clock::kIsIncremental, true);
    w_.EndNested(c);
  }

  // The track's sequence; on first use its first packet clears the incremental state,
  // sets the packet defaults (the incremental clock; the track, for TrackEvents) and
  // starts the clock at `first_ns`.
  Sequence& SequenceOf(Track& track, uint64_t first_ns) {
    if (track.sequence) return *track.sequence;
    Sequence& q = sequences_.emplace_back();
    track.sequence = &q;
    q.id = kGlobalSequence + static_cast<uint32_t>(sequences_.size());
    q.last_ns = first_ns;
    const TrackKind kind = track.definition.kind;
    auto p = w_.BeginNested(pf::trace::kPacket);
    w_.Varint(pf::packet::kTrustedPacketSequenceId, q.id);
    w_.Varint(pf::packet::kSequenceFlags, pf::packet::kSeqIncrementalStateCleared);
    auto defaults = w_.BeginNested(pf::packet::kTracePacketDefaults);
    w_.Varint(pf::defaults::kTimestampClockId, pf::clock::kSequenceIncremental);
    if (kind != TrackKind::kGpuStream && kind != TrackKind::kCounter) {
      auto event_defaults = w_.BeginNested(pf::defaults::kTrackEventDefaults);
      w_.Varint(pf::defaults::kTrackUuid, track.definition.id);
      w_.EndNested(event_defaults);
    }
    w_.EndNested(defaults);
    auto snapshot = w_.BeginNested(pf::packet::kClockSnapshot);
    WriteClock(pf::clock::kSequenceIncremental, first_ns, true);
    WriteClock(pf::clock::kBuiltinMonotonic, first_ns, false);
    w_.EndNested(snapshot);
    EndPacket(p);
    return q;
  }

  // A packet of sequence `q` at `ts_ns`: the delta from the sequence's last timestamp,
  // or, in the rare case of a step back (an NVTX mark inside a range already written),
  // the absolute time on CLOCK_MONOTONIC.
  FastProtoWriter::Nested BeginPacket(Sequence& q, uint64_t ts_ns) {
    auto p = w_.BeginNested(pf::trace::kPacket);
    w_.Varint(pf::packet::kTrustedPacketSequenceId, q.id);
    if (ts_ns >= q.last_ns) {
      w_.Varint(pf::packet::kTimestamp, ts_ns - q.last_ns);
      q.last_ns = ts_ns;
    } else {
      w_.Varint(pf::packet::kTimestamp, ts_ns);
      w_.Varint(pf::packet::kTimestampClockId, pf::clock::kBuiltinMonotonic);
    }
    return p;
  }

  void EndPacket(FastProtoWriter::Nested p) {
    w_.EndNested(p);
    if (buffer_.size() >= PerfettoBundles::kBundleBytes) bundles_.Write(buffer_);
  }

  void OpenInterned() {
    if (interned_open_) return;
    interned_ = w_.BeginNested(pf::packet::kInternedData);
    interned_open_ = true;
  }
  void CloseInterned() {
    if (!interned_open_) return;
    w_.EndNested(interned_);
    interned_open_ = false;
  }

  // Marks `key` as sent on `q` for `kind`; true the first time, when it must be sent.
  static bool Unsent(Sequence& q, NameKey key, intern::Kind kind) {
    if (key == 0) return false;
    if (q.sent.size() <= key) q.sent.resize(key + 1, 0);
    if (q.sent[key] & kind) return false;
    q.sent[key] |= kind;
    return true;
  }

  void WriteInterned(uint32_t field, uint64_t iid, std::string_view text) {
    OpenInterned();
    auto entry = w_.BeginNested(field);
    w_.Varint(pf::interned::kIid, iid);
    w_.String(pf::interned::kNameOrStr, text);
    w_.EndNested(entry);
  }

  void InternText(Sequence& q, InternedText text, intern::Kind kind, uint32_t field) {
    if (Unsent(q, text.key, kind)) WriteInterned(field, text.key, text.text);
  }

  // The frames (outermost first, as Perfetto lists them) and the stack itself.
  void InternStack(Sequence& q, const TimelineStack& stack) {
    if (!Unsent(q, stack.key, intern::kCallstack)) return;
    for (const TimelineFrame& frame : stack.frames) {
      if (!Unsent(q, frame.text.key, intern::kFrame)) continue;
      InternText(q, frame.function, intern::kFunctionName, pf::interned::kFunctionNames);
      InternText(q, frame.file, intern::kSourcePath, pf::interned::kSourcePaths);
      OpenInterned();
      auto entry = w_.BeginNested(pf::interned::kFrames);
      w_.Varint(pf::interned::kIid, frame.text.key);
      w_.Varint(pf::frame::kFunctionNameId, frame.function.key);
      if (frame.file.key) w_.Varint(pf::frame::kSourcePathIid, frame.file.key);
      if (frame.line) w_.Varint(pf::frame::kLineNumber, frame.line);
      w_.EndNested(entry);
    }
    OpenInterned();
    auto entry = w_.BeginNested(pf::interned::kCallstacks);
    w_.Varint(pf::interned::kIid, stack.key);
    for (auto frame = stack.frames.rbegin(); frame != stack.frames.rend(); ++frame) {
      w_.Varint(pf::callstack::kFrameIds, frame->text.key);
    }
    w_.EndNested(entry);
  }

  void TrackEventSlice(Track& track, const TimelineSlice& s) {
    Sequence& q = SequenceOf(track, s.start_ns);
    {
      auto p = BeginPacket(q, s.start_ns);
      InternText(q, s.name, intern::kEventName, pf::interned::kEventNames);
      InternText(q, s.category, intern::kCategory, pf::interned::kEventCategories);
      for (const TimelineArg& arg : s.args) {
        InternText(q, arg.key, intern::kAnnotationName, pf::interned::kDebugAnnotationNames);
        if (arg.type == TimelineArg::Type::kInternedString) {
          InternText(q, arg.string_value, intern::kAnnotationValue,
                     pf::interned::kDebugAnnotationStringValues);
        }
      }
      if (s.stack) InternStack(q, *s.stack);
      CloseInterned();
      auto e = w_.BeginNested(pf::packet::kTrackEvent);
      w_.Varint(pf::event::kType, pf::event::kTypeSliceBegin);
      w_.Varint(pf::event::kNameIid, s.name.key);
      w_.Varint(pf::event::kCategoryIids, s.category.key);
      for (const TimelineArg& arg : s.args) WriteAnnotation(arg);
      if (s.stack) w_.Varint(pf::event::kCallstackIid, s.stack->key);
      // Arrows go from launch calls to GPU work: Perfetto joins them by event id.
      if (!s.flows_out.empty()) {
        auto correlation = w_.BeginNested(pf::event::kGpuCorrelation);
        for (uint64_t flow : s.flows_out) {
          w_.Varint(pf::gpu_correlation::kSubmissionEventIds, flow);
        }
        w_.EndNested(correlation);
      }
      w_.EndNested(e);
      EndPacket(p);
    }
    auto p = BeginPacket(q, s.end_ns);
    auto e = w_.BeginNested(pf::packet::kTrackEvent);
    w_.Varint(pf::event::kType, pf::event::kTypeSliceEnd);
    w_.EndNested(e);
    EndPacket(p);
  }

  // Where each kind of argument value goes: DebugAnnotation and ExtraComputeArg number
  // their value fields differently.
  struct ValueFields {
    uint32_t uint_value, double_value, string_value, string_value_iid;
  };
  static constexpr ValueFields kAnnotationValueFields{
      pf::annotation::kUintValue, pf::annotation::kDoubleValue, pf::annotation::kStringValue,
      pf::annotation::kStringValueIid};
  static constexpr ValueFields kComputeArgValueFields{
      pf::compute_arg::kUintValue, pf::compute_arg::kDoubleValue, pf::compute_arg::kStringValue,
      pf::compute_arg::kStringValueIid};

  void WriteValue(const ValueFields& fields, const TimelineArg& arg) {
    switch (arg.type) {
      case TimelineArg::Type::kUint:
        w_.Varint(fields.uint_value, arg.uint_value);
        break;
      case TimelineArg::Type::kDouble:
        w_.Double(fields.double_value, arg.double_value);
        break;
      case TimelineArg::Type::kString:
        w_.String(fields.string_value, arg.string_value.text);
        break;
      case TimelineArg::Type::kInternedString:
        w_.Varint(fields.string_value_iid, arg.string_value.key);
        break;
      case TimelineArg::Type::kDim3:
        w_.String(fields.string_value, Dim3Text(arg));
        break;
    }
  }

  void WriteAnnotation(const TimelineArg& arg) {
    auto a = w_.BeginNested(pf::event::kDebugAnnotations);
    w_.Varint(pf::annotation::kNameIid, arg.key.key);
    WriteValue(kAnnotationValueFields, arg);
    w_.EndNested(a);
  }

  static std::string Dim3Text(const TimelineArg& arg) {
    return "[" + std::to_string(arg.dims[0]) + ", " + std::to_string(arg.dims[1]) + ", " +
           std::to_string(arg.dims[2]) + "]";
  }

  // The compute-argument iid of a name the builder interned.
  uint32_t ArgNameIid(NameKey key) {
    if (arg_name_iids_.size() <= key) arg_name_iids_.resize(key + 1, 0);
    uint32_t& iid = arg_name_iids_[key];
    if (iid == 0) iid = next_arg_name_iid_++;
    return iid;
  }

  void InternArgName(Sequence& q, uint32_t iid, std::string_view name) {
    if (q.arg_names_sent.size() <= iid) q.arg_names_sent.resize(iid + 1, false);
    if (q.arg_names_sent[iid]) return;
    q.arg_names_sent[iid] = true;
    WriteInterned(pf::interned::kComputeArgNames, iid, name);
  }

  // The iid of the kernel description that `s` launched, made on first use.
  uint32_t KernelIid(const TimelineSlice& s) {
    if (kernels_by_name_.size() <= s.name.key) kernels_by_name_.resize(s.name.key + 1);
    std::vector<KernelDescription>& candidates = kernels_by_name_[s.name.key];
    for (const KernelDescription& kernel : candidates) {
      if (kernel.symbol != s.symbol.key) continue;
      size_t i = 0;
      bool same = true;
      for (const TimelineArg& arg : s.args) {
        if (!IsKernelProperty(arg)) continue;
        if (i >= kernel.properties.size() || kernel.properties[i].first != arg.key.key ||
            kernel.properties[i].second != arg.uint_value) {
          same = false;
          break;
        }
        ++i;
      }
      if (same && i == kernel.properties.size()) return kernel.iid;
    }
    KernelDescription& kernel = candidates.emplace_back();
    kernel.symbol = s.symbol.key;
    for (const TimelineArg& arg : s.args) {
      if (IsKernelProperty(arg)) kernel.properties.push_back({arg.key.key, arg.uint_value});
    }
    kernel.iid = next_kernel_iid_++;
    return kernel.iid;
  }

  void InternKernel(Sequence& q, uint32_t iid, const TimelineSlice& s) {
    if (q.kernels_sent.size() <= iid) q.kernels_sent.resize(iid + 1, false);
    if (q.kernels_sent[iid]) return;
    q.kernels_sent[iid] = true;
    for (const TimelineArg& arg : s.args) {
      if (IsKernelProperty(arg)) InternArgName(q, ArgNameIid(arg.key.key), arg.key.text);
    }
    OpenInterned();
    auto entry = w_.BeginNested(pf::interned::kComputeKernels);
    w_.Varint(pf::interned::kIid, iid);
    w_.String(pf::kernel::kName, s.symbol.key ? s.symbol.text : s.name.text);
    w_.String(pf::kernel::kDemangledName, s.name.text);
    for (const TimelineArg& arg : s.args) {
      if (IsKernelProperty(arg)) WriteComputeArg(pf::kernel::kArgs, arg);
    }
    w_.EndNested(entry);
  }

  void WriteComputeArg(uint32_t field, const TimelineArg& arg) {
    auto a = w_.BeginNested(field);
    w_.Varint(pf::compute_arg::kNameIid, ArgNameIid(arg.key.key));
    WriteValue(kComputeArgValueFields, arg);
    w_.EndNested(a);
  }

  void WriteDim3(uint32_t field, const TimelineArg& arg) {
    auto d = w_.BeginNested(field);
    w_.Varint(pf::launch::kX, arg.dims[0]);
    w_.Varint(pf::launch::kY, arg.dims[1]);
    w_.Varint(pf::launch::kZ, arg.dims[2]);
    w_.EndNested(d);
  }

  uint32_t ContextIid(uint32_t pid) {
    auto [it, inserted] = context_iids_.try_emplace(pid, 0);
    if (inserted) it->second = static_cast<uint32_t>(context_iids_.size());
    return it->second;
  }

  // The hardware queue, the stage and the process's graphics context of a GPU stream.
  void DescribeStream(Sequence& q, const TimelineTrack& t, uint32_t stage) {
    if (q.described) return;
    q.described = true;
    OpenInterned();
    auto queue = w_.BeginNested(pf::interned::kGpuSpecifications);
    w_.Varint(pf::interned::kIid, kFirstQueueIid + t.id);
    w_.String(pf::spec::kName, ScopedName(t));
    const TimelineTrack& gpu = tracks_[t.parent_id].definition;
    if (!gpu.name.empty()) w_.String(pf::spec::kDescription, gpu.name);
    w_.EndNested(queue);
    auto stage_spec = w_.BeginNested(pf::interned::kGpuSpecifications);
    w_.Varint(pf::interned::kIid, stage);
    w_.String(pf::spec::kName, stage == kStageKernel   ? "Kernel"
                               : stage == kStageMemcpy ? "Memcpy"
                                                       : "Memset");
    w_.Varint(pf::spec::kCategory,
              stage == kStageKernel ? pf::spec::kCategoryCompute : pf::spec::kCategoryOther);
    w_.EndNested(stage_spec);
    auto context = w_.BeginNested(pf::interned::kGraphicsContexts);
    w_.Varint(pf::interned::kIid, ContextIid(t.pid));
    w_.Varint(pf::context::kPid, t.pid);
    w_.Varint(pf::context::kApi, pf::context::kApiCuda);
    w_.EndNested(context);
  }

  void GpuSlice(Track& track, const TimelineSlice& s) {
    const TimelineTrack& t = track.definition;
    const uint32_t stage = t.work == GpuWork::kKernels  ? kStageKernel
                           : t.work == GpuWork::kMemcpy ? kStageMemcpy
                                                        : kStageMemset;
    Sequence& q = SequenceOf(track, s.start_ns);
    auto p = BeginPacket(q, s.start_ns);
    DescribeStream(q, t, stage);
    InternText(q, s.name, intern::kEventName, pf::interned::kEventNames);
    const uint32_t kernel = stage == kStageKernel ? KernelIid(s) : 0;
    if (kernel) InternKernel(q, kernel, s);
    for (const TimelineArg& arg : s.args) {
      if (IsKernelProperty(arg) || arg.type == TimelineArg::Type::kDim3) continue;
      InternArgName(q, ArgNameIid(arg.key.key), arg.key.text);
      if (arg.type == TimelineArg::Type::kInternedString) {
        InternText(q, arg.string_value, intern::kAnnotationValue,
                   pf::interned::kDebugAnnotationStringValues);
      }
    }
    CloseInterned();
    auto e = w_.BeginNested(pf::packet::kGpuRenderStageEvent);
    // Perfetto draws an arrow from each launch call that lists this event's id.
    w_.Varint(pf::stage::kEventId, s.flow_in);
    w_.Varint(pf::stage::kDuration, s.end_ns - s.start_ns);
    w_.Varint(pf::stage::kHwQueueIid, kFirstQueueIid + t.id);
    w_.Varint(pf::stage::kStageIid, stage);
    if (t.device) w_.Varint(pf::stage::kGpuId, t.device);
    w_.Varint(pf::stage::kContext, ContextIid(t.pid));
    if (kernel) w_.Varint(pf::stage::kKernelIid, kernel);
    w_.Varint(pf::stage::kNameIid, s.name.key);
    auto launch = w_.BeginNested(pf::stage::kLaunch);
    for (const TimelineArg& arg : s.args) {
      if (arg.role == TimelineArg::Role::kGrid) WriteDim3(pf::launch::kGridSize, arg);
      if (arg.role == TimelineArg::Role::kBlock) WriteDim3(pf::launch::kWorkgroupSize, arg);
    }
    for (const TimelineArg& arg : s.args) {
      if (IsKernelProperty(arg) || arg.type == TimelineArg::Type::kDim3) continue;
      WriteComputeArg(pf::launch::kArgs, arg);
    }
    w_.EndNested(launch);
    w_.EndNested(e);
    EndPacket(p);
  }

  PerfettoBundles bundles_;
  ByteBuffer buffer_;
  FastProtoWriter w_{buffer_};
  bool interned_open_ = false;
  FastProtoWriter::Nested interned_{};
  std::vector<Track> tracks_;                            // by track id
  std::deque<Sequence> sequences_;                       // a deque keeps the tracks' pointers valid
  std::unordered_map<uint32_t, uint32_t> context_iids_;  // by pid
  std::vector<std::vector<KernelDescription>> kernels_by_name_;
  uint32_t next_kernel_iid_ = 1;
  std::vector<uint32_t> arg_name_iids_;  // by NameKey
  uint32_t next_arg_name_iid_ = 1;
};

}  // namespace

std::unique_ptr<TimelineWriter> MakePerfettoWriter(std::ostream& out,
                                                   const PerfettoOptions& options) {
  return std::make_unique<PerfettoWriter>(out, options);
}

}  // namespace gpuperf
