// The JSON form of a report as a document, both ways: written by `report --format json`
// (schema in docs/report.md), read back as a model for `gpuperf diff` baselines.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "export/report_export.h"

namespace gpuperf {

nlohmann::ordered_json ReportToJson(const ReportModel& model, const ReportRenderOptions& options);

// The model a report document describes; sections the document lacks (--sections) are
// empty. Fails when `doc` is not a report of the schema version this gpuperf reads;
// `what` names the document in the message ("the baseline").
Result<ReportModel> ReportFromJson(const nlohmann::ordered_json& doc,
                                   std::string_view what = "the document");

}  // namespace gpuperf
