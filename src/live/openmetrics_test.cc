#include "live/openmetrics.h"

#include <gtest/gtest.h>

#include "format/live_text.h"

namespace gpuperf::live {
namespace {

// One process (pid 42, rank 1) on one device (CUDA 0, NVML 5) with two kernels whose names
// were cut to the same text, a name that needs escaping, and a drop.
LiveModel OneProcess() {
  LiveModel model;
  model.host = "node7";
  ProcessSnapshot p;
  p.pid = 42;
  p.has_identity = p.has_counters = p.has_kernels = p.has_apis = p.has_stats = true;
  p.identity.rank = 1;
  p.identity.start_realtime_ns = 1700000000123456789ull;
  CopyText(p.identity.command, "/usr/bin/python3 train.py");
  p.counters.device_count = 1;
  DeviceCounters& d = p.counters.devices[0];
  d.has_uuid = 1;
  d.uuid[0] = 0x12;
  d.active_ns = 2500000000ull;
  d.kernel_ns = 7;
  d.kernels = 3;
  d.memory_current = 1 << 20;
  p.counters.sync_ns = 1000000001ull;
  p.kernels.count = 3;
  for (int i = 0; i < 3; ++i) {
    p.kernels.entries[i].ns = 100 - i;
    p.kernels.entries[i].count = 1;
  }
  CopyText(p.kernels.entries[0].name, "gemm<\"a\\b\">\nx");
  CopyText(p.kernels.entries[1].name, "same\xff");
  CopyText(p.kernels.entries[2].name, "same\xfe");
  p.apis.count = 1;
  CopyText(p.apis.entries[0].name, "cudaMalloc");
  p.apis.entries[0].calls = 9;
  p.apis.entries[0].failures = 2;
  p.stats.values[static_cast<uint32_t>(StatId::cupti_dropped_records)] = 5;
  model.scan.processes.push_back(std::move(p));
  model.scan.stale = 2;
  NvmlDevice gpu;
  gpu.index = 5;
  gpu.uuid = "GPU-12000000-0000-0000-0000-000000000000";
  model.gpus.push_back(gpu);
  return model;
}

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(OpenMetricsTest, PrometheusTextWithDcgmLabels) {
  const std::string text = RenderMetrics(OneProcess(), {});
  const std::string device =
      R"(pid="42",rank="1",gpu="5",UUID="GPU-12000000-0000-0000-0000-000000000000",Hostname="node7")";
  EXPECT_TRUE(HasLine(text, "# TYPE gpuperf_gpu_active_seconds_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "gpuperf_gpu_active_seconds_total{" + device + "} 2.500000000"));
  EXPECT_TRUE(
      HasLine(text, "gpuperf_gpu_busy_seconds_total{" + device + R"(,kind="kernel"} 0.000000007)"));
  EXPECT_TRUE(HasLine(text, "gpuperf_gpu_operations_total{" + device + R"(,kind="kernel"} 3)"));
  EXPECT_TRUE(HasLine(text, "# TYPE gpuperf_memory_allocated_bytes gauge"));
  EXPECT_TRUE(
      HasLine(text, "gpuperf_memory_allocated_bytes{" + device + R"(,state="current"} 1048576)"));
  EXPECT_TRUE(HasLine(text, R"(gpuperf_sync_wait_seconds_total{pid="42",rank="1"} 1.000000001)"));
  EXPECT_TRUE(HasLine(text, R"(gpuperf_api_failures_total{pid="42",rank="1",api="cudaMalloc"} 2)"));
  EXPECT_TRUE(HasLine(
      text,
      R"(gpuperf_dropped_records_total{pid="42",rank="1",reason="cupti_dropped_records"} 5)"));
  EXPECT_TRUE(HasLine(
      text, R"(gpuperf_dropped_records_total{pid="42",rank="1",reason="unwind_failed"} 0)"));
  EXPECT_TRUE(HasLine(
      text, R"(gpuperf_process_start_time_seconds{pid="42",rank="1"} 1700000000.123456789)"));
  EXPECT_TRUE(HasLine(text, R"(gpuperf_live_pages{state="stale"} 2)"));
  EXPECT_TRUE(text.find(R"(program="python3")") != std::string::npos);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  EXPECT_EQ(text.find("# UNIT"), std::string::npos);
}

TEST(OpenMetricsTest, KernelNamesEscapedAndLimited) {
  const std::string text = RenderMetrics(OneProcess(), {});
  // The display form of base/text_escape.h (a newline is \x0a), then the format's escapes.
  EXPECT_NE(text.find(R"(kernel="gemm<\"a\\b\">\\x0ax"} 0.000000100)"), std::string::npos) << text;
  // Bytes that are not UTF-8 are \xNN: two names that differ only there stay two series.
  EXPECT_NE(text.find(R"(kernel="same\\xff"} 0.000000099)"), std::string::npos);
  EXPECT_NE(text.find(R"(kernel="same\\xfe"} 0.000000098)"), std::string::npos);
  EXPECT_EQ(text.find("same\xff"), std::string::npos);
  MetricsOptions one;
  one.top_kernels = 1;
  const std::string limited = RenderMetrics(OneProcess(), one);
  EXPECT_EQ(limited.find("kernel=\"same"), std::string::npos);
  EXPECT_NE(limited.find("kernel=\"gemm"), std::string::npos);
}

TEST(OpenMetricsTest, OpenMetricsFamiliesUnitsAndEof) {
  MetricsOptions options;
  options.openmetrics = true;
  const std::string text = RenderMetrics(OneProcess(), options);
  EXPECT_TRUE(HasLine(text, "# TYPE gpuperf_gpu_active_seconds counter"));
  EXPECT_TRUE(HasLine(text, "# UNIT gpuperf_gpu_active_seconds seconds"));
  EXPECT_TRUE(HasLine(text, "# TYPE gpuperf_memory_allocated_bytes gauge"));
  EXPECT_EQ(text.find("# TYPE gpuperf_gpu_active_seconds_total"), std::string::npos);
  ASSERT_GE(text.size(), 6u);
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  EXPECT_TRUE(WantsOpenMetrics("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"));
  EXPECT_FALSE(WantsOpenMetrics("text/plain"));
  EXPECT_FALSE(WantsOpenMetrics(""));
}

TEST(OpenMetricsTest, NoRankLabelWhenThereIsNoRankAndCudaOrdinalWithoutNvml) {
  LiveModel model = OneProcess();
  model.gpus.clear();
  model.scan.processes[0].identity.rank = -1;
  const std::string text = RenderMetrics(model, {});
  EXPECT_NE(text.find(R"(gpuperf_gpu_active_seconds_total{pid="42",gpu="0",UUID=)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("rank="), std::string::npos);
}

}  // namespace
}  // namespace gpuperf::live
