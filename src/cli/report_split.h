// `gpuperf report --split-by rank`: the report of each rank of a distributed run in rank
// order, then the ranks section of the whole run (docs/multi-rank.md).
#pragma once

#include <ostream>
#include <string>

#include "analyze/report/report_model.h"
#include "export/report_export.h"

namespace gpuperf::cli {

struct SplitReportRequest {
  std::string path;
  ReportOptions options;  // applied to every rank's report (its pid filter is replaced)
  ReportRenderOptions render;
  ReportSort sort = ReportSort::kTotal;
  uint32_t top = 0;
  bool json = false;
};

// Writes the per-rank reports to `out`; read warnings go to stderr once.
Status WriteReportByRank(const SplitReportRequest& request, std::ostream& out);

}  // namespace gpuperf::cli
