#include "analyze/flame/flamegraph_cpu.h"

#include <gtest/gtest.h>

#include <sstream>

#include "export/folded.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::TestTrace;

std::string Folded(const Trace& trace, FlameWeight weight, bool inverted = false) {
  FlameGraphOptions options;
  options.weight = weight;
  options.inverted = inverted;
  std::ostringstream out;
  Status status = ExportFolded(trace, options, out);
  EXPECT_TRUE(status.ok()) << status.message();
  return out.str();
}

// One process that launched a kernel from main;step, spent CPU time in step and in the
// kernel under a read, slept, and blocked in a CUDA sync call.
TestTrace CpuAndGpu() {
  TestTrace t;
  const StackId launch = t.Stack(1, {"main", "step"});
  t.Link(1, 1, 1, launch, "cudaLaunchKernel");
  t.Kernel(1, "gemm", 1, 1000, 6000);  // 5000 ns of GPU time
  const StackId step = t.Stack(1, {"main", "step"});
  const StackId read = t.Stack(1, {"main", "load", "[kernel]!ksys_read"});
  const StackId sleep = t.Stack(1, {"main", "pause", "[kernel]!do_nanosleep"});
  const StackId sync =
      t.Stack(1, {"main", "step", "libcudart.so!cudaStreamSynchronize", "[kernel]!schedule"});
  auto& samples = t.trace().cpu_samples;
  samples.push_back({1, 1, 100, step, 0, 3000});
  samples.push_back({1, 1, 200, step, 1, 3000});
  samples.push_back({1, 1, 300, read, 0, 3000});
  auto& off = t.trace().off_cpus;
  off.push_back({1, 1, 500, 9500, 9000, 1, sleep, OffCpuReason::kSleep});
  off.push_back({1, 1, 10000, 14000, 4000, 4, sync, OffCpuReason::kSleep});
  off.push_back({1, 1, 20000, 20700, 700, 2, step, OffCpuReason::kPreempted});
  return t;
}

TEST(FlameGraphCpu, EachKindOfTimeEndsInItsOwnLeaf) {
  const TestTrace t = CpuAndGpu();
  EXPECT_EQ(Folded(t.trace(), FlameWeight::kAll),
            "main;load;ksys_read;[cpu] 3000\n"
            "main;pause;do_nanosleep;[sleep];[off-cpu] 9000\n"
            "main;step;[cpu] 6000\n"
            "main;step;[preempted];[off-cpu] 700\n"
            "main;step;cudaLaunchKernel;[GPU0] gemm 5000\n"
            "main;step;cudaStreamSynchronize;schedule;[wait: GPU sync];[off-cpu] 4000\n");
  EXPECT_EQ(Folded(t.trace(), FlameWeight::kGpuTime),
            "main;step;cudaLaunchKernel;[GPU0] gemm 5000\n");
  EXPECT_EQ(Folded(t.trace(), FlameWeight::kCpuTime),
            "main;load;ksys_read;[cpu] 3000\n"
            "main;step;[cpu] 6000\n");
  EXPECT_EQ(Folded(t.trace(), FlameWeight::kOffCpuTime),
            "main;pause;do_nanosleep;[sleep];[off-cpu] 9000\n"
            "main;step;[preempted];[off-cpu] 700\n"
            "main;step;cudaStreamSynchronize;schedule;[wait: GPU sync];[off-cpu] 4000\n");
  EXPECT_EQ(Folded(t.trace(), FlameWeight::kCpuTime, /*inverted=*/true),
            "[cpu];ksys_read;load;main 3000\n"
            "[cpu];step;main 6000\n");
}

TEST(FlameGraphCpu, OneThreadKeepsItsCpuTimeAndTheKernelsItLaunched) {
  TestTrace t = CpuAndGpu();
  const StackId pool = t.Stack(1, {"start_thread", "worker"});
  t.Link(1, 2, 2, pool, "cudaLaunchKernel");
  t.Kernel(1, "copy", 2, 7000, 7500);
  t.trace().cpu_samples.push_back({1, 2, 400, pool, 0, 3000});
  t.trace().off_cpus.push_back({1, 2, 0, 30000, 30000, 1, pool, OffCpuReason::kSleep});
  FlameGraphOptions options;
  options.weight = FlameWeight::kAll;
  options.tid = 2;
  std::ostringstream out;
  ASSERT_TRUE(ExportFolded(t.trace(), options, out).ok());
  EXPECT_EQ(out.str(),
            "start_thread;worker;[cpu] 3000\n"
            "start_thread;worker;[sleep];[off-cpu] 30000\n"
            "start_thread;worker;cudaLaunchKernel;[GPU0] copy 500\n");
  options.tid = 1;
  out.str("");
  ASSERT_TRUE(ExportFolded(t.trace(), options, out).ok());
  EXPECT_EQ(out.str().find("worker"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("[GPU0] gemm 5000"), std::string::npos) << out.str();
}

TEST(FlameGraphCpu, SummaryAndFrameKinds) {
  const TestTrace t = CpuAndGpu();
  FlameGraphOptions options;
  options.weight = FlameWeight::kAll;
  Result<FlameGraph> graph = BuildFlameGraph(t.trace(), options);
  ASSERT_TRUE(graph.ok());
  const FlameSummary& s = graph->summary;
  EXPECT_TRUE(s.has_cpu());
  EXPECT_EQ(s.gpu_ns, 5000u);
  EXPECT_EQ(s.cpu_ns, 9000u);
  EXPECT_EQ(s.cpu_samples, 3u);
  EXPECT_EQ(s.offcpu_ns, 13700u);
  EXPECT_EQ(s.offcpu_intervals, 7u);
  EXPECT_EQ(s.gpu_wait_ns, 4000u);
  EXPECT_EQ(s.cpu_threads, 1u);
  EXPECT_EQ(s.processes, 1u);
  auto kind_of = [&](const std::string& name) {
    for (const FlameFrame& f : graph->frames) {
      if (f.name == name) return f.kind;
    }
    ADD_FAILURE() << "no frame " << name;
    return FlameFrameKind::kContext;
  };
  EXPECT_EQ(kind_of("ksys_read"), FlameFrameKind::kKernelCode);
  EXPECT_EQ(kind_of("step"), FlameFrameKind::kCpu);
  EXPECT_EQ(kind_of("[cpu]"), FlameFrameKind::kOnCpu);
  EXPECT_EQ(kind_of("[off-cpu]"), FlameFrameKind::kOffCpu);
  EXPECT_EQ(kind_of("[wait: GPU sync]"), FlameFrameKind::kGpuWait);
  for (const FlameStack& stack : graph->stacks) {
    // One kind of time per path: its leaf says which.
    EXPECT_EQ((stack.gpu_ns != 0) + (stack.cpu_ns != 0) + (stack.offcpu_ns != 0), 1);
  }
}

TEST(FlameGraphCpu, GpuOnlyTracesHaveNoCpuTime) {
  TestTrace t;
  const StackId launch = t.Stack(1, {"main"});
  t.Link(1, 1, 1, launch, "cudaLaunchKernel");
  t.Kernel(1, "gemm", 1, 1000, 2000);
  Result<FlameGraph> graph = BuildFlameGraph(t.trace(), {});
  ASSERT_TRUE(graph.ok());
  EXPECT_FALSE(graph->summary.has_cpu());
  EXPECT_EQ(Folded(t.trace(), FlameWeight::kAll), "main;cudaLaunchKernel;[GPU0] gemm 1000\n");
}

}  // namespace
}  // namespace gpuperf
