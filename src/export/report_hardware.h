// The hardware part of a report (ReportModel::hardware, ::pc_sampling) in each output form.
// Every writer adds nothing when the trace holds no metrics and no PC samples.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "analyze/report/report_model.h"

namespace gpuperf {

void WriteHardwareText(const ReportModel& model, std::ostream& out);

// Adds "hardware" and "pc_sampling" to a report document (when there is something to add).
void PutHardwareJson(const ReportModel& model, nlohmann::ordered_json& doc);
// Reads them back (diff baselines).
void ReadHardwareJson(const nlohmann::ordered_json& doc, ReportModel& model);

}  // namespace gpuperf
