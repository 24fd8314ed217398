// Windows of a timeline: which events a window draws, which it leaves out and counts,
// and that an arrow is drawn only where both its ends are.
#include "analyze/timeline/timeline_window.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyze/timeline/timeline_builder.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::TestTrace;

TEST(StepName, NamesThatMarkSteps) {
  auto step = [](std::string_view name) { return ParseStepName(name); };
  EXPECT_TRUE(step("ProfilerStep#12").is_step);
  EXPECT_EQ(step("ProfilerStep#12").number, 12);
  EXPECT_EQ(step("step 3").number, 3);
  EXPECT_EQ(step("Step_7").number, 7);
  EXPECT_EQ(step("iteration:4").number, 4);
  EXPECT_TRUE(step("train_step").is_step);
  EXPECT_FALSE(step("train_step").number.has_value());
  EXPECT_TRUE(step("inference_step").is_step);
  EXPECT_TRUE(step("STEP").is_step);
  EXPECT_FALSE(step("stepper").is_step);
  EXPECT_FALSE(step("forward").is_step);
  EXPECT_FALSE(step("fp16").is_step);
  EXPECT_FALSE(step("").is_step);
}

// Keeps what the timeline draws: slices by name and the arrows that start and end.
class Drawn final : public TimelineWriter {
 public:
  void Begin(const TimelineClock&, const TimelineNotes& notes) override {
    window = std::string(notes.window);
  }
  void DefineTrack(const TimelineTrack&) override {}
  void Slice(const TimelineSlice& slice) override {
    names.emplace_back(slice.name.text);
    arrows_out += slice.flows_out.size();
    arrows_in += slice.flow_in != 0;
  }
  void Instant(uint32_t, uint64_t, InternedText name, InternedText) override {
    instants.emplace_back(name.text);
  }
  void Counter(uint32_t, uint64_t, double) override {}
  Status Finish() override { return Status::Ok(); }

  size_t Count(const std::string& name) const {
    return static_cast<size_t>(std::count(names.begin(), names.end(), name));
  }

  std::vector<std::string> names, instants;
  size_t arrows_out = 0, arrows_in = 0;
  std::string window;
};

void Api(TestTrace& t, uint32_t correlation_id, uint64_t start_ns) {
  ApiRecord api;
  api.pid = 10;
  api.tid = 10;
  api.domain = ApiDomain::kRuntime;
  api.name = t.Str("cudaLaunchKernel");
  api.start_ns = start_ns;
  api.end_ns = start_ns + 100;
  api.correlation_id = correlation_id;
  t.trace().apis.push_back(api);
}

void Step(TestTrace& t, const std::string& name, uint64_t start_ns, uint64_t end_ns) {
  t.trace().nvtxs.push_back({10, 10, NvtxKind::kRange, t.Str(name), 0, start_ns, end_ns, 0});
}

// Ten launches 1 µs apart from t = 1 ms, each with its kernel 500 ns later, in three
// steps of three launches (the tenth is after the last step).
TestTrace TenLaunches() {
  TestTrace t;
  t.Process(10, "python3 train.py");
  for (uint32_t i = 0; i < 10; ++i) {
    const uint64_t at = 1'000'000 + i * 1000;
    Api(t, i + 1, at);
    t.Kernel(10, "k" + std::to_string(i), i + 1, at + 500, at + 900);
  }
  for (uint32_t s = 0; s < 3; ++s) {
    Step(t, "train_step", 1'000'000 + s * 3000, 1'000'000 + s * 3000 + 2950);
  }
  return t;
}

Drawn Draw(const Trace& trace, const TimelineWindowRequest& window, TimelineStats* stats,
           Status* status = nullptr) {
  Drawn drawn;
  TimelineOptions options;
  options.window = window;
  Status result = BuildTimeline(
      [&trace](RecordSink& sink, std::span<const uint16_t>) {
        ReplayTrace(trace, sink);
        return Status::Ok();
      },
      options, drawn, stats);
  if (status) *status = result;
  return drawn;
}

TEST(TimelineWindow, FromAndToCountFromTheTracesFirstTimestamp) {
  TestTrace t = TenLaunches();
  t.trace().processes[0].start_ns = 999'000;  // the trace starts 1 µs before the first call
  TimelineStats stats;
  // [999 + 2.2, 999 + 5.4) µs = [1001.2, 1004.4) µs: calls 2 to 4 (at 1002, 1003 and
  // 1004 µs) and kernels 1 to 3 (at 1001.5, 1002.5 and 1003.5 µs).
  const Drawn drawn = Draw(t.trace(), {.from_ns = 2'200, .to_ns = 5'400}, &stats);
  EXPECT_EQ(drawn.Count("cudaLaunchKernel"), 3u);
  EXPECT_EQ(drawn.Count("k1") + drawn.Count("k2") + drawn.Count("k3"), 3u);
  EXPECT_EQ(drawn.Count("k0") + drawn.Count("k4"), 0u);
  EXPECT_EQ(stats.drawn.kernels, 3u);
  EXPECT_EQ(stats.left_out.kernels, 7u);
  EXPECT_EQ(stats.drawn.api_calls, 3u);
  EXPECT_EQ(stats.left_out.api_calls, 7u);
  // Arrows where both ends are drawn: calls 2 and 3 to their kernels. Kernel 1's call
  // and call 4's kernel are left out.
  EXPECT_EQ(drawn.arrows_out, 2u);
  EXPECT_EQ(drawn.arrows_in, 2u);
  EXPECT_EQ(stats.flows, 2u);
  EXPECT_EQ(stats.window, drawn.window);
  EXPECT_NE(stats.window.find("2.20 µs to 5.40 µs after the trace's start: left out 7 kernels"),
            std::string::npos)
      << stats.window;
  ASSERT_FALSE(drawn.instants.empty());
  EXPECT_EQ(drawn.instants[0], "gpuperf: window \u2014 " + stats.window);
}

TEST(TimelineWindow, StepsAreNumberedInTimeOrderWhenTheirNamesCarryNone) {
  TimelineStats stats;
  // Step 2 runs from 1003 to 1005.95 µs: calls 3 to 5 and their kernels (kernel 6
  // starts at 1006.5 µs); the step's own range is drawn, the other two are left out.
  const Drawn drawn = Draw(TenLaunches().trace(), {.steps = std::make_pair(2, 2)}, &stats);
  EXPECT_EQ(drawn.Count("cudaLaunchKernel"), 3u);
  EXPECT_EQ(drawn.Count("k3") + drawn.Count("k4") + drawn.Count("k5"), 3u);
  EXPECT_EQ(drawn.Count("k6"), 0u);
  EXPECT_EQ(drawn.Count("train_step"), 1u);
  EXPECT_EQ(stats.left_out.nvtx, 2u);
  EXPECT_EQ(stats.drawn.kernels, 3u);
  EXPECT_EQ(drawn.arrows_out, 3u);
}

TEST(TimelineWindow, AKernelCapEndsWhereTheNextKernelStarts) {
  TimelineStats stats;
  // The first four kernels; the window ends where the fifth starts (1004.5 µs), so call
  // 5 (at 1004 µs) is drawn, without an arrow.
  const Drawn drawn = Draw(TenLaunches().trace(), {.max_kernels = 4}, &stats);
  EXPECT_EQ(stats.drawn.kernels, 4u);
  EXPECT_EQ(stats.left_out.kernels, 6u);
  EXPECT_EQ(stats.drawn.api_calls, 5u);
  EXPECT_EQ(drawn.arrows_out, 4u);
  EXPECT_EQ(drawn.arrows_in, 4u);
}

TEST(TimelineWindow, AStepThatIsNotThereIsAnError) {
  TimelineStats stats;
  Status status;
  Draw(TenLaunches().trace(), {.steps = std::make_pair(4, 5)}, &stats, &status);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no step numbered 4 to 5 (its steps: 1 to 3)"), std::string::npos)
      << status.message();
}

TEST(TimelineWindow, WithoutAWindowEverythingIsDrawn) {
  TimelineStats stats;
  const Drawn drawn = Draw(TenLaunches().trace(), {}, &stats);
  EXPECT_EQ(stats.drawn.kernels, 10u);
  EXPECT_EQ(stats.left_out.kernels, 0u);
  EXPECT_EQ(drawn.arrows_out, 10u);
  EXPECT_TRUE(stats.window.empty());
  EXPECT_TRUE(drawn.window.empty());
}

}  // namespace
}  // namespace gpuperf
