// The timeline analysis without a serializer: the events BuildTimeline draws, kept as
// they arrive, checked for what the (pid, correlation id) join must give them.
#include "analyze/timeline/timeline_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::TestTrace;

struct LoggedSlice {
  uint32_t pid = 0;
  TrackKind kind = TrackKind::kThread;
  std::string name;
  std::vector<uint64_t> flows_out;
  uint64_t flow_in = 0;
  std::string stack;
};

// A launch stack as a listing shows it: innermost frame first, one per line.
std::string StackText(const TimelineStack* stack) {
  std::string text;
  for (const TimelineFrame& frame : stack ? stack->frames : std::span<const TimelineFrame>()) {
    if (!text.empty()) text += '\n';
    text += frame.text.text;
  }
  return text;
}

// A TimelineWriter that keeps every slice with the track it went to.
class EventLog final : public TimelineWriter {
 public:
  void Begin(const TimelineClock&, const TimelineNotes&) override {}
  void DefineTrack(const TimelineTrack& track) override { tracks_[track.id] = track; }
  void Slice(const TimelineSlice& slice) override {
    const TimelineTrack& track = tracks_.at(slice.track);
    LoggedSlice logged{track.pid,
                       track.kind,
                       std::string(slice.name.text),
                       {slice.flows_out.begin(), slice.flows_out.end()},
                       slice.flow_in,
                       StackText(slice.stack)};
    slices.push_back(std::move(logged));
  }
  void Instant(uint32_t, uint64_t, InternedText, InternedText) override {}
  void Counter(uint32_t, uint64_t, double) override {}
  Status Finish() override { return Status::Ok(); }

  std::vector<LoggedSlice> slices;

 private:
  std::map<uint32_t, TimelineTrack> tracks_;
};

void Api(TestTrace& t, uint32_t pid, uint32_t correlation_id, uint64_t start_ns) {
  ApiRecord api;
  api.pid = pid;
  api.tid = pid;
  api.domain = ApiDomain::kRuntime;
  api.name = t.Str("cudaLaunchKernel");
  api.start_ns = start_ns;
  api.end_ns = start_ns + 5;
  api.correlation_id = correlation_id;
  t.trace().apis.push_back(api);
}

EventLog Draw(const Trace& trace) {
  EventLog log;
  TimelineStats stats;
  Status status = BuildTimeline(
      [&trace](RecordSink& sink, std::span<const uint16_t>) {
        ReplayTrace(trace, sink);
        return Status::Ok();
      },
      TimelineOptions{}, log, &stats);
  EXPECT_TRUE(status.ok()) << status.message();
  return log;
}

const LoggedSlice* ApiSlice(const EventLog& log, uint32_t pid, size_t nth) {
  for (const LoggedSlice& s : log.slices) {
    if (s.pid == pid && s.kind == TrackKind::kThread && nth-- == 0) return &s;
  }
  return nullptr;
}

// A text interned again, from a temporary the caller drops at once, must come back as the
// stored copy: writers keep the view and send it again later (Perfetto, on each packet
// sequence that uses it).
TEST(TimelineNames, InterningAgainGivesTheStoredText) {
  TimelineNames names;
  const InternedText first = names.Intern(std::string("Memcpy ") + "HtoD");
  const InternedText again = names.Intern(std::string("Memcpy ") + "HtoD");
  EXPECT_EQ(again.key, first.key);
  EXPECT_EQ(again.text.data(), first.text.data());
  EXPECT_EQ(again.text, "Memcpy HtoD");
}

TEST(TimelineBuilder, ProcessesWithTheSameCorrelationIdsStayApart) {
  TestTrace t;
  const StackId a = t.Stack(10, {"main", "proc_a_step"});
  const StackId b = t.Stack(20, {"main", "proc_b_step"});
  Api(t, 10, 1, 100);
  t.Link(10, 10, 1, a, "cudaLaunchKernel");
  t.Kernel(10, "k_a", 1, 200, 300);
  Api(t, 10, 2, 110);  // a call without GPU work: no arrow
  Api(t, 20, 1, 100);
  t.Link(20, 20, 1, b, "cudaLaunchKernel");
  t.Kernel(20, "k_b", 1, 200, 300);
  t.Kernel(20, "k_b", 1, 300, 400);
  t.Kernel(20, "k_orphan", 3, 400, 500);  // GPU work without a call: no arrow

  const EventLog log = Draw(t.trace());
  const LoggedSlice* launch_a = ApiSlice(log, 10, 0);
  const LoggedSlice* idle_a = ApiSlice(log, 10, 1);
  const LoggedSlice* launch_b = ApiSlice(log, 20, 0);
  ASSERT_TRUE(launch_a && idle_a && launch_b);
  EXPECT_EQ(launch_a->flows_out.size(), 1u);
  EXPECT_TRUE(idle_a->flows_out.empty());
  EXPECT_EQ(launch_b->flows_out.size(), 2u);
  EXPECT_NE(launch_a->stack.find("proc_a_step"), std::string::npos) << launch_a->stack;
  EXPECT_NE(launch_b->stack.find("proc_b_step"), std::string::npos) << launch_b->stack;

  // Every arrow that ends on a GPU slice starts at the launch of its own process.
  std::map<uint32_t, std::set<uint64_t>> flows_of;
  flows_of[10].insert(launch_a->flows_out.begin(), launch_a->flows_out.end());
  flows_of[20].insert(launch_b->flows_out.begin(), launch_b->flows_out.end());
  size_t arrows_in = 0;
  for (const LoggedSlice& s : log.slices) {
    if (s.kind != TrackKind::kGpuStream) continue;
    if (s.name == "k_orphan") {
      EXPECT_EQ(s.flow_in, 0u);
      continue;
    }
    EXPECT_EQ(flows_of[s.pid].count(s.flow_in), 1u) << s.name;
    ++arrows_in;
  }
  EXPECT_EQ(arrows_in, 3u);
}

TEST(TimelineBuilder, AGraphLaunchDrawsAtMostFifteenArrows) {
  TestTrace t;
  const StackId s = t.Stack(10, {"main", "replay"});
  Api(t, 10, 7, 0);
  t.Link(10, 10, 7, s, "cudaGraphLaunch");
  for (uint64_t i = 0; i < 20; ++i) t.Kernel(10, "node", 7, 100 + 10 * i, 105 + 10 * i);

  const EventLog log = Draw(t.trace());
  const LoggedSlice* launch = ApiSlice(log, 10, 0);
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->flows_out.size(), kMaxFlowsPerLaunch);
  std::set<uint64_t> ends;
  for (const LoggedSlice& slice : log.slices) {
    if (slice.kind == TrackKind::kGpuStream && slice.flow_in != 0) ends.insert(slice.flow_in);
  }
  EXPECT_EQ(ends, std::set<uint64_t>(launch->flows_out.begin(), launch->flows_out.end()));
}

// The API slice's stack: its innermost frames, then, because the user's Python code is
// further out than those, the innermost Python frames after a "..." line.
TEST(TimelineBuilder, ApiSliceStacksShowTheLaunchingPythonLines) {
  TestTrace t;
  std::vector<std::string> native = {"python3.11!_PyEval_EvalFrameDefault", "python3.11!call"};
  for (int i = 9; i >= 0; --i) native.push_back("op_" + std::to_string(i));
  const StackId s = t.Stack(10, native);
  t.PythonCode(10, 1, "Block.forward", "/src/model.py", 86);
  t.PythonCode(10, 2, "main", "/src/train.py", 4);
  t.AddPythonFrame(s, 1, 1, false);
  t.AddPythonFrame(s, 2, 0, true);
  Api(t, 10, 1, 100);
  t.Link(10, 10, 1, s, "cudaLaunchKernel");
  t.Kernel(10, "gemm", 1, 200, 300);
  const EventLog log = Draw(t.trace());
  const LoggedSlice* launch = ApiSlice(log, 10, 0);
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch->stack,
            "op_0 (app.cc:10)\nop_1 (app.cc:10)\nop_2 (app.cc:10)\nop_3 (app.cc:10)\n"
            "op_4 (app.cc:10)\nop_5 (app.cc:10)\nop_6 (app.cc:10)\nop_7 (app.cc:10)\n...\n"
            "Block.forward (model.py:87)\nmain (train.py:5)");
}

}  // namespace
}  // namespace gpuperf
