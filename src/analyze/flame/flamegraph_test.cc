#include "analyze/flame/flamegraph.h"

#include <gtest/gtest.h>

#include <sstream>

#include "export/folded.h"
#include "gpuperf/stack_marker.h"
#include "support/model_trace.h"
#include "support/temp_dir.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::TestTrace;

std::string Folded(const Trace& trace, const FlameGraphOptions& options = {}) {
  std::ostringstream out;
  Status status = ExportFolded(trace, options, out);
  EXPECT_TRUE(status.ok()) << status.message();
  return out.str();
}

// Sum of the weights of folded lines, parsed back from the text.
uint64_t SumOfWeights(const std::string& folded) {
  std::istringstream in(folded);
  std::string line;
  uint64_t sum = 0;
  while (std::getline(in, line)) sum += std::stoull(line.substr(line.rfind(' ') + 1));
  return sum;
}

TEST(FlameGraph, WeightsAreExactNanosecondsOfGpuTime) {
  TestTrace t;
  const StackId s = t.Stack(1, {"main", "step"});
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Link(1, 1, 2, s, "cudaLaunchKernel");
  t.Link(1, 1, 3, s, "cudaLaunchKernel");
  t.Kernel(1, "gemm", 1, 1000, 2234);  // 1234 ns
  t.Kernel(1, "gemm", 2, 5000, 5850);  // 850 ns: a µs-truncating tool would say 0
  t.Kernel(1, "tiny", 3, 9000, 9001);  // 1 ns
  EXPECT_EQ(Folded(t.trace()),
            "main;step;cudaLaunchKernel;[GPU0] gemm 2084\n"
            "main;step;cudaLaunchKernel;[GPU0] tiny 1\n");

  FlameGraphOptions count;
  count.weight = FlameWeight::kCount;
  EXPECT_EQ(Folded(t.trace(), count),
            "main;step;cudaLaunchKernel;[GPU0] gemm 2\n"
            "main;step;cudaLaunchKernel;[GPU0] tiny 1\n");
}

TEST(FlameGraph, FoldedWeightsSumToTheTotalGpuTime) {
  Trace trace = testing::ModelTrace();
  uint64_t total = 0;
  for (const KernelRecord& k : trace.kernels) total += k.end_ns - k.start_ns;
  for (const MemcpyRecord& m : trace.memcpys) total += m.end_ns - m.start_ns;
  for (const MemsetRecord& m : trace.memsets) total += m.end_ns - m.start_ns;
  for (FlameSplit split :
       {FlameSplit::kNone, FlameSplit::kDevice, FlameSplit::kStream, FlameSplit::kThread}) {
    FlameGraphOptions options;
    options.split = split;
    EXPECT_EQ(SumOfWeights(Folded(trace, options)), total);
    options.inverted = true;
    EXPECT_EQ(SumOfWeights(Folded(trace, options)), total);
  }
  FlameGraphOptions count;
  count.weight = FlameWeight::kCount;
  EXPECT_EQ(SumOfWeights(Folded(trace, count)),
            trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
}

TEST(FlameGraph, GraphLaunchesNestedIdsCopiesAndSetsAreLabelled) {
  TestTrace t;
  const StackId s = t.Stack(1, {"main"});
  t.Link(1, 1, 10, s, "cudaGraphLaunch");
  for (int i = 0; i < 3; ++i) t.Kernel(1, "node", 10, 100 * i, 100 * i + 10).graph_id = 3;
  t.Link(1, 1, 20, s, "cudaLaunchKernel");
  t.Link(1, 1, 21, s, "cudaLaunchKernel");  // the nested cuLaunchKernel's id
  t.Kernel(1, "k", 21, 0, 5, /*device=*/1);
  t.Link(1, 1, 30, s, "cudaMemcpyAsync");
  t.Memcpy(1, MemcpyKind::kDtoH, 30, 0, 7);
  t.Link(1, 1, 40, s, "cudaMemsetAsync");
  t.Memset(1, 40, 0, 9);
  EXPECT_EQ(Folded(t.trace()),
            "main;cudaGraphLaunch;[graph 3];[GPU0] node 30\n"
            "main;cudaLaunchKernel;[GPU1] k 5\n"
            "main;cudaMemcpyAsync;[GPU0] memcpy DtoH 7\n"
            "main;cudaMemsetAsync;[GPU0] memset 9\n");
}

TEST(FlameGraph, UnmatchedActivitiesAreShownAndCounted) {
  TestTrace t;
  const StackId s = t.Stack(1, {"main"});
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "ok", 1, 0, 100);
  t.Kernel(1, "orphan", 2, 0, 40);       // no link
  t.Link(1, 1, 3, 0, "cuLaunchKernel");  // no stack
  t.Kernel(1, "unwound_badly", 3, 0, 30);
  t.Link(1, 1, 4, 77, "cuLaunchKernel");  // stack chunk lost
  t.Kernel(1, "lost", 4, 0, 20);
  EXPECT_EQ(Folded(t.trace()),
            "[stack missing from trace];cuLaunchKernel;[GPU0] lost 20\n"
            "[stack unavailable];cuLaunchKernel;[GPU0] unwound_badly 30\n"
            "[unknown launch];[GPU0] orphan 40\n"
            "main;cudaLaunchKernel;[GPU0] ok 100\n");
  auto graph = BuildFlameGraph(t.trace(), {});
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->summary.unmatched, 3u);
  EXPECT_EQ(graph->summary.unmatched_ns, 90u);
  EXPECT_EQ(graph->summary.correlation.kernels.no_link, 1u);
  EXPECT_EQ(graph->summary.correlation.kernels.no_stack, 1u);
  EXPECT_EQ(graph->summary.correlation.kernels.stack_lost, 1u);
}

TEST(FlameGraph, NamesAreDemangledAndShortenedUnlessAsked) {
  TestTrace t;
  const StackId s = t.Stack(1, {"main", "ns::Runner::run(int, float) const"});
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "_ZN2at6native6kernelIfEEvPT_i", 1, 0, 10);
  EXPECT_EQ(Folded(t.trace()),
            "main;ns::Runner::run;cudaLaunchKernel;[GPU0] at::native::kernel 10\n");

  FlameGraphOptions full;
  full.full_names = true;
  EXPECT_EQ(Folded(t.trace(), full),
            "main;ns::Runner::run(int, float) const;cudaLaunchKernel;"
            "[GPU0] void at::native::kernel<float>(float*, int) 10\n");

  FlameGraphOptions mangled;
  mangled.demangle = false;
  EXPECT_EQ(Folded(t.trace(), mangled),
            "main;ns::Runner::run;cudaLaunchKernel;[GPU0] _ZN2at6native6kernelIfEEvPT_i 10\n");
}

TEST(FlameGraph, SplitByDeviceStreamOrThreadAddsARootFrame) {
  TestTrace t;
  t.Thread(1, 2, "loader");
  const StackId s = t.Stack(1, {"main"});
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Link(1, 2, 2, s, "cudaLaunchKernel");
  t.Kernel(1, "k", 1, 0, 10, /*device=*/0, /*stream=*/7);
  t.Kernel(1, "k", 2, 0, 20, /*device=*/1, /*stream=*/9);
  FlameGraphOptions options;
  options.split = FlameSplit::kDevice;
  EXPECT_EQ(Folded(t.trace(), options),
            "[GPU0];main;cudaLaunchKernel;[GPU0] k 10\n"
            "[GPU1];main;cudaLaunchKernel;[GPU1] k 20\n");
  options.split = FlameSplit::kStream;
  EXPECT_EQ(Folded(t.trace(), options),
            "[GPU0 stream 7];main;cudaLaunchKernel;[GPU0] k 10\n"
            "[GPU1 stream 9];main;cudaLaunchKernel;[GPU1] k 20\n");
  options.split = FlameSplit::kThread;
  EXPECT_EQ(Folded(t.trace(), options),
            "[thread 1];main;cudaLaunchKernel;[GPU0] k 10\n"
            "[thread 2 loader];main;cudaLaunchKernel;[GPU1] k 20\n");
}

TEST(FlameGraph, SeveralProcessesGetARootFrameEach) {
  TestTrace t;
  t.Process(1, "python3 train.py");
  t.Process(2, "./infer");
  const StackId a = t.Stack(1, {"main"});
  const StackId b = t.Stack(2, {"main"});
  t.Link(1, 1, 1, a, "cudaLaunchKernel");
  t.Link(2, 2, 1, b, "cudaLaunchKernel");
  t.Kernel(1, "k", 1, 0, 10);
  t.Kernel(2, "k", 1, 0, 20);
  EXPECT_EQ(Folded(t.trace()),
            "[pid 1] python3 train.py;main;cudaLaunchKernel;[GPU0] k 10\n"
            "[pid 2] ./infer;main;cudaLaunchKernel;[GPU0] k 20\n");
  FlameGraphOptions only;
  only.pid = 2;
  EXPECT_EQ(Folded(t.trace(), only), "main;cudaLaunchKernel;[GPU0] k 20\n");
  auto graph = BuildFlameGraph(t.trace(), only);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->summary.filtered_out, 1u);
  EXPECT_EQ(graph->summary.processes, 1u);
}

TEST(FlameGraph, KernelRegexKeepsMatchingGpuFramesOnly) {
  TestTrace t;
  const StackId s = t.Stack(1, {"main"});
  for (uint32_t i = 1; i <= 3; ++i) t.Link(1, 1, i, s, "cudaLaunchKernel");
  t.Kernel(1, "sgemm_128", 1, 0, 10);
  t.Kernel(1, "softmax", 2, 0, 20);
  t.Memcpy(1, MemcpyKind::kHtoD, 3, 0, 30);
  FlameGraphOptions options;
  options.kernel_regex = "gemm|memcpy";
  EXPECT_EQ(Folded(t.trace(), options),
            "main;cudaLaunchKernel;[GPU0] memcpy HtoD 30\n"
            "main;cudaLaunchKernel;[GPU0] sgemm_128 10\n");
  auto graph = BuildFlameGraph(t.trace(), options);
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->summary.filtered_out, 1u);
  EXPECT_EQ(graph->summary.gpu_ns, 40u);

  options.kernel_regex = "([unclosed";
  auto bad = BuildFlameGraph(t.trace(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("([unclosed"), std::string::npos);
}

TEST(FlameGraph, InvertedPutsTheGpuFrameFirst) {
  TestTrace t;
  const StackId s = t.Stack(1, {"main", "step"});
  t.Link(1, 1, 1, s, "cudaGraphLaunch");
  t.Kernel(1, "k", 1, 0, 10).graph_id = 2;
  FlameGraphOptions options;
  options.inverted = true;
  EXPECT_EQ(Folded(t.trace(), options), "[GPU0] k;[graph 2];cudaGraphLaunch;step;main 10\n");
}

TEST(FlameGraph, SeparatorsInNamesCannotBreakTheFormat) {
  TestTrace t;
  const StackId s = t.Stack(1, {"odd;name\nwith breaks"});
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "k;2", 1, 0, 10);
  FlameGraphOptions full;
  full.full_names = true;
  // The line break shows as \x0a (base/text_escape.h's display form): one line per stack.
  EXPECT_EQ(Folded(t.trace(), full), "odd:name\\x0awith breaks;cudaLaunchKernel;[GPU0] k:2 10\n");
}

TEST(FlameGraph, StreamingFromAFileMatchesTheInMemoryGraph) {
  testing::TempDir dir;
  Trace trace = testing::ModelTrace();
  const std::string path = dir.File("model.gpt");
  testing::WriteTraceFile(trace, path);
  for (bool inverted : {false, true}) {
    FlameGraphOptions options;
    options.inverted = inverted;
    options.split = FlameSplit::kThread;
    ReadReport report;
    auto streamed = BuildFlameGraphFromFile(path, options, &report);
    ASSERT_TRUE(streamed.ok()) << streamed.status().message();
    std::ostringstream from_file;
    ASSERT_TRUE(ExportFolded(*streamed, options.weight, from_file).ok());
    EXPECT_EQ(from_file.str(), Folded(trace, options));
    EXPECT_EQ(streamed->summary.correlation.kernels.joined, trace.kernels.size() - 2);
  }
  auto missing = BuildFlameGraphFromFile(dir.File("missing.gpt"), {}, nullptr);
  EXPECT_FALSE(missing.ok());
}

TEST(FlameGraph, EmptyTraceGivesAnEmptyGraph) {
  TestTrace t;
  auto graph = BuildFlameGraph(t.trace(), {});
  ASSERT_TRUE(graph.ok());
  EXPECT_TRUE(graph->stacks.empty());
  EXPECT_EQ(graph->summary.activities(), 0u);
  EXPECT_EQ(Folded(t.trace()), "");
}

}  // namespace
}  // namespace gpuperf

namespace gpuperf {
namespace {

// A launch from Python: main (train.py) -> Model.forward -> helper (model.py), run by one
// eval-loop call, calling launch_op through the interpreter's call machinery.
StackId PythonLaunchStack(testing::TestTrace& t) {
  const StackId s = t.Stack(
      1, {"__libc_start_main", "python3.11!Py_RunMain", "python3.11!_PyEval_EvalFrameDefault",
          "python3.11!_PyObject_MakeTpCall", "launch_op"});
  t.PythonCode(1, 1, "helper", "/src/model.py", 10);
  t.PythonCode(1, 2, "Model.forward", "/src/model.py", 20);
  t.PythonCode(1, 3, "main", "/src/train.py", 4);
  t.AddPythonFrame(s, 1, 0, false);  // line 11
  t.AddPythonFrame(s, 2, 3, false);  // line 22
  t.AddPythonFrame(s, 3, 1, true);   // line 5
  return s;
}

TEST(FlameGraph, PythonFramesTakeTheInterpreterPlaceWithFileAndLine) {
  TestTrace t;
  const StackId s = PythonLaunchStack(t);
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "gemm", 1, 0, 100);
  EXPECT_EQ(Folded(t.trace()),
            "__libc_start_main;main (train.py:5);Model.forward (model.py:22);helper (model.py:11);"
            "launch_op;cudaLaunchKernel;[GPU0] gemm 100\n");
  FlameGraphOptions internals;
  internals.python_internals = true;
  EXPECT_EQ(Folded(t.trace(), internals),
            "__libc_start_main;Py_RunMain;_PyEval_EvalFrameDefault;main (train.py:5);"
            "Model.forward (model.py:22);helper (model.py:11);_PyObject_MakeTpCall;launch_op;"
            "cudaLaunchKernel;[GPU0] gemm 100\n");

  auto graph = BuildFlameGraph(t.trace(), {});
  ASSERT_TRUE(graph.ok());
  for (const FlameFrame& frame : graph->frames) {
    const bool python = frame.name.find(".py:") != std::string::npos;
    EXPECT_EQ(frame.kind == FlameFrameKind::kPython, python) << frame.name;
  }
}

TEST(FlameGraph, AutogradThreadsGetTheirRootLabel) {
  TestTrace t;
  const StackId s =
      t.Stack(1, {"start_thread", "torch::autograd::Engine::thread_main", "launch_op"});
  t.Thread(1, 2, "pt_autograd_0");
  t.Thread(1, 3, "worker");
  t.Link(1, 2, 1, s, "cudaLaunchKernel");
  t.Link(1, 3, 2, s, "cudaLaunchKernel");  // the same stack from another thread
  t.Kernel(1, "grad", 1, 0, 100);
  t.Kernel(1, "grad", 2, 200, 250);
  EXPECT_EQ(Folded(t.trace()),
            "[autograd backward];start_thread;torch::autograd::Engine::thread_main;launch_op;"
            "cudaLaunchKernel;[GPU0] grad 100\n"
            "start_thread;torch::autograd::Engine::thread_main;launch_op;cudaLaunchKernel;"
            "[GPU0] grad 50\n");
  auto graph = BuildFlameGraph(t.trace(), {});
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ(graph->frames[graph->stacks[0].frames[0]].kind, FlameFrameKind::kContext);
}

// A backward launch that inherited its forward op's Python frames (the injection library
// appends the marker and them, inject/torch/autograd_link.h): they go outermost, then the
// label, then the engine thread's own frames, whichever thread launched it.
TEST(FlameGraph, BackwardLaunchesShowTheirForwardOpsPythonFramesAboveTheLabel) {
  TestTrace t;
  const StackId s =
      t.Stack(1, {"start_thread", "torch::autograd::Engine::thread_main", "launch_op"});
  t.trace().stacks[s].pcs.push_back(kAutogradForwardWord);
  t.PythonCode(1, 1, "Block.forward", "/src/model.py", 80);
  t.PythonCode(1, 2, "main", "/src/train.py", 4);
  t.AddPythonFrame(s, 1, 13, false);  // line 87
  t.AddPythonFrame(s, 2, 1, true);    // line 5
  t.Thread(1, 2, "pt_autograd_0");
  t.Link(1, 2, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "grad", 1, 0, 100);
  EXPECT_EQ(Folded(t.trace()),
            "main (train.py:5);Block.forward (model.py:87);[autograd backward];start_thread;"
            "torch::autograd::Engine::thread_main;launch_op;cudaLaunchKernel;[GPU0] grad 100\n");
  auto graph = BuildFlameGraph(t.trace(), {});
  ASSERT_TRUE(graph.ok());
  const std::vector<uint32_t>& frames = graph->stacks[0].frames;
  EXPECT_EQ(graph->frames[frames[0]].kind, FlameFrameKind::kPython);
  EXPECT_EQ(graph->frames[frames[2]].kind, FlameFrameKind::kContext);
}

}  // namespace
}  // namespace gpuperf
