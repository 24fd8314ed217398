// Decodes our Perfetto output with protoc against tests/proto/perfetto_min.proto (field
// numbers from Perfetto's public schema) and checks it the way trace processor reads it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/text_escape.h"
#include "export/timeline_export.h"
#include "support/golden.h"
#include "support/proto_text.h"
#include "support/temp_dir.h"
#include "support/timeline_trace.h"

namespace gpuperf {
namespace {

using testing::MakeTimelineTrace;
using testing::Node;
using testing::ParseTextFormat;

std::string Decode(const std::string& bytes) {
  return testing::ProtocDecode(bytes, "perfetto_min.proto", "perfetto.protos.Trace");
}

// A slice as trace processor would build it from the begin/end events.
struct Slice {
  uint64_t track, start, end;
  std::string name, category;
  std::map<std::string, std::string> args;
  std::vector<uint64_t> flows_out, flows_in;
};

// Reads the decoded packets as trace processor does: interned data scoped to the
// sequence, defined before use; events on tracks described before use; begin/end events
// (sorted by time, stable) nest on each track.
struct Decoded {
  std::map<uint64_t, const Node*> tracks;
  std::vector<Slice> slices;
  std::vector<std::pair<std::string, uint64_t>> instants;  // name, track
  std::map<uint64_t, std::vector<double>> counters;        // by track
};

Decoded Interpret(const Node& root) {
  Decoded out;
  std::map<std::string, std::map<uint64_t, std::string>> interned;  // kind -> iid -> text
  auto lookup = [&](const std::string& kind, uint64_t iid) {
    auto& table = interned[kind];
    auto it = table.find(iid);
    EXPECT_NE(it, table.end()) << kind << " iid " << iid << " used before it was interned";
    return it == table.end() ? std::string("?") : it->second;
  };
  struct Event {
    uint64_t ts;
    size_t order;
    bool begin;
    size_t slice;  // begin: index into out.slices
  };
  std::map<uint64_t, std::vector<Event>> events;  // by track
  const auto packets = root.All("packet");
  EXPECT_FALSE(packets.empty());
  for (size_t i = 0; i < packets.size(); ++i) {
    const Node& p = *packets[i];
    EXPECT_EQ(p.Get("trusted_packet_sequence_id"), "1");
    const bool cleared = p.Get("sequence_flags") == "1";
    EXPECT_EQ(cleared, i == 0) << "only the first packet clears incremental state";
    if (i == 0) {
      const Node* defaults = p.Child("trace_packet_defaults");
      EXPECT_NE(defaults, nullptr);
      if (defaults) EXPECT_EQ(defaults->Get("timestamp_clock_id"), "3");  // MONOTONIC
    }
    if (const Node* data = p.Child("interned_data")) {
      for (const char* kind : {"event_categories", "event_names", "debug_annotation_names",
                               "debug_annotation_string_values"}) {
        for (const Node* entry : data->All(kind)) {
          const std::string text = entry->Has("str") ? entry->Get("str") : entry->Get("name");
          EXPECT_TRUE(interned[kind].emplace(entry->Uint("iid"), text).second)
              << kind << " iid " << entry->Uint("iid") << " interned twice";
        }
      }
    }
    if (const Node* track = p.Child("track_descriptor")) {
      EXPECT_TRUE(out.tracks.emplace(track->Uint("uuid"), track).second);
      if (track->Has("parent_uuid")) EXPECT_TRUE(out.tracks.count(track->Uint("parent_uuid")));
    }
    const Node* e = p.Child("track_event");
    if (!e) continue;
    EXPECT_EQ(p.Get("sequence_flags"), "2") << "events rely on incremental state";
    const uint64_t track = e->Uint("track_uuid");
    EXPECT_TRUE(out.tracks.count(track)) << "event on undescribed track " << track;
    const uint64_t ts = p.Uint("timestamp");
    const std::string type = e->Get("type");
    if (type == "TYPE_SLICE_BEGIN") {
      Slice slice{track,
                  ts,
                  0,
                  lookup("event_names", e->Uint("name_iid")),
                  lookup("event_categories", e->Uint("category_iids")),
                  {},
                  {},
                  {}};
      for (const Node* a : e->All("debug_annotations")) {
        std::string value = a->Has("string_value_iid") ? lookup("debug_annotation_string_values",
                                                                a->Uint("string_value_iid"))
                            : a->Has("uint_value")     ? a->Get("uint_value")
                            : a->Has("double_value")   ? a->Get("double_value")
                                                       : a->Get("string_value");
        slice.args[lookup("debug_annotation_names", a->Uint("name_iid"))] = value;
      }
      for (const auto& v : e->Values("flow_ids")) slice.flows_out.push_back(std::stoull(v));
      for (const auto& v : e->Values("terminating_flow_ids")) {
        slice.flows_in.push_back(std::stoull(v));
      }
      events[track].push_back({ts, i, true, out.slices.size()});
      out.slices.push_back(slice);
    } else if (type == "TYPE_SLICE_END") {
      events[track].push_back({ts, i, false, 0});
    } else if (type == "TYPE_INSTANT") {
      out.instants.push_back({lookup("event_names", e->Uint("name_iid")), track});
    } else if (type == "TYPE_COUNTER") {
      out.counters[track].push_back(e->Has("counter_value")
                                        ? static_cast<double>(std::stoll(e->Get("counter_value")))
                                        : std::stod(e->Get("double_counter_value")));
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
    ASSERT_TRUE(ExportPerfetto(MakeTimelineTrace(), TimelineOptions{}, out, &stats_).ok());
    bytes_ = out.str();
    text_ = Decode(bytes_);
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
  const Node* snapshot = root_.All("packet")[1]->Child("clock_snapshot");
  ASSERT_NE(snapshot, nullptr);
  EXPECT_EQ(snapshot->Get("primary_trace_clock"), "3");
  auto clocks = snapshot->All("clocks");
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks[0]->Get("timestamp"), "1000");
  EXPECT_EQ(clocks[1]->Get("clock_id"), "1");  // REALTIME, from the trace's clock record
}

TEST_F(PerfettoExport, TracksForThreadsStreamsAndCounters) {
  const Slice* gemm = Find("gemm(float*, float*, int)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(TrackName(gemm->track), "stream 7");
  EXPECT_EQ(TrackName(Parent(gemm->track)), "GPU 0 (NVIDIA H100 80GB HBM3)");
  EXPECT_EQ(gemm->start, 10'000u);
  EXPECT_EQ(gemm->end, 20'000u);
  EXPECT_EQ(gemm->category, "kernel");

  const Slice* launch = Find("cudaLaunchKernel", 1);
  ASSERT_NE(launch, nullptr);
  const Node* thread = decoded_.tracks.at(launch->track)->Child("thread");
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ(thread->Get("pid"), "100");
  EXPECT_EQ(thread->Get("tid"), "101");
  EXPECT_EQ(thread->Get("thread_name"), "main");
  EXPECT_EQ(TrackName(Parent(launch->track)), "python3 train.py");

  // The nested driver call sits on the thread's second lane, a child of the thread.
  const Slice* driver = Find("cuLaunchKernel");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(TrackName(driver->track), "main (lane 2)");
  EXPECT_EQ(Parent(driver->track), launch->track);
  EXPECT_EQ(driver->category, "cuda_driver");

  const Slice* copy = Find("Memcpy HtoD");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(TrackName(copy->track), "stream 8 memcpy");
  EXPECT_EQ(copy->args.at("bytes"), "1000000");
  EXPECT_EQ(copy->args.at("bandwidth_GBps"), "20");
  EXPECT_EQ(copy->args.at("src_kind"), "pinned");
  ASSERT_NE(Find("Memset"), nullptr);
  EXPECT_EQ(TrackName(Find("Memset")->track), "stream 8 memset");

  const Slice* step = Find("step");
  const Slice* forward = Find("forward");
  ASSERT_TRUE(step && forward);
  EXPECT_EQ(TrackName(step->track), "main NVTX");
  EXPECT_EQ(TrackName(forward->track), "main NVTX (lane 2)");
  EXPECT_EQ(Find("lost"), nullptr) << "a range that never ended is not drawn";
  EXPECT_EQ(stats_.unfinished_ranges, 1u);
  ASSERT_EQ(decoded_.instants.size(), 1u);
  EXPECT_EQ(decoded_.instants[0].first, "checkpoint");
  EXPECT_EQ(decoded_.instants[0].second, step->track);
}

TEST_F(PerfettoExport, KernelArgumentsAndLaunchStack) {
  const Slice* gemm = Find("gemm(float*, float*, int)");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->args.at("grid"), "[64, 2, 1]");
  EXPECT_EQ(gemm->args.at("block"), "[256, 1, 1]");
  EXPECT_EQ(gemm->args.at("registers_per_thread"), "32");
  EXPECT_EQ(gemm->args.at("static_shared_bytes"), "1024");
  EXPECT_EQ(gemm->args.at("dynamic_shared_bytes"), "2048");
  EXPECT_EQ(gemm->args.at("correlation_id"), "1");

  const Slice* launch = Find("cudaLaunchKernel", 1);
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->args.at("launch_stack"),
            "launch_gemm (gemm.cu:30)\nModel::forward (model.cc:20)\nmain (main.cc:10)");
  // The driver call nested in it shares the outermost call's stack.
  EXPECT_EQ(Find("cuLaunchKernel")->args.at("launch_stack"), launch->args.at("launch_stack"));
  // Every launch uses one stack: its text is interned once.
  size_t stack_texts = 0;
  for (const Node* p : root_.All("packet")) {
    if (const Node* data = p->Child("interned_data")) {
      for (const Node* s : data->All("debug_annotation_string_values")) {
        stack_texts += s->Get("str").find("launch_gemm") != std::string::npos;
      }
    }
  }
  EXPECT_EQ(stack_texts, 1u);
}

TEST_F(PerfettoExport, FlowsJoinEachLaunchToItsGpuWork) {
  std::map<uint64_t, const Slice*> starts, ends;
  for (const Slice& s : decoded_.slices) {
    for (uint64_t id : s.flows_out) EXPECT_TRUE(starts.emplace(id, &s).second);
    for (uint64_t id : s.flows_in) EXPECT_TRUE(ends.emplace(id, &s).second);
  }
  ASSERT_EQ(starts.size(), ends.size());
  for (const auto& [id, from] : starts) {
    ASSERT_TRUE(ends.count(id)) << "flow " << id << " has no end";
    EXPECT_EQ(from->args.at("correlation_id"), ends[id]->args.at("correlation_id"));
  }
  // 1 -> gemm, 3 -> three relu kernels (graph launch), 6 -> the overlapping kernel,
  // 7 -> the copy. Correlation 4 (no call) and 5 (no GPU work) have none.
  EXPECT_EQ(starts.size(), 6u);
  EXPECT_EQ(stats_.flows, 6u);
  EXPECT_EQ(Find("cudaGraphLaunch")->flows_out.size(), 3u);
  EXPECT_TRUE(Find("relu_kernel", 4)->flows_in.empty());
  EXPECT_TRUE(Find("cudaDeviceSynchronize")->flows_out.empty());
}

TEST_F(PerfettoExport, OverlappingKernelsGoToAnotherLane) {
  // Bytes that are not UTF-8 are \xNN text (base/text_escape.h).
  const Slice* nasty = Find(Utf8Text(testing::kNastyKernelName));
  ASSERT_NE(nasty, nullptr);
  EXPECT_EQ(TrackName(nasty->track), "stream 7 (lane 2)");
  // No two slices on one track partially overlap.
  for (const Slice& a : decoded_.slices) {
    for (const Slice& b : decoded_.slices) {
      if (&a == &b || a.track != b.track) continue;
      const bool disjoint = a.end <= b.start || b.end <= a.start;
      const bool nested =
          (a.start <= b.start && b.end <= a.end) || (b.start <= a.start && a.end <= b.end);
      EXPECT_TRUE(disjoint || nested) << a.name << " and " << b.name;
    }
  }
}

TEST_F(PerfettoExport, CountersForMemoryAndBusyTime) {
  std::map<std::string, std::vector<double>> by_name;
  for (const auto& [track, values] : decoded_.counters) by_name[TrackName(track)] = values;
  ASSERT_TRUE(by_name.count("GPU 0 memory in use"));
  EXPECT_EQ(by_name["GPU 0 memory in use"], (std::vector<double>{1 << 20, 0}));
  ASSERT_TRUE(by_name.count("GPU 0 busy %"));
  // Kernels cover 10..26 µs of the first 1 ms bucket (16 µs): 1.6%, then idle.
  EXPECT_EQ(by_name["GPU 0 busy %"], (std::vector<double>{1.6, 0}));
  for (const auto& [uuid, track] : decoded_.tracks) {
    if (track->Get("name") == "GPU 0 memory in use") {
      ASSERT_NE(track->Child("counter"), nullptr);
      EXPECT_EQ(track->Child("counter")->Get("unit"), "UNIT_SIZE_BYTES");
    }
  }
}

TEST_F(PerfettoExport, MatchesGolden) {
  EXPECT_MATCHES_GOLDEN(text_, "export/timeline.perfetto.txt");
}

}  // namespace
}  // namespace gpuperf
