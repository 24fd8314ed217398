// The insight rules reach the report through BuildReport's later sections: with their
// section the report runs them last; asked for without it, the report says so instead of
// leaving the findings out unnoticed.
#include "analyze/insights/insights_section.h"

#include <gtest/gtest.h>

#include "gpuperf/trace.h"
#include "support/insight_scenario.h"

namespace gpuperf {
namespace {

using testing::InsightScenario;

Trace IdleStepsTrace() {
  InsightScenario s;
  const StackId next = s.Stack({"main", "train", "load_batch"});
  for (int step = 0; step < 3; ++step)
    s.Launch(next, "_Z4stepv", step * 3000, 5, step * 3000 + 6, 100);
  return s.trace().trace();
}

TEST(InsightsSection, RunsAfterTheReportsOwnSectionsWhenHandedIn) {
  ReportOptions options;
  options.insights = true;
  auto model = BuildReport(IdleStepsTrace(), options, report::kInsightsSection);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_TRUE(model->insights_run);
  ASSERT_FALSE(model->insights.empty());
  EXPECT_EQ(model->insights[0].rule, "gpu_idle_gaps");
  // The rules read the kernel table the report's own sections filled.
  ASSERT_EQ(model->kernels.size(), 1u);
}

TEST(InsightsSection, MakesNoSectionUnlessInsightsAreAskedFor) {
  auto model = BuildReport(IdleStepsTrace(), ReportOptions{}, report::kInsightsSection);
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_FALSE(model->insights_run);
  EXPECT_TRUE(model->insights.empty());
}

TEST(InsightsSection, InsightsWithoutTheirSectionAreAnError) {
  ReportOptions options;
  options.insights = true;
  auto model = BuildReport(IdleStepsTrace(), options);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(model.status().message().find("insights_section.h"), std::string::npos)
      << model.status().message();
}

}  // namespace
}  // namespace gpuperf
