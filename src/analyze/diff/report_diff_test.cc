#include "analyze/diff/report_diff.h"

#include <gtest/gtest.h>

#include "export/report_json.h"

namespace gpuperf {
namespace {

using Json = nlohmann::ordered_json;

// A minimal report document: the fields diff reads. GPU time beyond the kernels' is
// copies (a model derives gpu_ns from kernel, copy and set time).
Json Report(uint64_t gpu_ns, uint64_t foo_total, uint64_t foo_calls, uint64_t failures,
            const std::string& error_name = "") {
  Json doc;
  doc["schema_version"] = 1;
  const uint64_t memcpy_ns = gpu_ns > foo_total ? gpu_ns - foo_total : 0;
  doc["summary"] = {{"gpu_ns", gpu_ns},
                    {"kernel_ns", foo_total},
                    {"memcpy_ns", memcpy_ns},
                    {"memcpy_bytes", 0},
                    {"api_ns", 0},
                    {"kernels", foo_calls},
                    {"api_calls", 10},
                    {"api_failures", failures},
                    {"span_ns", 0}};
  doc["kernels"] = Json::array();
  doc["kernels"].push_back({{"name", "_Z3fooPf"},
                            {"short_name", "foo"},
                            {"count", foo_calls},
                            {"total_ns", foo_total},
                            {"avg_ns", foo_total / foo_calls},
                            {"median_ns", foo_total / foo_calls},
                            {"max_ns", foo_total / foo_calls}});
  doc["runtime_api"] = Json::array();
  Json malloc_row = {{"name", "cudaMalloc"},
                     {"count", 10},
                     {"total_ns", 1000},
                     {"avg_ns", 100},
                     {"failures", failures}};
  malloc_row["errors"] = Json::array();
  if (failures) {
    malloc_row["errors"].push_back({{"code", 2}, {"name", error_name}, {"count", failures}});
  }
  doc["runtime_api"].push_back(malloc_row);
  return doc;
}

// What diff compares: the model a baseline document reads back as.
ReportModel Model(const Json& doc) {
  auto model = ReportFromJson(doc, "the baseline");
  EXPECT_TRUE(model.ok()) << model.status().message();
  return model.ok() ? std::move(model).value() : ReportModel{};
}

ReportDiff DiffReports(const Json& base, const Json& now) {
  return gpuperf::DiffReports(Model(base), Model(now));
}

std::vector<std::string> Check(const Json& base, const Json& now,
                               std::initializer_list<const char*> conditions,
                               uint64_t min_item_ns = 0) {
  std::vector<FailCondition> parsed;
  for (const char* c : conditions) {
    auto p = ParseFailCondition(c);
    EXPECT_TRUE(p.ok()) << c << ": " << p.status().message();
    if (p.ok()) parsed.push_back(*p);
  }
  return CheckFailConditions(DiffReports(base, now), parsed, min_item_ns);
}

TEST(ReportDiffTest, TotalGpuTimeRegressionMessage) {
  auto v = Check(Report(12'300'000, 1000, 10, 0), Report(14'100'000, 1000, 10, 0),
                 {"total_gpu_time>+10%"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], "total GPU time 12.3 ms -> 14.1 ms (+14.6%) exceeds +10%");
  EXPECT_TRUE(Check(Report(12'300'000, 1000, 10, 0), Report(13'000'000, 1000, 10, 0),
                    {"total_gpu_time>+10%"})
                  .empty());
}

TEST(ReportDiffTest, PerKernelAverage) {
  // foo: 10 calls of 100 ns -> 10 calls of 125 ns: +25% on the average.
  auto v = Check(Report(0, 1000, 10, 0), Report(0, 1250, 10, 0), {"kernel_avg>+20%"});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0], "kernel foo avg 100 ns -> 125 ns (+25.0%) exceeds +20%");
  EXPECT_TRUE(Check(Report(0, 1000, 10, 0), Report(0, 1250, 10, 0), {"kernel_avg>+30%"}).empty());
  // Below --min-time the kernel is not gated.
  EXPECT_TRUE(
      Check(Report(0, 1000, 10, 0), Report(0, 1250, 10, 0), {"kernel_avg>+20%"}, 2000).empty());
  // Absolute change: +25 ns > +20ns.
  EXPECT_EQ(Check(Report(0, 1000, 10, 0), Report(0, 1250, 10, 0), {"kernel_avg>+20ns"}).size(), 1u);
}

TEST(ReportDiffTest, FailuresAndNewErrors) {
  const Json clean = Report(0, 1000, 10, 0);
  const Json failing = Report(0, 1000, 10, 3, "cudaErrorMemoryAllocation");
  auto v = Check(clean, failing, {"api_failures>0", "new_api_errors>0"});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], "failed CUDA API calls 0 -> 3 (new) exceeds 0");
  EXPECT_EQ(v[1], "API error kinds not in the baseline 0 -> 1 (new) exceeds 0");
  // The same errors in both: no new error kinds, and no increase.
  EXPECT_TRUE(Check(failing, failing, {"new_api_errors>0", "api_failures>+0"}).empty());
  const ReportDiff diff = DiffReports(clean, failing);
  ASSERT_EQ(diff.new_api_errors.size(), 1u);
  EXPECT_EQ(diff.new_api_errors[0], "cudaMalloc: cudaErrorMemoryAllocation x3");
}

TEST(ReportDiffTest, NewAndGoneKernels) {
  Json now = Report(0, 1000, 10, 0);
  now["kernels"][0]["name"] = "bar";
  const ReportDiff diff = DiffReports(Report(0, 1000, 10, 0), now);
  ASSERT_EQ(diff.kernels.size(), 2u);
  for (const ItemDelta& d : diff.kernels) EXPECT_NE(d.in_base, d.in_new);
  // Items in only one report are not gated.
  EXPECT_TRUE(Check(Report(0, 1000, 10, 0), now, {"kernel_total>+1%"}).empty());
}

TEST(ReportDiffTest, ConditionGrammar) {
  for (const char* good :
       {"total_gpu_time>+10%", "kernel_avg >= +20%", "api_failures>0", "gpu_busy<50%",
        "total_api_time>+2ms", "peak_memory>8GiB", "kernel_calls<-10%", "span<=1s"}) {
    EXPECT_TRUE(ParseFailCondition(good).ok()) << good;
  }
  for (const char* bad : {"total_gpu_time", "bogus>1", "total_gpu_time>10%", "total_gpu_time>5",
                          "kernel_avg>+", "peak_memory>3ms", "api_failures>+2ms"}) {
    auto c = ParseFailCondition(bad);
    EXPECT_FALSE(c.ok()) << bad;
    if (!c.ok()) EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  }
  auto c = ParseFailCondition("gpu_busy<50%");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->relative_to_base);
  EXPECT_DOUBLE_EQ(c->threshold, 50);
}

TEST(ReportDiffTest, RejectsDocumentsThatAreNotReports) {
  Json not_report = {{"hello", 1}};
  EXPECT_EQ(ReportFromJson(not_report, "the baseline").status().code(), StatusCode::kNotATrace);
  Json future = Report(0, 1, 1, 0);
  future["schema_version"] = 2;
  auto read = ReportFromJson(future, "the new report");
  EXPECT_EQ(read.status().code(), StatusCode::kUnsupportedVersion);
  EXPECT_EQ(read.status().message(),
            "the new report has report schema version 2; this gpuperf reads version 1");
}

}  // namespace
}  // namespace gpuperf
