#include "export/chrome_json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "base/json_output.h"

namespace gpuperf {
namespace {

constexpr size_t kFlushBytes = 1 << 20;

template <class Int>
void AppendInt(std::string& out, Int value) {
  char buf[24];
  auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}

void AppendDouble(std::string& out, double value) {
  if (!std::isfinite(value)) value = 0;
  char buf[64];
  int n = std::snprintf(buf, sizeof(buf), "%.3f", value);
  out.append(buf, static_cast<size_t>(n));
}

struct JsonTrack {
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool is_counter = false;
  CounterUnit unit = CounterUnit::kBytes;
  std::string name;
};

class ChromeJsonWriter final : public TimelineWriter {
 public:
  explicit ChromeJsonWriter(std::ostream& out) : out_(out) {}

  void Begin(const TimelineClock& clock, const TimelineNotes& notes) override {
    buffer_ += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"clock\":\"CLOCK_MONOTONIC\"";
    if (clock.realtime_ns) {
      buffer_ += ",\"clock_monotonic_ns\":";
      AppendInt(buffer_, clock.monotonic_ns);
      buffer_ += ",\"clock_realtime_ns\":";
      AppendInt(buffer_, clock.realtime_ns);
    }
    if (!notes.data_loss.empty()) {
      buffer_ += ",\"gpuperf_data_loss\":";
      AppendJsonString(buffer_, notes.data_loss);
    }
    if (!notes.window.empty()) {
      buffer_ += ",\"gpuperf_window\":";
      AppendJsonString(buffer_, notes.window);
    }
    buffer_ += "},\n\"traceEvents\":[";
  }

  void DefineTrack(const TimelineTrack& t) override {
    if (tracks_.size() <= t.id) tracks_.resize(t.id + 1);
    JsonTrack& track = tracks_[t.id];
    track.name = t.name;
    const JsonTrack* parent = t.parent_id < tracks_.size() ? &tracks_[t.parent_id] : nullptr;
    switch (t.kind) {
      case TrackKind::kProcess:
      case TrackKind::kGpu:
      case TrackKind::kNote:
        track.pid = t.kind == TrackKind::kProcess ? t.pid
                    : t.kind == TrackKind::kNote  ? kGpuPidBase - 1  // below every GPU's
                                                  : kGpuPidBase + next_gpu_pid_++;
        Metadata("process_name", track.pid, std::nullopt, t.name);
        MetadataRank("process_sort_index", track.pid, std::nullopt, t.sort_rank);
        return;
      case TrackKind::kCounter:
        track.pid = parent ? parent->pid : t.pid;
        track.is_counter = true;
        track.unit = t.unit;
        return;
      case TrackKind::kThread:
      case TrackKind::kNvtx:
      case TrackKind::kGpuStream:
        break;
    }
    track.pid = parent && t.kind == TrackKind::kGpuStream ? parent->pid : t.pid;
    // The real tid where it is still free in this pid; a synthetic one otherwise.
    const bool natural = t.kind != TrackKind::kNvtx && t.lane == 0;
    track.tid =
        natural && used_tids_.insert({track.pid, t.tid}).second ? t.tid : kSyntheticTidBase + t.id;
    Metadata("thread_name", track.pid, track.tid, t.name);
    MetadataRank("thread_sort_index", track.pid, track.tid, t.sort_rank);
  }

  void Slice(const TimelineSlice& s) override {
    const JsonTrack& track = tracks_[s.track];
    StartEvent();
    buffer_ += "{\"ph\":\"X\"";
    Location(track, s.start_ns);
    buffer_ += ",\"dur\":";
    AppendMicros(buffer_, s.end_ns - s.start_ns);
    buffer_ += ",\"name\":";
    AppendQuoted(s.name);
    buffer_ += ",\"cat\":";
    AppendQuoted(s.category);
    if (s.stack) {
      buffer_ += ",\"sf\":";
      AppendInt(buffer_, StackFrameId(*s.stack));
    }
    if (!s.args.empty()) {
      buffer_ += ",\"args\":{";
      for (size_t i = 0; i < s.args.size(); ++i) {
        if (i) buffer_ += ',';
        AppendArg(s.args[i]);
      }
      buffer_ += '}';
    }
    buffer_ += '}';
    for (uint64_t flow : s.flows_out) Flow("s", track, s.start_ns, flow);
    if (s.flow_in) Flow("f", track, s.start_ns, s.flow_in);
    MaybeFlush();
  }

  void Instant(uint32_t track_id, uint64_t ts_ns, InternedText name,
               InternedText category) override {
    StartEvent();
    buffer_ += "{\"ph\":\"i\",\"s\":\"t\"";
    Location(tracks_[track_id], ts_ns);
    buffer_ += ",\"name\":";
    AppendQuoted(name);
    buffer_ += ",\"cat\":";
    AppendQuoted(category);
    buffer_ += '}';
    MaybeFlush();
  }

  void Counter(uint32_t track_id, uint64_t ts_ns, double value) override {
    const JsonTrack& track = tracks_[track_id];
    StartEvent();
    buffer_ += "{\"ph\":\"C\",\"pid\":";
    AppendInt(buffer_, track.pid);
    buffer_ += ",\"ts\":";
    AppendMicros(buffer_, ts_ns);
    buffer_ += ",\"name\":";
    AppendJsonString(buffer_, track.name);
    if (track.unit == CounterUnit::kBytes) {
      buffer_ += ",\"args\":{\"bytes\":";
      AppendInt(buffer_, static_cast<uint64_t>(value));
    } else {
      buffer_ += ",\"args\":{\"percent\":";
      AppendDouble(buffer_, value);
    }
    buffer_ += "}}";
    MaybeFlush();
  }

  Status Finish() override {
    buffer_ += "\n],\n\"stackFrames\":{";
    for (size_t i = 0; i < frames_.size(); ++i) {
      if (i) buffer_ += ',';
      buffer_ += "\n\"";
      AppendInt(buffer_, i + 1);
      buffer_ += "\":{\"name\":";
      AppendJsonString(buffer_, frames_[i].name);
      if (frames_[i].parent) {
        buffer_ += ",\"parent\":\"";
        AppendInt(buffer_, frames_[i].parent);
        buffer_ += '"';
      }
      buffer_ += '}';
      MaybeFlush();
    }
    buffer_ += "}}\n";
    Flush();
    out_.flush();
    if (!out_) return Error(StatusCode::kIoError, "cannot write the JSON trace");
    return Status::Ok();
  }

 private:
  void StartEvent() {
    buffer_ += first_event_ ? "\n" : ",\n";
    first_event_ = false;
  }

  void Location(const JsonTrack& track, uint64_t ts_ns) {
    buffer_ += ",\"pid\":";
    AppendInt(buffer_, track.pid);
    buffer_ += ",\"tid\":";
    AppendInt(buffer_, track.tid);
    buffer_ += ",\"ts\":";
    AppendMicros(buffer_, ts_ns);
  }

  void Flow(const char* phase, const JsonTrack& track, uint64_t ts_ns, uint64_t id) {
    StartEvent();
    buffer_ += "{\"ph\":\"";
    buffer_ += phase;
    buffer_ += "\",\"id\":";
    AppendInt(buffer_, id);
    Location(track, ts_ns);
    buffer_ += ",\"cat\":\"ac2g\",\"name\":\"launch\"";
    if (phase[0] == 'f') buffer_ += ",\"bp\":\"e\"";
    buffer_ += '}';
  }

  void Metadata(const char* what, uint32_t pid, std::optional<uint32_t> tid,
                std::string_view name) {
    MetadataUpToArgs(what, pid, tid);
    buffer_ += "{\"name\":";
    AppendJsonString(buffer_, name);
    buffer_ += "}}";
  }

  void MetadataRank(const char* what, uint32_t pid, std::optional<uint32_t> tid, int32_t rank) {
    MetadataUpToArgs(what, pid, tid);
    buffer_ += "{\"sort_index\":";
    AppendInt(buffer_, rank);
    buffer_ += "}}";
  }

  // `{"ph":"M","name":WHAT,"pid":..[,"tid":..],"args":` of a metadata event.
  void MetadataUpToArgs(const char* what, uint32_t pid, std::optional<uint32_t> tid) {
    StartEvent();
    buffer_ += "{\"ph\":\"M\",\"name\":\"";
    buffer_ += what;
    buffer_ += "\",\"pid\":";
    AppendInt(buffer_, pid);
    if (tid) {
      buffer_ += ",\"tid\":";
      AppendInt(buffer_, *tid);
    }
    buffer_ += ",\"args\":";
  }

  // An interned text as a JSON string, escaped once per key: a trace repeats a few
  // hundred names millions of times.
  void AppendQuoted(InternedText text) {
    if (text.key == 0) {
      AppendJsonString(buffer_, text.text);
      return;
    }
    if (quoted_.size() <= text.key) quoted_.resize(text.key + 1);
    std::string& quoted = quoted_[text.key];
    if (quoted.empty()) AppendJsonString(quoted, text.text);
    buffer_ += quoted;
  }

  void AppendArg(const TimelineArg& arg) {
    AppendQuoted(arg.key);
    buffer_ += ':';
    switch (arg.type) {
      case TimelineArg::Type::kUint:
        AppendInt(buffer_, arg.uint_value);
        break;
      case TimelineArg::Type::kDouble:
        AppendDouble(buffer_, arg.double_value);
        break;
      case TimelineArg::Type::kString:
        AppendJsonString(buffer_, arg.string_value.text);
        break;
      case TimelineArg::Type::kInternedString:
        AppendQuoted(arg.string_value);
        break;
      case TimelineArg::Type::kDim3:
        buffer_ += "\"[";
        AppendInt(buffer_, arg.dims[0]);
        buffer_ += ", ";
        AppendInt(buffer_, arg.dims[1]);
        buffer_ += ", ";
        AppendInt(buffer_, arg.dims[2]);
        buffer_ += "]\"";
        break;
    }
  }

  // The stackFrames node of a stack's innermost frame, adding its chain on first use.
  // Frames are shared between stacks with a common outer part, as the format intends.
  uint32_t StackFrameId(const TimelineStack& stack) {
    if (stack_nodes_.size() <= stack.key) stack_nodes_.resize(stack.key + 1, 0);
    uint32_t& node = stack_nodes_[stack.key];
    if (node) return node;
    uint32_t parent = 0;
    for (auto frame = stack.frames.rbegin(); frame != stack.frames.rend(); ++frame) {
      auto [it, inserted] = frame_ids_.try_emplace({parent, frame->text.key}, 0);
      if (inserted) {
        frames_.push_back({std::string(frame->text.text), parent});
        it->second = static_cast<uint32_t>(frames_.size());
      }
      parent = it->second;
    }
    node = parent;
    return node;
  }

  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    out_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    buffer_.clear();
  }

  struct StackFrame {
    std::string name;
    uint32_t parent;
  };

  std::ostream& out_;
  std::string buffer_;
  bool first_event_ = true;
  std::vector<JsonTrack> tracks_;
  std::set<std::pair<uint32_t, uint32_t>> used_tids_;
  uint32_t next_gpu_pid_ = 0;
  std::vector<uint32_t> stack_nodes_;                           // by the stack's NameKey
  std::map<std::pair<uint32_t, NameKey>, uint32_t> frame_ids_;  // (parent node, frame text)
  std::vector<StackFrame> frames_;                              // node id - 1
  std::vector<std::string> quoted_;                             // AppendQuoted's cache, by NameKey
};

}  // namespace

void AppendMicros(std::string& out, uint64_t ns) {
  AppendInt(out, ns / 1000);
  const uint64_t fraction = ns % 1000;
  out += '.';
  out += static_cast<char>('0' + fraction / 100);
  out += static_cast<char>('0' + fraction / 10 % 10);
  out += static_cast<char>('0' + fraction % 10);
}

std::unique_ptr<TimelineWriter> MakeChromeJsonWriter(std::ostream& out) {
  return std::make_unique<ChromeJsonWriter>(out);
}

}  // namespace gpuperf
