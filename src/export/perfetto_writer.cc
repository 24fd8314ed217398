#include "export/perfetto_writer.h"

#include <string>
#include <vector>

#include "export/protobuf_writer.h"

namespace gpuperf {
namespace {

// Field numbers from Perfetto's public schema (protos/perfetto/trace/...). Only what we
// write; tests/proto/perfetto_min.proto declares the same subset for decoding.
namespace trace {
constexpr uint32_t kPacket = 1;
}
namespace packet {
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kTrustedPacketSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kTracePacketDefaults = 59;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kSeqIncrementalStateCleared = 1;
constexpr uint32_t kSeqNeedsIncrementalState = 2;
}  // namespace packet
namespace defaults {
constexpr uint32_t kTimestampClockId = 58;
}
namespace clock {
constexpr uint32_t kClocks = 1;
constexpr uint32_t kPrimaryTraceClock = 2;
constexpr uint32_t kClockId = 1;
constexpr uint32_t kTimestamp = 2;
constexpr uint32_t kBuiltinRealtime = 1;
constexpr uint32_t kBuiltinMonotonic = 3;
}  // namespace clock
namespace event {
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kTrackUuid = 11;
constexpr uint32_t kCounterValue = 30;
constexpr uint32_t kDoubleCounterValue = 44;
constexpr uint32_t kFlowIds = 47;
constexpr uint32_t kTerminatingFlowIds = 48;
constexpr uint32_t kTypeSliceBegin = 1;
constexpr uint32_t kTypeSliceEnd = 2;
constexpr uint32_t kTypeInstant = 3;
constexpr uint32_t kTypeCounter = 4;
}  // namespace event
namespace annotation {
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kUintValue = 3;
constexpr uint32_t kDoubleValue = 5;
constexpr uint32_t kStringValue = 6;
constexpr uint32_t kStringValueIid = 17;
}  // namespace annotation
namespace interned {
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kDebugAnnotationStringValues = 29;
constexpr uint32_t kIid = 1;        // in every interned message
constexpr uint32_t kNameOrStr = 2;  // name (EventName, ...) or str (InternedString)
}  // namespace interned
namespace track {
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kCounter = 8;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;
constexpr uint32_t kChildOrderingExplicit = 3;
constexpr uint32_t kProcessPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kThreadPid = 1;
constexpr uint32_t kThreadTid = 2;
constexpr uint32_t kThreadName = 5;
constexpr uint32_t kCounterUnit = 3;
constexpr uint32_t kUnitSizeBytes = 3;
}  // namespace track

constexpr uint32_t kSequenceId = 1;
constexpr size_t kFlushBytes = 1 << 20;

// Interned-text kinds: each has its own iid space in InternedData.
enum InternKind : uint8_t {
  kCategory = 1,
  kEventName = 2,
  kAnnotationName = 4,
  kAnnotationValue = 8,
};

class PerfettoWriter final : public TimelineWriter {
 public:
  explicit PerfettoWriter(std::ostream& out) : out_(out) {
    buffer_.reserve(kFlushBytes + (64 << 10));  // one packet past the flush mark fits
  }

  // Perfetto has no trace-level note a viewer shows: the builder's kNote track says it.
  void Begin(const TimelineClock& clock, std::string_view /*data_loss*/) override {
    {
      auto p = BeginPacket(packet::kSeqIncrementalStateCleared);
      auto defaults = w_.BeginNested(packet::kTracePacketDefaults);
      w_.Varint(defaults::kTimestampClockId, clock::kBuiltinMonotonic);
      w_.EndNested(defaults);
      EndPacket(p);
    }
    auto p = BeginPacket(0);
    auto snapshot = w_.BeginNested(packet::kClockSnapshot);
    auto monotonic = w_.BeginNested(clock::kClocks);
    w_.Varint(clock::kClockId, clock::kBuiltinMonotonic);
    w_.Varint(clock::kTimestamp, clock.monotonic_ns);
    w_.EndNested(monotonic);
    if (clock.realtime_ns) {
      auto realtime = w_.BeginNested(clock::kClocks);
      w_.Varint(clock::kClockId, clock::kBuiltinRealtime);
      w_.Varint(clock::kTimestamp, clock.realtime_ns);
      w_.EndNested(realtime);
    }
    w_.Varint(clock::kPrimaryTraceClock, clock::kBuiltinMonotonic);
    w_.EndNested(snapshot);
    EndPacket(p);
  }

  void DefineTrack(const TimelineTrack& t) override {
    if (track_units_.size() <= t.id) track_units_.resize(t.id + 1, CounterUnit::kBytes);
    track_units_[t.id] = t.unit;
    auto p = BeginPacket(0);
    auto d = w_.BeginNested(packet::kTrackDescriptor);
    w_.Varint(track::kUuid, t.id);
    if (t.parent_id) w_.Varint(track::kParentUuid, t.parent_id);
    if (t.kind == TrackKind::kProcess) {
      auto process = w_.BeginNested(track::kProcess);
      w_.Varint(track::kProcessPid, t.pid);
      w_.String(track::kProcessName, t.name);
      w_.EndNested(process);
    } else if (t.kind == TrackKind::kThread && t.lane == 0) {
      auto thread = w_.BeginNested(track::kThread);
      w_.Varint(track::kThreadPid, t.pid);
      w_.Varint(track::kThreadTid, t.tid);
      w_.String(track::kThreadName, t.name);
      w_.EndNested(thread);
      w_.Varint(track::kChildOrdering, track::kChildOrderingExplicit);
    } else {
      w_.String(track::kName, t.name);
      w_.Int(track::kSiblingOrderRank, t.sort_rank);
      if (t.kind == TrackKind::kGpu) {
        w_.Varint(track::kChildOrdering, track::kChildOrderingExplicit);
      }
      if (t.kind == TrackKind::kCounter) {
        auto counter = w_.BeginNested(track::kCounter);
        if (t.unit == CounterUnit::kBytes) w_.Varint(track::kCounterUnit, track::kUnitSizeBytes);
        w_.EndNested(counter);
      }
    }
    w_.EndNested(d);
    EndPacket(p);
  }

  void Slice(const TimelineSlice& s) override {
    {
      auto p = BeginPacket(packet::kSeqNeedsIncrementalState);
      w_.Varint(packet::kTimestamp, s.start_ns);
      InternAll(s);
      auto e = w_.BeginNested(packet::kTrackEvent);
      w_.Varint(event::kType, event::kTypeSliceBegin);
      w_.Varint(event::kTrackUuid, s.track);
      w_.Varint(event::kNameIid, s.name.key);
      w_.Varint(event::kCategoryIids, s.category.key);
      for (const TimelineArg& arg : s.args) WriteAnnotation(arg);
      if (s.stack) WriteAnnotation(*s.stack);
      for (uint64_t flow : s.flows_out) w_.Fixed64(event::kFlowIds, flow);
      if (s.flow_in) w_.Fixed64(event::kTerminatingFlowIds, s.flow_in);
      w_.EndNested(e);
      EndPacket(p);
    }
    auto p = BeginPacket(packet::kSeqNeedsIncrementalState);
    w_.Varint(packet::kTimestamp, s.end_ns);
    auto e = w_.BeginNested(packet::kTrackEvent);
    w_.Varint(event::kType, event::kTypeSliceEnd);
    w_.Varint(event::kTrackUuid, s.track);
    w_.EndNested(e);
    EndPacket(p);
  }

  void Instant(uint32_t track_id, uint64_t ts_ns, InternedText name,
               InternedText category) override {
    auto p = BeginPacket(packet::kSeqNeedsIncrementalState);
    w_.Varint(packet::kTimestamp, ts_ns);
    const bool new_name = NeedsInterning(name.key, kEventName);
    const bool new_category = NeedsInterning(category.key, kCategory);
    if (new_name || new_category) {
      auto data = w_.BeginNested(packet::kInternedData);
      if (new_category) WriteInterned(interned::kEventCategories, category);
      if (new_name) WriteInterned(interned::kEventNames, name);
      w_.EndNested(data);
    }
    auto e = w_.BeginNested(packet::kTrackEvent);
    w_.Varint(event::kType, event::kTypeInstant);
    w_.Varint(event::kTrackUuid, track_id);
    w_.Varint(event::kNameIid, name.key);
    w_.Varint(event::kCategoryIids, category.key);
    w_.EndNested(e);
    EndPacket(p);
  }

  void Counter(uint32_t track_id, uint64_t ts_ns, double value) override {
    auto p = BeginPacket(packet::kSeqNeedsIncrementalState);
    w_.Varint(packet::kTimestamp, ts_ns);
    auto e = w_.BeginNested(packet::kTrackEvent);
    w_.Varint(event::kType, event::kTypeCounter);
    w_.Varint(event::kTrackUuid, track_id);
    if (track_id < track_units_.size() && track_units_[track_id] == CounterUnit::kBytes) {
      w_.Int(event::kCounterValue, static_cast<int64_t>(value));
    } else {
      w_.Double(event::kDoubleCounterValue, value);
    }
    w_.EndNested(e);
    EndPacket(p);
  }

  Status Finish() override {
    Flush();
    out_.flush();
    if (!out_) return Error(StatusCode::kIoError, "cannot write the Perfetto trace");
    return Status::Ok();
  }

 private:
  ProtoWriter::Nested BeginPacket(uint32_t sequence_flags) {
    auto p = w_.BeginNested(trace::kPacket);
    w_.Varint(packet::kTrustedPacketSequenceId, kSequenceId);
    if (sequence_flags) w_.Varint(packet::kSequenceFlags, sequence_flags);
    return p;
  }
  void EndPacket(ProtoWriter::Nested p) {
    w_.EndNested(p);
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

  // Marks `key` as interned for `kind`; true the first time, when the text must be sent.
  bool NeedsInterning(NameKey key, InternKind kind) {
    if (key == 0) return false;
    if (interned_.size() <= key) interned_.resize(key + 1, 0);
    if (interned_[key] & kind) return false;
    interned_[key] |= kind;
    return true;
  }

  void WriteInterned(uint32_t field, InternedText text) {
    auto entry = w_.BeginNested(field);
    w_.Varint(interned::kIid, text.key);
    w_.String(interned::kNameOrStr, text.text);
    w_.EndNested(entry);
  }

  // Writes the InternedData entries this slice needs before its TrackEvent.
  void InternAll(const TimelineSlice& s) {
    pending_.clear();
    if (NeedsInterning(s.category.key, kCategory)) {
      pending_.push_back({interned::kEventCategories, s.category});
    }
    if (NeedsInterning(s.name.key, kEventName)) pending_.push_back({interned::kEventNames, s.name});
    auto intern_arg = [&](const TimelineArg& arg) {
      if (NeedsInterning(arg.key.key, kAnnotationName)) {
        pending_.push_back({interned::kDebugAnnotationNames, arg.key});
      }
      if (arg.type == TimelineArg::Type::kInternedString &&
          NeedsInterning(arg.string_value.key, kAnnotationValue)) {
        pending_.push_back({interned::kDebugAnnotationStringValues, arg.string_value});
      }
    };
    for (const TimelineArg& arg : s.args) intern_arg(arg);
    if (s.stack) intern_arg(*s.stack);
    if (pending_.empty()) return;
    auto data = w_.BeginNested(packet::kInternedData);
    // InternedData's fields may come in any order; group by field for readability.
    for (uint32_t field :
         {interned::kEventCategories, interned::kEventNames, interned::kDebugAnnotationNames,
          interned::kDebugAnnotationStringValues}) {
      for (const auto& [f, text] : pending_) {
        if (f == field) WriteInterned(field, text);
      }
    }
    w_.EndNested(data);
  }

  void WriteAnnotation(const TimelineArg& arg) {
    auto a = w_.BeginNested(event::kDebugAnnotations);
    w_.Varint(annotation::kNameIid, arg.key.key);
    switch (arg.type) {
      case TimelineArg::Type::kUint:
        w_.Varint(annotation::kUintValue, arg.uint_value);
        break;
      case TimelineArg::Type::kDouble:
        w_.Double(annotation::kDoubleValue, arg.double_value);
        break;
      case TimelineArg::Type::kString:
        w_.String(annotation::kStringValue, arg.string_value.text);
        break;
      case TimelineArg::Type::kInternedString:
        w_.Varint(annotation::kStringValueIid, arg.string_value.key);
        break;
    }
    w_.EndNested(a);
  }

  std::ostream& out_;
  std::string buffer_;
  ProtoWriter w_{buffer_};
  std::vector<uint8_t> interned_;  // InternKind bits per NameKey
  std::vector<std::pair<uint32_t, InternedText>> pending_;
  std::vector<CounterUnit> track_units_;
};

}  // namespace

std::unique_ptr<TimelineWriter> MakePerfettoWriter(std::ostream& out) {
  return std::make_unique<PerfettoWriter>(out);
}

}  // namespace gpuperf
