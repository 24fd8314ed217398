// The CPU part of `gpuperf report` (ReportModel::cpu, recordings with --cpu/--off-cpu) in
// the report's text and JSON forms; the CSV form writes its tables itself. Traces without
// CPU samples render nothing, so their reports stay as they were.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "analyze/report/report_model.h"

namespace gpuperf {

void WriteCpuReportText(const CpuReport& cpu, std::ostream& out);
nlohmann::ordered_json CpuReportToJson(const CpuReport& cpu);

}  // namespace gpuperf
