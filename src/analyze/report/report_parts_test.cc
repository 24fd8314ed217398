// Reports of part of a run: some sections only (ReportOptions::only_sections), one process
// read from its own files only (read_only_files_of_pid). Each part is what the whole report
// holds of it.
#include <gtest/gtest.h>

#include <sstream>

#include "analyze/insights/insights_section.h"
#include "analyze/report/report_model.h"
#include "export/report_export.h"
#include "export/report_json.h"
#include "support/rank_trace.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::RankJobOptions;
using testing::TempDir;

std::string Json(const ReportModel& model, std::vector<std::string> sections = {}) {
  ReportRenderOptions render;
  render.sections = std::move(sections);
  return ReportToJson(model, render).dump(1);
}

RankJobOptions Job() {
  RankJobOptions job;
  job.ranks = 3;
  job.steps = 6;
  job.slow_rank = 2;
  job.delay_ns = 150'000;
  job.power_interval_ns = 400'000;
  job.with_agent = true;
  return job;
}

TEST(ReportParts, SomeSectionsAreWhatTheWholeReportHoldsOfThem) {
  TempDir dir;
  ASSERT_TRUE(testing::WriteRankJob(Job(), dir.path().string()).ok());
  ReportOptions options;
  options.insights = true;
  auto whole = BuildReport(dir.path().string(), options, report::kInsightsSection);
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  options.only_sections = {"ranks", "energy", "loss"};
  auto part = BuildReport(dir.path().string(), options, report::kInsightsSection);
  ASSERT_TRUE(part.ok()) << part.status().message();
  ASSERT_FALSE(whole->ranks.empty());
  EXPECT_EQ(Json(*part, {"ranks", "energy", "loss"}), Json(*whole, {"ranks", "energy", "loss"}));
  EXPECT_EQ(part->read_warnings, whole->read_warnings);
  // Nothing else was built.
  EXPECT_TRUE(part->kernels.empty());
  EXPECT_TRUE(part->utilization.empty());
  EXPECT_TRUE(part->insights.empty());
  EXPECT_FALSE(whole->kernels.empty());
}

TEST(ReportParts, ARankFromItsOwnFilesIsTheRankFromAllOfThem) {
  TempDir dir;
  ASSERT_TRUE(testing::WriteRankJob(Job(), dir.path().string()).ok());
  for (uint32_t pid : {1000u, 1001u, 1002u}) {
    ReportOptions options;
    options.pid = pid;
    options.insights = true;
    auto from_all = BuildReport(dir.path().string(), options, report::kInsightsSection);
    options.read_only_files_of_pid = true;
    auto from_own = BuildReport(dir.path().string(), options, report::kInsightsSection);
    ASSERT_TRUE(from_all.ok() && from_own.ok());
    ASSERT_FALSE(from_own->kernels.empty()) << pid;
    EXPECT_EQ(Json(*from_own), Json(*from_all)) << "pid " << pid;
  }
}

}  // namespace
}  // namespace gpuperf
