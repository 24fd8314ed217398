// The JSON form of a report as a document, for `gpuperf diff`, which compares a
// baseline written by `report --format json` with a new report.
#pragma once

#include <nlohmann/json.hpp>

#include "export/report_export.h"

namespace gpuperf {

nlohmann::ordered_json ReportToJson(const ReportModel& model, const ReportRenderOptions& options);

}  // namespace gpuperf
