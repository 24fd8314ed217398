// `gpuperf diff`: compares two reports (a baseline written by `report --format json`
// reads back as a model, export/report_json.h) and checks regression conditions for CI.
//
// Condition grammar (one condition per --fail-if):
//   condition := metric op threshold
//   op        := ">" | ">=" | "<" | "<="
//   threshold := [sign] number [unit]      sign := "+" | "-"
//   unit      := "%" | ns | us | ms | s | B | KB | MB | GB | KiB | MiB | GiB
// With a sign the threshold is a change from the baseline: "+10%" relative, "+2ms"
// absolute. Without a sign it is a bound on the new value ("api_failures>0",
// "gpu_busy<50%"). Metrics (see kDiffMetrics) are whole-run totals, or per kernel /
// per API function ("kernel_avg>+20%" is checked for every kernel in both reports).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/report/report_model.h"
#include "gpuperf/status.h"

namespace gpuperf {

enum class MetricUnit { kNs, kBytes, kCount, kFraction };

enum class MetricScope { kTotal, kKernel, kApi };

struct DiffMetric {
  std::string_view name;
  MetricScope scope;
  MetricUnit unit;
  std::string_view label;  // for messages: "total GPU time", "avg"
};

extern const std::vector<DiffMetric> kDiffMetrics;

struct FailCondition {
  std::string text;  // as written, for messages
  const DiffMetric* metric = nullptr;
  enum class Op { kGreater, kGreaterEqual, kLess, kLessEqual } op = Op::kGreater;
  bool relative_to_base = false;  // threshold had a sign: compare the change
  bool percent = false;
  double threshold = 0;  // percent points, or the metric's unit
};

Result<FailCondition> ParseFailCondition(std::string_view text);

// The comparison that ends a condition: op [sign] number [unit]. A sign makes the threshold a
// change from the baseline. Shared with the hardware conditions (hardware_conditions.h).
struct Comparison {
  FailCondition::Op op = FailCondition::Op::kGreater;
  bool relative_to_base = false;
  double number = 0;  // signed
  std::string_view unit;
};
// `text` starts at the operator. On error returns false and says why in `why`.
bool ParseComparison(std::string_view text, Comparison* out, std::string* why);
// The change from `base` to `now`: in percent of `base`, or in the metric's unit.
double ChangeFromBase(bool percent, double base, double now);
// Whether `value` op `threshold` holds (the condition is violated).
bool Holds(FailCondition::Op op, double value, double threshold);

// One value of a metric in both reports.
struct MetricDelta {
  const DiffMetric* metric = nullptr;
  std::string item;          // kernel or API name; empty for totals
  std::string display_item;  // shortened kernel name
  bool in_base = false;
  bool in_new = false;
  double base = 0;
  double now = 0;
};

struct ItemDelta {
  std::string name;
  std::string display_name;
  bool in_base = false, in_new = false;
  uint64_t base_calls = 0, new_calls = 0;
  uint64_t base_total_ns = 0, new_total_ns = 0;
  uint64_t base_avg_ns = 0, new_avg_ns = 0;
  uint64_t base_failures = 0, new_failures = 0;
  // Every per-item metric of its scope: name -> (baseline, new).
  std::vector<std::pair<std::string_view, std::pair<double, double>>> values;
};

struct ReportDiff {
  std::vector<MetricDelta> totals;
  std::vector<ItemDelta> kernels;  // sorted by |change in total time|
  std::vector<ItemDelta> apis;
  std::vector<std::string> new_api_errors;  // "cudaMalloc: cudaErrorMemoryAllocation x3"
};

ReportDiff DiffReports(const ReportModel& base, const ReportModel& now);

// One line per violated condition ("total GPU time 12.3 ms -> 14.1 ms (+14.6%) exceeds
// +10%"). Per-item conditions skip items whose baseline total time is below
// `min_item_ns` (noise of tiny kernels) and items missing from either report.
std::vector<std::string> CheckFailConditions(const ReportDiff& diff,
                                             const std::vector<FailCondition>& conditions,
                                             uint64_t min_item_ns);

// Formats a metric value in its unit ("12.3 ms", "1.50 MiB", "1,234", "45.0%").
std::string FormatMetric(MetricUnit unit, double value);

}  // namespace gpuperf
