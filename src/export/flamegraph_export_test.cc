// Folded and SVG flame graph output: goldens of a realistic trace (bless with
// GPUPERF_BLESS=1), and properties that must hold whatever the design.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "export/flamegraph_svg.h"
#include "export/folded.h"
#include "support/golden.h"
#include "support/model_trace.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

std::string Svg(const Trace& trace, const FlameGraphOptions& options = {},
                const FlameGraphSvgOptions& svg = {}) {
  std::ostringstream out;
  Status status = ExportFlamegraphSvg(trace, options, svg, out);
  EXPECT_TRUE(status.ok()) << status.message();
  return out.str();
}

std::string FoldedText(const Trace& trace, const FlameGraphOptions& options = {}) {
  std::ostringstream out;
  Status status = ExportFolded(trace, options, out);
  EXPECT_TRUE(status.ok()) << status.message();
  return out.str();
}

// The frames of an SVG: (class, name, data-v) per <g class="f ...">.
struct SvgFrame {
  std::string kind;
  std::string name;
  uint64_t value = 0;
  double width = 0;
  std::string fill;
};

std::vector<SvgFrame> ParseFrames(const std::string& svg) {
  static const std::regex frame_re(
      R"re(<g class="f (\w)" data-o="\d+" data-v="(\d+)"[^>]*><title>([^<]*)</title><rect [^>]*width="([\d.]+)"[^>]*fill="(#[0-9a-f]{6})")re");
  std::vector<SvgFrame> frames;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), frame_re);
       it != std::sregex_iterator(); ++it) {
    SvgFrame f;
    f.kind = (*it)[1];
    f.value = std::stoull((*it)[2]);
    f.name = (*it)[3];
    f.width = std::stod((*it)[4]);
    f.fill = (*it)[5];
    frames.push_back(f);
  }
  return frames;
}

TEST(FoldedGolden, ModelTrace) {
  Trace trace = testing::ModelTrace();
  EXPECT_MATCHES_GOLDEN(FoldedText(trace), "flamegraph/model.folded");
  FlameGraphOptions inverted;
  inverted.inverted = true;
  EXPECT_MATCHES_GOLDEN(FoldedText(trace, inverted), "flamegraph/model_inverted.folded");
  FlameGraphOptions by_stream;
  by_stream.split = FlameSplit::kStream;
  by_stream.weight = FlameWeight::kCount;
  EXPECT_MATCHES_GOLDEN(FoldedText(trace, by_stream), "flamegraph/model_stream_count.folded");
}

TEST(SvgGolden, ModelTrace) {
  Trace trace = testing::ModelTrace();
  EXPECT_MATCHES_GOLDEN(Svg(trace), "flamegraph/model.svg");
  FlameGraphOptions inverted;
  inverted.inverted = true;
  EXPECT_MATCHES_GOLDEN(Svg(trace, inverted), "flamegraph/model_inverted.svg");
}

TEST(FlamegraphSvg, IsDeterministicAndSelfContained) {
  Trace trace = testing::ModelTrace();
  const std::string svg = Svg(trace);
  EXPECT_EQ(svg, Svg(trace));
  EXPECT_EQ(svg.find("http://www.w3.org/2000/svg"), svg.find("http"));  // only namespaces
  EXPECT_EQ(svg.find("<script src"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_NE(svg.find("<script type=\"text/ecmascript\"><![CDATA["), std::string::npos);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
}

TEST(FlamegraphSvg, WidthsFollowGpuTimeAndTotalsStayExact) {
  Trace trace = testing::ModelTrace();
  auto graph = BuildFlameGraph(trace, {});
  ASSERT_TRUE(graph.ok());
  const std::vector<SvgFrame> frames = ParseFrames(Svg(trace));
  ASSERT_FALSE(frames.empty());
  ASSERT_EQ(frames[0].kind, "r");
  EXPECT_EQ(frames[0].value, graph->summary.gpu_ns);  // the hidden tiny kernel included
  EXPECT_DOUBLE_EQ(frames[0].width, 1180.0);
  for (const SvgFrame& f : frames) {
    EXPECT_NEAR(f.width, 1180.0 * f.value / frames[0].value, 0.051) << f.name;
    EXPECT_NE(f.fill, "#e600e6") << "no palette may use the search highlight colour";
  }
}

TEST(FlamegraphSvg, PalettesSeparateCpuApiAndGpuFrames) {
  const std::vector<SvgFrame> frames = ParseFrames(Svg(testing::ModelTrace()));
  std::map<std::string, std::set<std::string>> fills_by_kind;
  std::map<std::string, std::string> fill_of_name;
  for (const SvgFrame& f : frames) {
    fills_by_kind[f.kind].insert(f.fill);
    // Deterministic colours: a name has one colour wherever it appears.
    auto [it, inserted] = fill_of_name.emplace(f.kind + f.name, f.fill);
    EXPECT_EQ(it->second, f.fill) << f.name;
  }
  for (const char* kind : {"c", "a", "g", "k", "m", "s", "x"}) {
    EXPECT_FALSE(fills_by_kind[kind].empty()) << "the model trace has frames of kind " << kind;
  }
  auto hue_family = [](const std::string& hex) {
    const int r = std::stoi(hex.substr(1, 2), nullptr, 16);
    const int g = std::stoi(hex.substr(3, 2), nullptr, 16);
    const int b = std::stoi(hex.substr(5, 2), nullptr, 16);
    if (r > g && r > b) return 'w';    // warm
    if (g >= r && g >= b) return 'g';  // green/teal
    return 'b';                        // blue/violet
  };
  for (const std::string& fill : fills_by_kind["c"]) EXPECT_EQ(hue_family(fill), 'w') << fill;
  for (const std::string& fill : fills_by_kind["k"]) EXPECT_EQ(hue_family(fill), 'g') << fill;
  for (const std::string& fill : fills_by_kind["m"]) EXPECT_EQ(hue_family(fill), 'b') << fill;
  for (const std::string& fill : fills_by_kind["a"]) EXPECT_EQ(hue_family(fill), 'b') << fill;
}

TEST(FlamegraphSvg, NarrowFramesAreLeftOutButCounted) {
  Trace trace = testing::ModelTrace();
  const std::string svg = Svg(trace);
  const std::vector<SvgFrame> frames = ParseFrames(svg);
  for (const SvgFrame& f : frames) EXPECT_EQ(f.name.find("tiny_fixup"), std::string::npos);
  EXPECT_NE(svg.find("frame narrower than 0.05% not drawn"), std::string::npos);

  FlameGraphSvgOptions everything;
  everything.min_width_fraction = 0;
  bool found = false;
  for (const SvgFrame& f : ParseFrames(Svg(trace, {}, everything))) {
    found |= f.name == "[GPU0] tiny_fixup";
  }
  EXPECT_TRUE(found);
}

TEST(FlamegraphSvg, TitleAndSubtitleCarryTheTotals) {
  FlameGraphSvgOptions svg_options;
  svg_options.title = "Step <3> & more";
  const std::string svg = Svg(testing::ModelTrace(), {}, svg_options);
  EXPECT_NE(svg.find(">Step &lt;3&gt; &amp; more</text>"), std::string::npos);
  EXPECT_NE(svg.find("31 kernels"), std::string::npos);
  EXPECT_NE(svg.find("4 copies"), std::string::npos);
  EXPECT_NE(svg.find("4 sets"), std::string::npos);
  EXPECT_NE(svg.find("1 process"), std::string::npos);
  EXPECT_NE(svg.find("2 devices"), std::string::npos);
  EXPECT_NE(svg.find("2 without launch stack"), std::string::npos);
}

TEST(FlamegraphSvg, SubtitleNamesTheThreadFilter) {
  FlameGraphOptions options;
  options.tid = 424242;  // no thread of the model trace: everything is left out
  const std::string svg = Svg(testing::ModelTrace(), options);
  EXPECT_NE(svg.find("filter: tid 424242 ("), std::string::npos);
}

TEST(FlamegraphSvg, NamesAreEscapedAndLabelsFitTheirFrames) {
  testing::TestTrace t;
  const StackId s = t.Stack(1, {"main", "std::vector<int, std::allocator<int> >::push_back&"});
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "_ZN2at6native6kernelIfEEvPT_i", 1, 0, 1000);
  t.Link(1, 1, 2, s, "cudaLaunchKernel");
  t.Kernel(1, "short", 2, 0, 30);  // 3% of the width: a few characters at most
  FlameGraphOptions full;
  full.full_names = true;
  const std::string svg = Svg(t.trace(), full);
  EXPECT_NE(svg.find("<title>[GPU0] void at::native::kernel&lt;float&gt;(float*, int)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("push_back&amp;"), std::string::npos);
  // Each label is no wider than its frame (monospace, 12px).
  static const std::regex label_re(
      R"re(width="([\d.]+)" height="16"[^>]*/><text [^>]*>([^<]*)</text>)re");
  int labels = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label_re);
       it != std::sregex_iterator(); ++it) {
    std::string label = (*it)[2];
    size_t chars = 0;
    for (unsigned char c : label) chars += (c & 0xC0) != 0x80;
    EXPECT_LE(chars * 7.3, std::stod((*it)[1]) + 0.01) << label;
    ++labels;
  }
  EXPECT_GE(labels, 5);
}

// The label of a frame, by its full name (the <title>).
std::string LabelOf(const std::string& svg, const std::string& name) {
  size_t at = svg.find("<title>" + name + "</title>");
  if (at == std::string::npos) return "(no frame " + name + ")";
  size_t text = svg.find("<text ", at);
  size_t begin = svg.find('>', text) + 1;
  return svg.substr(begin, svg.find("</text>", begin) - begin);
}

TEST(FlamegraphSvg, NarrowLabelsDropPrefixesAndNamespacesBeforeCuttingTheEnd) {
  testing::TestTrace t;
  const StackId s = t.Stack(1, {"main"});
  const char* kernels[] = {"big", "_Z13matmul_kernelPKfS0_Pfiii",
                           "_ZN2at6native29vectorized_elementwise_kernelILi4EEEvi", "_Z3fooi"};
  const uint64_t durations[] = {700, 100, 200, 100};
  for (uint32_t i = 0; i < 4; ++i) {
    t.Link(1, 1, i + 1, s, "cudaLaunchKernel");
    t.Kernel(1, kernels[i], i + 1, 0, durations[i]);
  }
  FlameGraphOptions full;
  full.full_names = true;
  const std::string svg = Svg(t.trace(), full);
  // ~107 px, 13 characters: the "[GPU0] " prefix goes first, then the end is cut.
  EXPECT_EQ(LabelOf(svg, "[GPU0] matmul_kernel(float const*, float const*, float*, int, int, int)"),
            "matmul_kerne\u2026");
  // ~214 px, 28 characters: prefix, return type and namespaces go, then the end is cut.
  EXPECT_EQ(LabelOf(svg, "[GPU0] void at::native::vectorized_elementwise_kernel&lt;4&gt;(int)"),
            "vectorized_elementwise_kern\u2026");
  // 15 characters in 13: without its prefix the name fits, uncut.
  EXPECT_EQ(LabelOf(svg, "[GPU0] foo(int)"), "foo(int)");
}

TEST(FlamegraphSvg, InvertedDrawsTheRootAtTheTop) {
  const std::string normal = Svg(testing::ModelTrace());
  FlameGraphOptions options;
  options.inverted = true;
  const std::string inverted = Svg(testing::ModelTrace(), options);
  std::smatch m;
  static const std::regex root_y(
      R"re(<g class="f r"[^>]*><title>all</title><rect x="[\d.]+" y="(\d+)")re");
  ASSERT_TRUE(std::regex_search(normal, m, root_y));
  const int normal_y = std::stoi(m[1]);
  ASSERT_TRUE(std::regex_search(inverted, m, root_y));
  const int inverted_y = std::stoi(m[1]);
  EXPECT_LT(inverted_y, normal_y);
  // Inverted: the first level under the root is GPU frames.
  for (const SvgFrame& f : ParseFrames(inverted)) {
    if (f.name.starts_with("[GPU")) continue;
    if (f.kind == "r") continue;
    EXPECT_NE(f.kind, "k");
  }
  EXPECT_NE(inverted.find("then the CPU call stacks that launched it"), std::string::npos);
}

TEST(FlamegraphSvg, EmptyGraphStillRenders) {
  testing::TestTrace t;
  const std::string svg = Svg(t.trace());
  const auto frames = ParseFrames(svg);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].kind, "r");
  EXPECT_NE(svg.find("0 kernels"), std::string::npos);
}

TEST(FlamegraphSvg, RejectsABadMinimumWidth) {
  FlameGraphSvgOptions svg_options;
  svg_options.min_width_fraction = 2;
  std::ostringstream out;
  EXPECT_EQ(ExportFlamegraphSvg(testing::ModelTrace(), {}, svg_options, out).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpuperf

namespace gpuperf {
namespace {

// Python frames have a colour class of their own, and the legend names it only where
// there are Python frames: graphs without them are drawn as before.
TEST(FlamegraphSvg, PythonFramesHaveTheirOwnClassAndLegend) {
  testing::TestTrace t;
  const StackId s = t.Stack(1, {"python3.11!_PyEval_EvalFrameDefault", "launch_op"});
  t.PythonCode(1, 1, "Model.forward", "/src/model.py", 20);
  t.AddPythonFrame(s, 1, 0, true);
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "gemm", 1, 0, 100);
  const std::string svg = Svg(t.trace());
  bool found = false;
  for (const SvgFrame& frame : ParseFrames(svg)) {
    if (frame.name != "Model.forward (model.py:21)") continue;
    found = true;
    EXPECT_EQ(frame.kind, "p");
  }
  EXPECT_TRUE(found) << svg;
  EXPECT_NE(svg.find(">Python frame</text>"), std::string::npos);
  EXPECT_EQ(Svg(testing::ModelTrace()).find(">Python frame</text>"), std::string::npos);
}

}  // namespace
}  // namespace gpuperf
