// Decodes our Perfetto output with protoc against tests/proto/perfetto_min.proto (field
// numbers from Perfetto's public schema) and reads it the way trace processor does:
// zstd bundles opened, interned data and clocks scoped to their packet sequence,
// incremental timestamps added up, GPU work joined to launch calls by event id.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analyze/timeline/timeline_read.h"
#include "base/text_escape.h"
#include "export/timeline_export.h"
#include "support/golden.h"
#include "support/proto_text.h"
#include "support/timeline_trace.h"

namespace gpuperf {
namespace {

using testing::MakeTimelineTrace;
using testing::Node;
using testing::ParseTextFormat;

constexpr char kGpuCorrelation[] = "[perfetto.protos.GpuTrackEvent.gpu_correlation]";
constexpr char kComputeKernels[] = "[perfetto.protos.GpuInternedData.compute_kernels]";
constexpr char kComputeArgNames[] = "[perfetto.protos.GpuInternedData.compute_arg_names]";

std::string Decode(const std::string& bytes) {
  return testing::ProtocDecode(bytes, "perfetto_min.proto", "perfetto.protos.Trace");
}

// A slice as trace processor builds it: from begin/end TrackEvents on a described track,
// or from one GpuRenderStageEvent on a GPU hardware queue.
struct Slice {
  uint64_t track = 0;  // TrackEvents: the track's uuid
  std::string queue;   // GPU work: the hardware queue's name
  std::string stage;   // GPU work: Kernel, Memcpy or Memset
  uint64_t start = 0, end = 0;
  std::string name, category;
  std::map<std::string, std::string> args;  // debug annotations, or the GPU work's arguments
  std::vector<std::string> stack;           // "function (file:line)", innermost first
  std::vector<uint64_t> submitted;          // event ids of the GPU work this call launched
  uint64_t event_id = 0;
  uint64_t gpu_id = 0;
  int64_t pid = -1;  // GPU work: its graphics context's process
};

struct Decoded {
  std::map<uint64_t, const Node*> tracks;
  std::vector<Slice> slices;
  std::vector<std::pair<std::string, uint64_t>> instants;  // name, track
  std::map<std::string, std::vector<double>> counters;     // by counter name
  std::map<std::string, std::string> counter_units;
  std::set<uint32_t> sequences;
};

// What one packet sequence has set up: its interned data, its packet defaults and the
// value of its incremental clock.
struct SequenceState {
  std::map<std::string, std::map<uint64_t, const Node*>> interned;  // field -> iid -> entry
  const Node* defaults = nullptr;
  uint64_t clock = 0;
  bool incremental = false;
};

std::string Dim3(const Node* dims) {
  if (!dims) return "";
  return "[" + dims->Get("x") + ", " + dims->Get("y") + ", " + dims->Get("z") + "]";
}

Decoded Interpret(const Node& root) {
  Decoded out;
  std::map<uint32_t, SequenceState> sequences;
  struct Event {
    uint64_t ts;
    size_t order;
    bool begin;
    size_t slice;
  };
  std::map<uint64_t, std::vector<Event>> events;  // TrackEvents by track
  const auto packets = root.All("packet");
  EXPECT_FALSE(packets.empty());
  for (size_t i = 0; i < packets.size(); ++i) {
    const Node& p = *packets[i];
    const uint32_t id = static_cast<uint32_t>(p.Uint("trusted_packet_sequence_id"));
    EXPECT_NE(id, 0u) << "packet " << i << " has no sequence";
    const bool first = out.sequences.insert(id).second;
    EXPECT_EQ(p.Get("sequence_flags") == "1", first)
        << "a sequence clears its incremental state in its first packet, and only there";
    SequenceState& q = sequences[id];
    if (const Node* defaults = p.Child("trace_packet_defaults")) q.defaults = defaults;
    if (const Node* snapshot = p.Child("clock_snapshot")) {
      for (const Node* clock : snapshot->All("clocks")) {
        if (clock->Get("is_incremental") != "true") continue;
        EXPECT_EQ(clock->Get("clock_id"), "64");  // sequence-scoped
        q.incremental = true;
        q.clock = clock->Uint("timestamp");
      }
    }
    if (const Node* data = p.Child("interned_data")) {
      for (const auto& [field, entry] : data->children) {
        const uint64_t iid = entry.Uint("iid");
        EXPECT_TRUE(q.interned[field].emplace(iid, &entry).second)
            << field << " iid " << iid << " interned twice on sequence " << id;
      }
    }
    auto lookup = [&](const std::string& field, uint64_t iid) -> const Node* {
      auto& table = q.interned[field];
      auto it = table.find(iid);
      EXPECT_NE(it, table.end()) << field << " iid " << iid << " used before it was interned";
      return it == table.end() ? nullptr : it->second;
    };
    auto text = [&](const std::string& field, uint64_t iid) {
      const Node* entry = lookup(field, iid);
      if (!entry) return std::string("?");
      return entry->Has("str") ? entry->Get("str") : entry->Get("name");
    };
    // The packet's time: a delta on the sequence's incremental clock, or an absolute
    // CLOCK_MONOTONIC time where the packet says so.
    uint64_t ts = 0;
    if (p.Has("timestamp")) {
      if (p.Get("timestamp_clock_id") == "3") {
        ts = p.Uint("timestamp");
      } else {
        EXPECT_TRUE(q.incremental && q.defaults && q.defaults->Get("timestamp_clock_id") == "64")
            << "sequence " << id << " has no incremental clock";
        q.clock += p.Uint("timestamp");
        ts = q.clock;
      }
    }
    if (const Node* track = p.Child("track_descriptor")) {
      EXPECT_TRUE(out.tracks.emplace(track->Uint("uuid"), track).second);
      if (track->Has("parent_uuid")) EXPECT_TRUE(out.tracks.count(track->Uint("parent_uuid")));
    }
    if (const Node* e = p.Child("track_event")) {
      EXPECT_FALSE(e->Has("track_uuid")) << "the sequence's defaults name the track";
      const Node* event_defaults = q.defaults ? q.defaults->Child("track_event_defaults") : nullptr;
      const uint64_t track = event_defaults ? event_defaults->Uint("track_uuid") : 0;
      EXPECT_TRUE(out.tracks.count(track)) << "event on undescribed track " << track;
      const std::string type = e->Get("type");
      if (type == "TYPE_SLICE_BEGIN") {
        Slice slice;
        slice.track = track;
        slice.start = ts;
        slice.name = text("event_names", e->Uint("name_iid"));
        slice.category = text("event_categories", e->Uint("category_iids"));
        for (const Node* a : e->All("debug_annotations")) {
          std::string value = a->Has("string_value_iid") ? text("debug_annotation_string_values",
                                                                a->Uint("string_value_iid"))
                              : a->Has("uint_value")     ? a->Get("uint_value")
                              : a->Has("double_value")   ? a->Get("double_value")
                                                         : a->Get("string_value");
          slice.args[text("debug_annotation_names", a->Uint("name_iid"))] = value;
        }
        if (e->Has("callstack_iid")) {
          if (const Node* stack = lookup("callstacks", e->Uint("callstack_iid"))) {
            for (const std::string& frame_id : stack->Values("frame_ids")) {
              const Node* frame = lookup("frames", std::stoull(frame_id));
              if (!frame) continue;
              std::string shown = text("function_names", frame->Uint("function_name_id"));
              if (frame->Has("source_path_iid")) {
                shown += " (" + text("source_paths", frame->Uint("source_path_iid"));
                if (frame->Has("line_number")) shown += ":" + frame->Get("line_number");
                shown += ")";
              }
              slice.stack.insert(slice.stack.begin(), shown);  // outermost first on the wire
            }
          }
        }
        if (const Node* correlation = e->Child(kGpuCorrelation)) {
          for (const auto& v : correlation->Values("render_stage_submission_event_ids")) {
            slice.submitted.push_back(std::stoull(v));
          }
        }
        events[track].push_back({ts, i, true, out.slices.size()});
        out.slices.push_back(slice);
      } else if (type == "TYPE_SLICE_END") {
        events[track].push_back({ts, i, false, 0});
      } else if (type == "TYPE_INSTANT") {
        out.instants.push_back({text("event_names", e->Uint("name_iid")), track});
      }
    }
    if (const Node* g = p.Child("gpu_render_stage_event")) {
      Slice slice;
      slice.start = ts;
      slice.end = ts + g->Uint("duration");
      slice.event_id = g->Uint("event_id");
      slice.gpu_id = g->Uint("gpu_id");
      EXPECT_TRUE(g->Has("event_id")) << "trace processor drops GPU work without an event id";
      slice.name = text("event_names", g->Uint("name_iid"));
      if (const Node* queue = lookup("gpu_specifications", g->Uint("hw_queue_iid"))) {
        slice.queue = queue->Get("name");
      }
      if (const Node* stage = lookup("gpu_specifications", g->Uint("stage_iid"))) {
        slice.stage = stage->Get("name");
        slice.category = stage->Get("category", "OTHER");
      }
      if (const Node* context = lookup("graphics_contexts", g->Uint("context"))) {
        slice.pid = std::stoll(context->Get("pid"));
        EXPECT_EQ(context->Get("api"), "CUDA");
      }
      auto add_arg = [&](const Node& arg) {
        const std::string name = text(kComputeArgNames, arg.Uint("name_iid"));
        slice.args[name] = arg.Has("string_value_iid") ? text("debug_annotation_string_values",
                                                              arg.Uint("string_value_iid"))
                           : arg.Has("uint_value")     ? arg.Get("uint_value")
                           : arg.Has("double_value")   ? arg.Get("double_value")
                                                       : arg.Get("string_value");
      };
      if (g->Has("kernel_iid")) {
        if (const Node* kernel = lookup(kComputeKernels, g->Uint("kernel_iid"))) {
          slice.args["kernel_name"] = kernel->Get("name");
          slice.args["kernel_demangled_name"] = kernel->Get("demangled_name");
          for (const Node* arg : kernel->All("args")) add_arg(*arg);
        }
      }
      if (const Node* launch = g->Child("launch")) {
        if (launch->Has("grid_size")) slice.args["grid"] = Dim3(launch->Child("grid_size"));
        if (launch->Has("workgroup_size")) {
          slice.args["block"] = Dim3(launch->Child("workgroup_size"));
        }
        for (const Node* arg : launch->All("args")) add_arg(*arg);
      }
      out.slices.push_back(slice);
    }
    if (const Node* c = p.Child("gpu_counter_event")) {
      const Node* interned = lookup("gpu_counter_descriptors", c->Uint("counter_descriptor_iid"));
      const Node* spec = interned && interned->Child("counter_descriptor")
                             ? interned->Child("counter_descriptor")->Child("specs")
                             : nullptr;
      EXPECT_NE(spec, nullptr);
      if (!spec) continue;
      EXPECT_EQ(spec->Get("value_direction"), "VALUE_DIRECTION_FORWARDS_LOOKING");
      const std::string name = spec->Get("name") + " on GPU " + interned->Get("gpu_id", "0");
      out.counter_units[name] = spec->Get("numerator_units");
      for (const Node* counter : c->All("counters")) {
        EXPECT_EQ(counter->Get("counter_id"), spec->Get("counter_id"));
        out.counters[name].push_back(
            counter->Has("int_value") ? static_cast<double>(std::stoll(counter->Get("int_value")))
                                      : std::stod(counter->Get("double_value")));
      }
    }
  }
  // Trace processor sorts by timestamp (stably) and closes the innermost open slice on
  // each end event. Our slices must come out whole and in the right place.
  for (auto& [track, list] : events) {
    std::stable_sort(list.begin(), list.end(),
                     [](const Event& a, const Event& b) { return a.ts < b.ts; });
    std::vector<size_t> open;
    for (const Event& event : list) {
      if (event.begin) {
        open.push_back(event.slice);
        continue;
      }
      EXPECT_FALSE(open.empty()) << "end without begin on track " << track;
      if (open.empty()) continue;
      out.slices[open.back()].end = event.ts;
      open.pop_back();
    }
    EXPECT_TRUE(open.empty()) << "unterminated slices on track " << track;
  }
  return out;
}

class PerfettoExport : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ostringstream out;
    ASSERT_TRUE(
        DrawTimeline(MakeTimelineTrace(), TimelineOptions{}, *MakePerfettoWriter(out), &stats_)
            .ok());
    bytes_ = out.str();
    text_ = Decode(testing::UnpackPerfettoTrace(bytes_));
    root_ = ParseTextFormat(text_);
    decoded_ = Interpret(root_);
  }
  const Slice* Find(const std::string& name, uint64_t correlation = 0) const {
    for (const Slice& s : decoded_.slices) {
      if (s.name == name &&
          (!correlation || s.args.at("correlation_id") == std::to_string(correlation))) {
        return &s;
      }
    }
    return nullptr;
  }
  std::string TrackName(uint64_t uuid) const {
    const Node* track = decoded_.tracks.at(uuid);
    if (const Node* thread = track->Child("thread")) return thread->Get("thread_name");
    if (const Node* process = track->Child("process")) return process->Get("process_name");
    return track->Get("name");
  }
  uint64_t Parent(uint64_t uuid) const { return decoded_.tracks.at(uuid)->Uint("parent_uuid"); }

  TimelineStats stats_;
  std::string bytes_, text_;
  Node root_;
  Decoded decoded_;
};

TEST_F(PerfettoExport, ClockSnapshotMakesMonotonicThePrimaryClock) {
  const Node* snapshot = root_.All("packet")[0]->Child("clock_snapshot");
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->Get("primary_trace_clock"), "BUILTIN_CLOCK_MONOTONIC");
  auto clocks = snapshot->All("clocks");
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks[0]->Get("timestamp"), "1000");
  EXPECT_EQ(clocks[1]->Get("clock_id"), "1");  // REALTIME, from the trace's clock record
}

TEST_F(PerfettoExport, EachTrackHasASequenceWithAnIncrementalClock) {
  // Sequence 1 (descriptors, the trace's clock) and one per track with events: the
  // threads' two lanes and NVTX lanes, three GPU streams, two counters.
  EXPECT_EQ(decoded_.sequences.size(), 1u + 4u + 2u + 3u + 2u);
  size_t starts = 0;
  for (const Node* p : root_.All("packet")) {
    if (p->Get("sequence_flags") != "1" || p->Get("trusted_packet_sequence_id") == "1") continue;
    ++starts;
    const Node* snapshot = p->Child("clock_snapshot");
    ASSERT_NE(snapshot, nullptr);
    auto clocks = snapshot->All("clocks");
    ASSERT_EQ(clocks.size(), 2u);
    // The incremental clock starts at the sequence's first event, on CLOCK_MONOTONIC.
    EXPECT_EQ(clocks[0]->Get("clock_id"), "64");
    EXPECT_EQ(clocks[0]->Get("is_incremental"), "true");
    EXPECT_EQ(clocks[1]->Get("clock_id"), "3");
    EXPECT_EQ(clocks[0]->Get("timestamp"), clocks[1]->Get("timestamp"));
  }
  EXPECT_EQ(starts, decoded_.sequences.size() - 1);
}

TEST_F(PerfettoExport, TracksForThreadsStreamsAndCounters) {
  const Slice* gemm = Find("gemm(float*, float*, int)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->queue, "stream 7");
  EXPECT_EQ(gemm->stage, "Kernel");
  EXPECT_EQ(gemm->category, "COMPUTE");
  EXPECT_EQ(gemm->start, 10'000u);
  EXPECT_EQ(gemm->end, 20'000u);
  // The UI lists GPU work under its process (the graphics context's pid) and GPU.
  EXPECT_EQ(gemm->pid, 100);
  EXPECT_EQ(gemm->gpu_id, 0u);

  const Slice* launch = Find("cudaLaunchKernel", 1);
  ASSERT_NE(launch, nullptr);
  const Node* thread = decoded_.tracks.at(launch->track)->Child("thread");
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(thread->Get("pid"), "100");
  EXPECT_EQ(thread->Get("tid"), "101");
  EXPECT_EQ(thread->Get("thread_name"), "main");
  EXPECT_EQ(TrackName(Parent(launch->track)), "python3 train.py");
  EXPECT_EQ(launch->start, 2000u);
  EXPECT_EQ(launch->end, 5000u);

  // The nested driver call sits on the thread's second lane, a child of the thread.
  const Slice* driver = Find("cuLaunchKernel");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(TrackName(driver->track), "main (lane 2)");
  EXPECT_EQ(Parent(driver->track), launch->track);
  EXPECT_EQ(driver->category, "cuda_driver");

  const Slice* copy = Find("Memcpy HtoD");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->queue, "stream 8 memcpy");
  EXPECT_EQ(copy->stage, "Memcpy");
  EXPECT_EQ(copy->category, "OTHER");
  EXPECT_EQ(copy->args.at("bytes"), "1000000");
  EXPECT_EQ(copy->args.at("bandwidth_GBps"), "20");
  EXPECT_EQ(copy->args.at("src_kind"), "pinned");
  EXPECT_EQ(copy->args.at("dst_kind"), "device");
  const Slice* set = Find("Memset");
  ASSERT_NE(set, nullptr);
  EXPECT_EQ(set->queue, "stream 8 memset");
  EXPECT_EQ(set->args.at("memory_kind"), "device");

  const Slice* step = Find("step");
  const Slice* forward = Find("forward");
  ASSERT_TRUE(step && forward);
  EXPECT_EQ(TrackName(step->track), "main NVTX");
  EXPECT_EQ(TrackName(forward->track), "main NVTX (lane 2)");
  EXPECT_EQ(step->end, 60'000u);
  EXPECT_EQ(Find("lost"), nullptr) << "a range that never ended is not drawn";
  EXPECT_EQ(stats_.unfinished_ranges, 1u);
  // The mark lies inside the range already written: its packet steps back in time, on
  // the absolute clock, and lands where it was recorded.
  ASSERT_EQ(decoded_.instants.size(), 1u);
  EXPECT_EQ(decoded_.instants[0].first, "checkpoint");
  EXPECT_EQ(decoded_.instants[0].second, step->track);
}

TEST_F(PerfettoExport, KernelArgumentsAndLaunchStack) {
  const Slice* gemm = Find("gemm(float*, float*, int)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->args.at("grid"), "[64, 2, 1]");
  EXPECT_EQ(gemm->args.at("block"), "[256, 1, 1]");
  EXPECT_EQ(gemm->args.at("dynamic_shared_bytes"), "2048");
  EXPECT_EQ(gemm->args.at("correlation_id"), "1");
  // The compiled kernel's own properties come with its interned description.
  EXPECT_EQ(gemm->args.at("kernel_name"), "_Z4gemmPfS_i");
  EXPECT_EQ(gemm->args.at("kernel_demangled_name"), "gemm(float*, float*, int)");
  EXPECT_EQ(gemm->args.at("registers_per_thread"), "32");
  EXPECT_EQ(gemm->args.at("static_shared_bytes"), "1024");

  const Slice* launch = Find("cudaLaunchKernel", 1);
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->stack,
            (std::vector<std::string>{"launch_gemm (gemm.cu:30)", "Model::forward (model.cc:20)",
                                      "main (main.cc:10)"}));
  // The driver call nested in it shares the outermost call's stack.
  EXPECT_EQ(Find("cuLaunchKernel")->stack, launch->stack);
  // Every launch of the thread uses one stack: its frames are interned once on the
  // thread's sequence, though three calls show them.
  size_t frames_of_main = 0;
  for (const Node* p : root_.All("packet")) {
    if (const Node* data = p->Child("interned_data")) {
      for (const Node* name : data->All("function_names"))
        frames_of_main += name->Get("str") == "main";
    }
  }
  EXPECT_EQ(frames_of_main, 2u) << "once per sequence: the two lanes of main";
}

TEST_F(PerfettoExport, ArrowsJoinEachLaunchToItsGpuWork) {
  // Trace processor draws an arrow from a call to every GPU event whose id it lists.
  std::map<uint64_t, const Slice*> gpu_by_event;
  for (const Slice& s : decoded_.slices) {
    if (!s.queue.empty() && s.event_id != 0) {
      EXPECT_TRUE(gpu_by_event.emplace(s.event_id, &s).second) << "event id " << s.event_id;
    }
  }
  size_t arrows = 0;
  for (const Slice& s : decoded_.slices) {
    for (uint64_t id : s.submitted) {
      ASSERT_TRUE(gpu_by_event.count(id)) << "arrow " << id << " has no end";
      EXPECT_EQ(s.args.at("correlation_id"), gpu_by_event[id]->args.at("correlation_id"));
      ++arrows;
    }
  }
  // 1 -> gemm, 3 -> three relu kernels (graph launch), 6 -> the overlapping kernel,
  // 7 -> the copy. Correlation 4 (no call) and 5 (no GPU work) have none.
  EXPECT_EQ(arrows, 6u);
  EXPECT_EQ(gpu_by_event.size(), 6u);
  EXPECT_EQ(stats_.flows, 6u);
  EXPECT_EQ(Find("cudaGraphLaunch")->submitted.size(), 3u);
  EXPECT_EQ(Find("relu_kernel", 4)->event_id, 0u);
  EXPECT_TRUE(Find("cudaDeviceSynchronize")->submitted.empty());
}

TEST_F(PerfettoExport, OverlappingKernelsGoToAnotherLane) {
  // Bytes that are not UTF-8 are \xNN text (base/text_escape.h).
  const Slice* nasty = Find(Utf8Text(testing::kNastyKernelName));
  ASSERT_NE(nasty, nullptr);
  EXPECT_EQ(nasty->queue, "stream 7 (lane 2)");
  // No two slices on one track or queue partially overlap.
  for (const Slice& a : decoded_.slices) {
    for (const Slice& b : decoded_.slices) {
      if (&a == &b || a.track != b.track || a.queue != b.queue) continue;
      const bool disjoint = a.end <= b.start || b.end <= a.start;
      const bool nested =
          (a.start <= b.start && b.end <= a.end) || (b.start <= a.start && a.end <= b.end);
      EXPECT_TRUE(disjoint || nested) << a.name << " and " << b.name;
    }
  }
}

TEST_F(PerfettoExport, GpuCountersForMemoryAndBusyTime) {
  ASSERT_TRUE(decoded_.counters.count("GPU 0 memory in use on GPU 0"));
  EXPECT_EQ(decoded_.counters["GPU 0 memory in use on GPU 0"], (std::vector<double>{1 << 20, 0}));
  EXPECT_EQ(decoded_.counter_units["GPU 0 memory in use on GPU 0"], "BYTE");
  ASSERT_TRUE(decoded_.counters.count("GPU 0 busy % on GPU 0"));
  // Kernels cover 10..26 µs of the first 1 ms bucket (16 µs): 1.6%, then idle.
  EXPECT_EQ(decoded_.counters["GPU 0 busy % on GPU 0"], (std::vector<double>{1.6, 0}));
  EXPECT_EQ(decoded_.counter_units["GPU 0 busy % on GPU 0"], "PERCENT");
}

TEST_F(PerfettoExport, BundlesHoldTheSamePackets) {
  std::ostringstream plain;
  ASSERT_TRUE(DrawTimeline(MakeTimelineTrace(), TimelineOptions{},
                           *MakePerfettoWriter(plain, {.compress = false}))
                  .ok());
  EXPECT_NE(bytes_, plain.str()) << "the default output is compressed";
  EXPECT_EQ(testing::UnpackPerfettoTrace(bytes_), plain.str());
}

TEST_F(PerfettoExport, MatchesGolden) {
  EXPECT_MATCHES_GOLDEN(text_, "export/timeline.perfetto.txt");
}

}  // namespace
}  // namespace gpuperf
