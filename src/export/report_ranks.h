// The report's "ranks" and "energy" sections in text and JSON (the models are built by
// src/analyze/ranks and src/analyze/energy; docs/multi-rank.md, docs/energy.md).
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "export/report_export.h"

namespace gpuperf {

void WriteRanksText(const ReportModel& model, std::ostream& out);
void WriteEnergyText(const ReportModel& model, const ReportRenderOptions& options,
                     std::ostream& out);

nlohmann::ordered_json RanksToJson(const RanksModel& ranks);
// Its NCCL profiler plugin part (report_nccl.cc): nothing, and no JSON key, without records.
void WriteNcclText(const RanksModel& ranks, std::ostream& out);
nlohmann::ordered_json NcclToJson(const RanksModel& ranks);
nlohmann::ordered_json EnergyToJson(const EnergyModel& energy);

// "2 ranks", "rank 1 (node3, GPU 1)": the label of a process in the ranks section, or
// "pid N" when the section does not know it.
std::string ProcessLabel(const RanksModel& ranks, uint32_t pid);

}  // namespace gpuperf
