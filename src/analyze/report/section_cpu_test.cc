#include <gtest/gtest.h>

#include <sstream>

#include "analyze/report/report_model.h"
#include "export/report_export.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

using testing::TestTrace;

TEST(ReportCpu, ThreadsFunctionsAndWhereThreadsBlocked) {
  TestTrace t;
  t.Process(1, "app");
  t.Thread(1, 1, "main");
  t.Thread(1, 2, "loader");
  const StackId hot = t.Stack(1, {"main", "step", "hot"});
  const StackId warm = t.Stack(1, {"main", "step", "warm"});
  const StackId load = t.Stack(1, {"worker", "decode"});
  const StackId sleep =
      t.Stack(1, {"main", "pause", "libc.so.6!nanosleep", "[kernel]!do_nanosleep"});
  const StackId sync = t.Stack(1, {"main", "step", "cudaDeviceSynchronize", "[kernel]!schedule"});
  auto& samples = t.trace().cpu_samples;
  for (int i = 0; i < 7; ++i) samples.push_back({1, 1, 100u + i, hot, 0, 1000});
  for (int i = 0; i < 3; ++i) samples.push_back({1, 1, 200u + i, warm, 0, 1000});
  samples.push_back({1, 2, 300, load, 1, 1000});
  auto& off = t.trace().off_cpus;
  off.push_back({1, 1, 1000, 6000, 5000, 1, sleep, OffCpuReason::kSleep});
  off.push_back({1, 1, 7000, 9000, 2000, 5, sync, OffCpuReason::kSleep});
  off.push_back({1, 2, 7000, 7300, 300, 3, load, OffCpuReason::kPreempted});

  Result<ReportModel> model = BuildReport(t.trace(), {});
  ASSERT_TRUE(model.ok()) << model.status().message();
  const CpuReport& cpu = model->cpu;
  EXPECT_EQ(cpu.on_cpu_ns, 11000u);
  EXPECT_EQ(cpu.samples, 11u);
  EXPECT_EQ(cpu.off_cpu_ns, 7300u);
  EXPECT_EQ(cpu.intervals, 9u);
  EXPECT_EQ(cpu.gpu_wait_ns, 2000u);

  ASSERT_EQ(cpu.threads.size(), 2u);
  EXPECT_EQ(cpu.threads[0].tid, 1u);
  EXPECT_EQ(cpu.threads[0].name, "main");
  EXPECT_EQ(cpu.threads[0].on_cpu_ns, 10000u);
  EXPECT_EQ(cpu.threads[0].off_cpu_ns, 7000u);
  EXPECT_EQ(cpu.threads[0].gpu_wait_ns, 2000u);
  EXPECT_EQ(cpu.threads[0].top_function, "hot");
  EXPECT_EQ(cpu.threads[1].name, "loader");
  EXPECT_EQ(cpu.threads[1].preempted_ns, 300u);

  ASSERT_GE(cpu.functions.size(), 3u);
  EXPECT_EQ(cpu.functions[0].function, "hot");
  EXPECT_EQ(cpu.functions[0].self_ns, 7000u);
  EXPECT_EQ(cpu.functions[1].function, "warm");
  EXPECT_EQ(cpu.functions[1].self_ns, 3000u);
  for (const CpuFunctionRow& f : cpu.functions) {
    if (f.function == "step") {
      EXPECT_EQ(f.self_ns, 0u);
      EXPECT_EQ(f.on_cpu_ns, 10000u);
      EXPECT_EQ(f.off_cpu_ns, 2000u);
    }
  }

  ASSERT_EQ(cpu.blocked.size(), 3u);
  EXPECT_EQ(cpu.blocked[0].reason, "sleep");
  EXPECT_EQ(cpu.blocked[0].off_cpu_ns, 5000u);
  ASSERT_FALSE(cpu.blocked[0].stack.empty());
  // Kernel frames and the C library's wrapper left out: the caller that slept comes first.
  EXPECT_EQ(cpu.blocked[0].stack[0], "pause (app.cc:10)");
  EXPECT_EQ(cpu.blocked[1].reason, "GPU sync");
  EXPECT_EQ(cpu.blocked[1].intervals, 5u);
  EXPECT_EQ(cpu.blocked[2].reason, "preempted");

  std::ostringstream text;
  ASSERT_TRUE(ExportReportText(*model, {}, text).ok());
  EXPECT_NE(text.str().find("CPU time: where threads ran and where they blocked"),
            std::string::npos);
  EXPECT_NE(text.str().find("GPU sync"), std::string::npos);
}

TEST(ReportCpu, TracesWithoutCpuSamplesShowNoCpuPart) {
  TestTrace t;
  const StackId s = t.Stack(1, {"main"});
  t.Link(1, 1, 1, s, "cudaLaunchKernel");
  t.Kernel(1, "gemm", 1, 1000, 2000);
  Result<ReportModel> model = BuildReport(t.trace(), {});
  ASSERT_TRUE(model.ok());
  EXPECT_TRUE(model->cpu.empty());
  std::ostringstream text;
  ASSERT_TRUE(ExportReportText(*model, {}, text).ok());
  EXPECT_EQ(text.str().find("CPU time"), std::string::npos);
}

}  // namespace
}  // namespace gpuperf
