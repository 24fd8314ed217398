// The insights of a report (analyze/insights), as text and as JSON; used by the report's
// text and JSON renderers when the report ran its insight rules.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "analyze/report/report_model.h"

namespace gpuperf {

void InsightsText(const ReportModel& model, std::ostream& out);
nlohmann::ordered_json InsightsJson(const ReportModel& model);

}  // namespace gpuperf
