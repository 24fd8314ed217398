// Renderers of a ReportModel: aligned text for people, JSON for machines and for
// `gpuperf diff` baselines (schema in docs/report.md), CSV for spreadsheets.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/report/report_model.h"
#include "gpuperf/status.h"

namespace gpuperf {

// Section names, in report order. "loss" (what the recording lost) is always shown in
// text output when anything was lost, whatever sections are chosen. "insights" shows only
// when the report ran its insight rules (--insights; choosing the section runs them).
inline constexpr std::string_view kReportSections[] = {
    "summary", "loss",     "insights", "kernels", "runtime_api", "driver_api",
    "memcpy",  "memset",   "sync",     "memory",  "utilization", "nvtx",
    "cpu",     "overhead", "hardware", "ranks",   "energy"};

struct ReportRenderOptions {
  std::vector<std::string> sections;  // empty: all
  bool full_names = false;            // text: full demangled kernel names
  size_t name_width = 60;             // text: longest shown name unless full_names
  uint32_t total_kernels = 0;         // rows before --top, for "top N of M" (0: unknown)
  uint32_t total_runtime_api = 0;
  uint32_t total_driver_api = 0;
  bool Wants(std::string_view section) const;
};

// Parses "kernels,memcpy" into `out`; an unknown name is an error naming the valid ones.
Status ParseReportSections(std::string_view list, std::vector<std::string>& out);

Status ExportReportText(const ReportModel& model, const ReportRenderOptions& options,
                        std::ostream& out);
Status ExportReportJson(const ReportModel& model, const ReportRenderOptions& options,
                        std::ostream& out);
Status ExportReportCsv(const ReportModel& model, const ReportRenderOptions& options,
                       std::ostream& out);

// The version of the JSON schema; bumped on any incompatible change.
inline constexpr int kReportSchemaVersion = 1;

}  // namespace gpuperf
