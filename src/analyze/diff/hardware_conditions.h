// `gpuperf diff --fail-if` conditions on hardware metrics (reports of `gpuperf metrics`):
//
//   condition := ("kernel" | "range") ":" NAME ":" METRIC OP THRESHOLD
//
// NAME is a regular expression searched in the kernel's (mangled or short) or the range's name;
// METRIC a short name of base/metric_sets.h (dram_pct, sm_pct, occupancy, ...) or a CUPTI
// metric name; OP and THRESHOLD as for the other conditions (report_diff.h): an unsigned
// threshold bounds the new value ("kernel:copy:dram_pct<50": DRAM throughput below 50% of
// peak fails), a signed one the change from the baseline ("kernel:.:sm_pct<-10%": SM
// throughput down by more than 10% fails; "-5" without % is 5 points of the metric). A
// condition no measured kernel or range matches fails too: a gate must not pass vacuously.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyze/diff/report_diff.h"
#include "analyze/report/report_model.h"
#include "gpuperf/status.h"

namespace gpuperf {

struct HardwareCondition {
  std::string text;
  bool ranges = false;  // "range:" (NVTX ranges and windows), else kernels
  std::string name_pattern;
  std::string metric;  // as written
  std::string cupti_metric;
  FailCondition::Op op = FailCondition::Op::kGreater;
  bool relative_to_base = false;
  bool percent = false;  // of the baseline's value (relative only)
  double threshold = 0;
};

bool IsHardwareCondition(std::string_view text);
Result<HardwareCondition> ParseHardwareCondition(std::string_view text);

// One line per violation.
std::vector<std::string> CheckHardwareConditions(const ReportModel& base, const ReportModel& now,
                                                 const std::vector<HardwareCondition>& conditions);

}  // namespace gpuperf
