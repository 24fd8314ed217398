// Text form of `gpuperf diff`: totals, then per-kernel and per-API changes.
#pragma once

#include <ostream>
#include <string>

#include "analyze/diff/report_diff.h"
#include "gpuperf/status.h"

namespace gpuperf {

struct DiffTextOptions {
  std::string base_label;
  std::string new_label;
  uint32_t top = 20;  // rows per table, 0: all
  size_t name_width = 60;
};

Status ExportDiffText(const ReportDiff& diff, const DiffTextOptions& options, std::ostream& out);

}  // namespace gpuperf
