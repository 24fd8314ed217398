#include "analyze/diff/hardware_conditions.h"

#include <cstdio>
#include <regex>

#include "base/metric_sets.h"

namespace gpuperf {
namespace {

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

bool Matches(const HardwareRow& row, const HardwareCondition& c, const std::regex& name) {
  const bool is_range = row.kind != MetricRangeKind::kKernel;
  return is_range == c.ranges &&
         (std::regex_search(row.name, name) || std::regex_search(row.display_name, name));
}

}  // namespace

bool IsHardwareCondition(std::string_view text) {
  return text.starts_with("kernel:") || text.starts_with("range:");
}

Result<HardwareCondition> ParseHardwareCondition(std::string_view text) {
  HardwareCondition c;
  c.text = std::string(text);
  auto bad = [&](const std::string& why) {
    return Error(StatusCode::kInvalidArgument,
                 "bad --fail-if '" + std::string(text) + "': " + why +
                     " (e.g. kernel:copy_kernel:dram_pct<50, range:step:sm_busy_pct<-10%)");
  };
  c.ranges = text.starts_with("range:");
  text.remove_prefix(c.ranges ? 6 : 7);
  const size_t last = text.rfind(':');
  if (last == std::string_view::npos) return bad("no ':' between the name and the metric");
  c.name_pattern = std::string(text.substr(0, last));
  if (c.name_pattern.empty()) return bad("no name pattern (use '.' for every one)");
  try {
    std::regex check(c.name_pattern);
  } catch (const std::regex_error& e) {
    return bad(std::string("bad regular expression: ") + e.what());
  }
  std::string_view rest = text.substr(last + 1);
  const size_t op = rest.find_first_of("<>");
  if (op == std::string_view::npos) return bad("no comparison (>, >=, <, <=)");
  c.metric = std::string(rest.substr(0, op));
  while (!c.metric.empty() && c.metric.back() == ' ') c.metric.pop_back();
  const KnownMetric* known = FindKnownMetric(c.metric);
  if (known == nullptr && c.metric.find("__") == std::string::npos) {
    std::string names;
    for (const KnownMetric& m : KnownMetrics())
      names += (names.empty() ? "" : ", ") + std::string(m.short_name);
    return bad("unknown metric '" + c.metric + "' (short names: " + names +
               "; or a CUPTI metric name)");
  }
  c.cupti_metric = known ? std::string(known->cupti_name) : c.metric;
  Comparison comparison;
  std::string why;
  if (!ParseComparison(rest.substr(op), &comparison, &why)) return bad(why);
  c.op = comparison.op;
  c.relative_to_base = comparison.relative_to_base;
  double number = comparison.number;  // signed
  const std::string_view unit = comparison.unit;
  if (unit == "%") {
    // For a percent metric "50%" is 50 of its percent; with a sign it is relative.
    c.percent = c.relative_to_base;
  } else if (unit == "GB/s" || unit == "TB/s" || unit == "MB/s") {
    number *= unit == "TB/s" ? 1e12 : unit == "GB/s" ? 1e9 : 1e6;
  } else if (!unit.empty()) {
    return bad("unit '" + std::string(unit) + "' is not %, MB/s, GB/s or TB/s");
  }
  c.threshold = number;
  return c;
}

std::vector<std::string> CheckHardwareConditions(const ReportModel& base, const ReportModel& now,
                                                 const std::vector<HardwareCondition>& conditions) {
  std::vector<std::string> out;
  for (const HardwareCondition& c : conditions) {
    const std::regex name(c.name_pattern);
    bool matched = false;
    for (const HardwareRow& row : now.hardware) {
      if (!Matches(row, c, name)) continue;
      const std::optional<double> value = row.Get(c.cupti_metric);
      if (!value) continue;
      matched = true;
      const std::string subject =
          std::string(c.ranges ? "range " : "kernel ") + row.display_name + " " + c.metric;
      if (!c.relative_to_base) {
        if (Holds(c.op, *value, c.threshold)) {
          out.push_back(subject + " is " + Number(*value) + ", violating " + c.text);
        }
        continue;
      }
      const HardwareRow* before = nullptr;
      for (const HardwareRow& b : base.hardware) {
        if (b.kind == row.kind && b.name == row.name) before = &b;
      }
      const std::optional<double> old = before ? before->Get(c.cupti_metric) : std::nullopt;
      if (!old) continue;  // new kernels have no change to judge
      if (Holds(c.op, ChangeFromBase(c.percent, *old, *value), c.threshold)) {
        out.push_back(subject + " " + Number(*old) + " -> " + Number(*value) + ", violating " +
                      c.text);
      }
    }
    if (!matched) {
      out.push_back(std::string("no measured ") + (c.ranges ? "range" : "kernel") + " matches '" +
                    c.name_pattern + "' with " + c.metric + " (" + c.text + ")");
    }
  }
  return out;
}

}  // namespace gpuperf
