// The report's hardware part from hand-made records whose every number is known: metric
// ranges averaged per kernel (weighted by duration), the bound, per-range rows, hot lines of
// PC samples, and the same model through text, CSV and JSON (and back).
#include <gtest/gtest.h>

#include <sstream>

#include "analyze/diff/hardware_conditions.h"
#include "analyze/hardware/hardware_verdict.h"
#include "analyze/report/report_model.h"
#include "export/report_export.h"
#include "export/report_json.h"
#include "support/test_trace.h"

namespace gpuperf {
namespace {

constexpr uint32_t kPid = 7;
const char* const kSm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kMem = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kDram = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
const char* const kBw = "dram__bytes.sum.per_second";
const char* const kOcc = "sm__warps_active.avg.pct_of_peak_sustained_active";
const char* const kTime = "gpu__time_duration.sum";

class HardwareReportTest : public ::testing::Test {
 protected:
  // One range with its values.
  void Range(MetricRangeKind kind, std::string_view name,
             std::vector<std::pair<const char*, double>> values, uint32_t passes = 9) {
    MetricRangeRecord r;
    r.pid = kPid;
    r.range_id = ++next_range_;
    r.kind = kind;
    r.name = t_.Str(name);
    r.metric_set = t_.Str("basic");
    r.passes = passes;
    r.serialized = kind == MetricRangeKind::kKernel;
    t_.trace().metric_ranges.push_back(r);
    for (const auto& [metric, value] : values) {
      t_.trace().metric_values.push_back({kPid, r.range_id, t_.Str(metric), value});
    }
  }
  void Sample(std::string_view function, uint64_t pc, std::string_view stall, uint64_t n) {
    PcSampleRecord s;
    s.pid = kPid;
    s.cubin_crc = 0xc0;
    s.function = t_.Str(function);
    s.pc_offset = pc;
    s.stalls.push_back(
        {t_.Str(std::string("smsp__pcsamp_warps_issue_stalled_") + std::string(stall)), n});
    t_.trace().pc_samples.push_back(s);
  }
  void Line(std::string_view function, uint64_t pc, uint32_t line) {
    t_.trace().sass_lines.push_back({0xc0, t_.Str(function), pc, t_.Str("/src/k.cu"), line, 0});
  }
  ReportModel Build() {
    auto model = BuildReport(t_.trace(), ReportOptions{});
    EXPECT_TRUE(model.ok()) << model.status().message();
    return *model;
  }
  void Standard() {
    t_.Process(kPid, "app");
    // copy: two launches of 100 and 300 ns: DRAM 80% and 96% -> weighted mean 92%.
    Range(MetricRangeKind::kKernel, "_Z4copyPfS_",
          {{kSm, 20}, {kMem, 84}, {kDram, 80}, {kBw, 2.8e12}, {kOcc, 80}, {kTime, 100}});
    Range(MetricRangeKind::kKernel, "_Z4copyPfS_",
          {{kSm, 24}, {kMem, 96}, {kDram, 96}, {kBw, 3.2e12}, {kOcc, 84}, {kTime, 300}});
    Range(MetricRangeKind::kKernel, "_Z3fmaPf",
          {{kSm, 91}, {kMem, 5}, {kDram, 1}, {kBw, 1e10}, {kOcc, 95}, {kTime, 1000}});
    Range(MetricRangeKind::kKernel, "_Z5chasePj",
          {{kSm, 7}, {kMem, 9}, {kDram, 4}, {kBw, 1e11}, {kOcc, 3}, {kTime, 50}});
    Range(MetricRangeKind::kNvtx, "step",
          {{"smsp__issue_active.avg.pct_of_peak_sustained_active", 12}, {kDram, 71}, {kTime, 5000}},
          1);
    Sample("_Z8hot_loopv", 0x10, "long_scoreboard", 30);
    Sample("_Z8hot_loopv", 0x20, "math_pipe_throttle", 60);
    Sample("_Z8hot_loopv", 0x30, "math_pipe_throttle", 5);
    Sample("_Z8hot_loopv", 0x40, "selected", 5);
    Sample("_Z4copyPfS_", 0x8, "long_scoreboard", 60);
    Line("_Z8hot_loopv", 0x10, 10);
    Line("_Z8hot_loopv", 0x20, 11);
    Line("_Z8hot_loopv", 0x30, 11);
    Line("_Z8hot_loopv", 0x40, 12);
  }

  testing::TestTrace t_;
  uint32_t next_range_ = 0;
};

TEST_F(HardwareReportTest, KernelsAreAveragedByDurationAndJudged) {
  Standard();
  const ReportModel m = Build();
  ASSERT_EQ(m.hardware.size(), 4u);
  // Kernels by measured time (fma 1000, copy 400, chase 50), then the range.
  EXPECT_EQ(m.hardware[0].display_name, "fma");
  EXPECT_EQ(m.hardware[1].display_name, "copy");
  EXPECT_EQ(m.hardware[2].display_name, "chase");
  EXPECT_EQ(m.hardware[3].name, "step");
  const HardwareRow& copy = m.hardware[1];
  EXPECT_EQ(copy.ranges, 2u);
  EXPECT_EQ(copy.passes, 9u);
  EXPECT_TRUE(copy.serialized);
  EXPECT_DOUBLE_EQ(copy.duration_ns, 400);
  EXPECT_DOUBLE_EQ(*copy.Get("dram_pct"), (80 * 100 + 96 * 300) / 400.0);
  EXPECT_DOUBLE_EQ(*copy.Get(kBw), (2.8e12 * 100 + 3.2e12 * 300) / 400.0);
  EXPECT_EQ(copy.verdict.bound, "memory");
  EXPECT_EQ(copy.verdict.reason, "memory 93% of peak vs SM 23%; DRAM 3100 GB/s, 92% of peak");
  EXPECT_EQ(m.hardware[0].verdict.bound, "compute");
  EXPECT_EQ(m.hardware[2].verdict.bound, "latency");
  EXPECT_NE(m.hardware[2].verdict.reason.find("achieved occupancy 3%"), std::string::npos);
  // A range is judged by its one-pass stand-ins: issue slots and DRAM.
  EXPECT_EQ(m.hardware[3].verdict.bound, "memory");
  EXPECT_NE(m.hardware[3].verdict.reason.find("DRAM 71% of peak vs SM issue slots 12%"),
            std::string::npos)
      << m.hardware[3].verdict.reason;
  EXPECT_FALSE(m.hardware[3].serialized);
}

TEST_F(HardwareReportTest, BoundNeedsBothThroughputs) {
  HardwareRow row;
  row.metrics = {{kSm, 95}};
  EXPECT_EQ(JudgeBound(row).bound, "");
  row.metrics.push_back({kMem, 60});
  EXPECT_EQ(JudgeBound(row).bound, "compute");
  row.metrics = {{kSm, 59.9}, {kMem, 59.9}};
  EXPECT_EQ(JudgeBound(row).bound, "latency");
  row.metrics = {{kSm, 70}, {kMem, 70}};
  EXPECT_EQ(JudgeBound(row).bound, "memory");  // a tie: memory is the harder limit to move
}

// The H100's copy range (hw_bound --nvtx): DRAM 50.5% of the range, SMs busy 54.1% of it.
TEST_F(HardwareReportTest, RangesAreJudgedOverTheirBusyTime) {
  const char* const kIssue = "smsp__issue_active.avg.pct_of_peak_sustained_active";
  const char* const kDram = "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed";
  const char* const kBusy = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed";
  HardwareRow row;
  row.metrics = {{kIssue, 3.9}, {kDram, 50.5}};
  EXPECT_EQ(JudgeBound(row).bound, "latency");  // no busy time measured: the plain rates
  row.metrics.push_back({kBusy, 54.1});
  const BoundVerdict copy = JudgeBound(row);
  EXPECT_EQ(copy.bound, "memory");
  EXPECT_NE(copy.reason.find("DRAM 93% of peak vs SM issue slots 4%"), std::string::npos)
      << copy.reason;
  EXPECT_NE(copy.reason.find("SMs busy 54% of the range"), std::string::npos) << copy.reason;
  // The latency range: SMs busy nearly all of it, so its rates stand as they are.
  row.metrics = {{kIssue, 0.2}, {kDram, 13.1}, {kBusy, 94.9}};
  EXPECT_EQ(JudgeBound(row).bound, "latency");
  EXPECT_EQ(JudgeBound(row).reason.find("SMs busy"), std::string::npos);
  // Per kernel (SM throughput measured) the busy time never rescales.
  row.metrics = {{kSm, 30}, {kMem, 40}, {kBusy, 50}};
  EXPECT_EQ(JudgeBound(row).bound, "latency");
}

TEST_F(HardwareReportTest, HotLinesOfPcSamples) {
  Standard();
  const ReportModel m = Build();
  ASSERT_EQ(m.pc_sampling.size(), 2u);
  const PcKernelRow& hot = m.pc_sampling[0];
  EXPECT_EQ(hot.display_name, "hot_loop");
  EXPECT_EQ(hot.samples, 100u);
  EXPECT_DOUBLE_EQ(hot.fraction, 100.0 / 160);
  EXPECT_TRUE(hot.has_lines);
  ASSERT_EQ(hot.lines.size(), 3u);
  EXPECT_EQ(hot.lines[0].line, 11u);  // two instructions, 65 samples
  EXPECT_EQ(hot.lines[0].samples, 65u);
  EXPECT_EQ(hot.lines[0].pc_offset, 0x20u);
  ASSERT_EQ(hot.lines[0].stalls.size(), 1u);
  EXPECT_EQ(hot.lines[0].stalls[0].first, "math_pipe_throttle");
  EXPECT_EQ(hot.stalls[0], (std::pair<std::string, uint64_t>{"math_pipe_throttle", 65}));
  const PcKernelRow& copy = m.pc_sampling[1];
  EXPECT_FALSE(copy.has_lines);
  ASSERT_EQ(copy.lines.size(), 1u);
  EXPECT_EQ(copy.lines[0].line, 0u);
  EXPECT_EQ(copy.lines[0].pc_offset, 0x8u);
}

TEST_F(HardwareReportTest, RenderedInEveryFormatAndReadBack) {
  Standard();
  const ReportModel m = Build();
  std::ostringstream text, csv;
  ASSERT_TRUE(ExportReportText(m, ReportRenderOptions{}, text).ok());
  const std::string t = text.str();
  EXPECT_NE(t.find("Hardware metrics per kernel  (set basic, 9 passes; kernel replay"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("Hardware metrics per range  (set basic, 1 pass; kernels kept concurrent)"),
            std::string::npos);
  EXPECT_NE(t.find("copy: memory bound: memory 93% of peak"), std::string::npos);
  EXPECT_NE(t.find("PC sampling: hot lines  (160 samples"), std::string::npos);
  EXPECT_NE(t.find("/src/k.cu:11"), std::string::npos);
  EXPECT_NE(t.find("built without -lineinfo"), std::string::npos);
  EXPECT_NE(t.find("+0x8"), std::string::npos);
  ASSERT_TRUE(ExportReportCsv(m, ReportRenderOptions{}, csv).ok());
  EXPECT_NE(csv.str().find("kernel,_Z4copyPfS_,copy,2,9,1,memory,dram__bytes.sum.per_second,"),
            std::string::npos)
      << csv.str();
  EXPECT_NE(csv.str().find("_Z8hot_loopv,hot_loop,100,/src/k.cu,11,32,65,math_pipe_throttle=65"),
            std::string::npos);

  const nlohmann::ordered_json doc = ReportToJson(m, ReportRenderOptions{});
  auto back = ReportFromJson(doc);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ReportToJson(*back, ReportRenderOptions{}).dump(), doc.dump());
  ASSERT_EQ(back->hardware.size(), 4u);
  EXPECT_EQ(back->hardware[1].verdict.bound, "memory");
  EXPECT_DOUBLE_EQ(back->pc_sampling[0].lines[0].fraction, 0.65);
}

TEST_F(HardwareReportTest, NothingWhenTheTraceHasNoHardwareData) {
  t_.Process(kPid, "app");
  const ReportModel m = Build();
  std::ostringstream text, csv;
  ASSERT_TRUE(ExportReportText(m, ReportRenderOptions{}, text).ok());
  ASSERT_TRUE(ExportReportCsv(m, ReportRenderOptions{}, csv).ok());
  EXPECT_EQ(text.str().find("Hardware"), std::string::npos);
  EXPECT_EQ(text.str().find("PC sampling"), std::string::npos);
  EXPECT_EQ(csv.str().find("hardware"), std::string::npos);
  const nlohmann::ordered_json doc = ReportToJson(m, ReportRenderOptions{});
  EXPECT_FALSE(doc.contains("hardware"));
  EXPECT_FALSE(doc.contains("pc_sampling"));
}

TEST_F(HardwareReportTest, DiffConditionsOnHardwareMetrics) {
  Standard();
  const ReportModel base = Build();
  ReportModel now = base;
  now.hardware[1].metrics[2].value = 40;  // copy's DRAM throughput halves
  auto check = [&](const char* text) {
    auto c = ParseHardwareCondition(text);
    EXPECT_TRUE(c.ok()) << text << ": " << c.status().message();
    return c.ok() ? CheckHardwareConditions(base, now, {*c}) : std::vector<std::string>{"parse"};
  };
  ASSERT_EQ(now.hardware[1].metrics[2].metric, kDram);
  EXPECT_TRUE(check("kernel:fma:sm_pct<50").empty());
  ASSERT_EQ(check("kernel:copy:dram_pct<50").size(), 1u);
  EXPECT_EQ(check("kernel:copy:dram_pct<50")[0],
            "kernel copy dram_pct is 40, violating kernel:copy:dram_pct<50");
  EXPECT_EQ(check("kernel:copy:dram_pct<-20%").size(), 1u);  // 92 -> 40: -56.5%
  EXPECT_TRUE(check("kernel:copy:dram_pct<-60%").empty());
  EXPECT_EQ(check("kernel:copy:dram_pct<-50").size(), 1u);  // 52 points down
  EXPECT_TRUE(check("kernel:.:dram_bw>3500GB/s").empty());
  EXPECT_EQ(check("kernel:.:dram_bw>3000GB/s").size(), 1u);
  EXPECT_TRUE(check("range:step:dram_pct<50").empty());
  // Nothing matched: a violation, not a pass.
  EXPECT_NE(check("kernel:gemm:sm_pct<50")[0].find("no measured kernel matches 'gemm'"),
            std::string::npos);
  EXPECT_FALSE(ParseHardwareCondition("kernel:copy:speed<5").ok());
  EXPECT_FALSE(ParseHardwareCondition("kernel:copy:dram_pct<5ms").ok());
  EXPECT_FALSE(ParseHardwareCondition("kernel:copy").ok());
  EXPECT_FALSE(ParseHardwareCondition("kernel:(:dram_pct<5").ok());
  EXPECT_TRUE(IsHardwareCondition("range:x:dram_pct<1"));
  EXPECT_FALSE(IsHardwareCondition("kernel_avg>+20%"));
}

}  // namespace
}  // namespace gpuperf
