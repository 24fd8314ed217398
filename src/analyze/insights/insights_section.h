// The report section behind `gpuperf report --insights` (insights_section.cc). The rules
// read what the report's own sections found, so they sit above the report: a caller that
// wants findings hands kInsightsSection to BuildReport, which runs it after every section of
// its own. It makes no section unless ReportOptions::insights is set.
#pragma once

#include <memory>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {

std::unique_ptr<ReportSection> MakeInsightsSection(ReportContext& context);

inline constexpr SectionFactory kInsightsSection[] = {MakeInsightsSection};

}  // namespace gpuperf::report
