#include "analyze/diff/report_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "base/quantity.h"
#include "base/text_escape.h"
#include "base/units.h"

namespace gpuperf {

const std::vector<DiffMetric> kDiffMetrics = {
    {"total_gpu_time", MetricScope::kTotal, MetricUnit::kNs, "total GPU time"},
    {"total_kernel_time", MetricScope::kTotal, MetricUnit::kNs, "total kernel time"},
    {"total_memcpy_time", MetricScope::kTotal, MetricUnit::kNs, "total memcpy time"},
    {"total_memcpy_bytes", MetricScope::kTotal, MetricUnit::kBytes, "bytes copied"},
    {"total_api_time", MetricScope::kTotal, MetricUnit::kNs, "total CUDA API time"},
    {"kernel_launches", MetricScope::kTotal, MetricUnit::kCount, "kernel launches"},
    {"api_calls", MetricScope::kTotal, MetricUnit::kCount, "CUDA API calls"},
    {"api_failures", MetricScope::kTotal, MetricUnit::kCount, "failed CUDA API calls"},
    {"new_api_errors", MetricScope::kTotal, MetricUnit::kCount,
     "API error kinds not in the baseline"},
    {"span", MetricScope::kTotal, MetricUnit::kNs, "trace span"},
    {"peak_memory", MetricScope::kTotal, MetricUnit::kBytes, "peak device memory"},
    {"leaked_bytes", MetricScope::kTotal, MetricUnit::kBytes, "bytes still allocated at exit"},
    {"gpu_busy", MetricScope::kTotal, MetricUnit::kFraction, "GPU busy"},
    {"data_loss", MetricScope::kTotal, MetricUnit::kCount, "lost: records+bytes+chunks+files"},
    {"kernel_total", MetricScope::kKernel, MetricUnit::kNs, "total"},
    {"kernel_avg", MetricScope::kKernel, MetricUnit::kNs, "avg"},
    {"kernel_median", MetricScope::kKernel, MetricUnit::kNs, "median"},
    {"kernel_max", MetricScope::kKernel, MetricUnit::kNs, "max"},
    {"kernel_calls", MetricScope::kKernel, MetricUnit::kCount, "calls"},
    {"api_total", MetricScope::kApi, MetricUnit::kNs, "total"},
    {"api_avg", MetricScope::kApi, MetricUnit::kNs, "avg"},
    {"api_max", MetricScope::kApi, MetricUnit::kNs, "max"},
    {"api_call_count", MetricScope::kApi, MetricUnit::kCount, "calls"},
    {"api_failed_calls", MetricScope::kApi, MetricUnit::kCount, "failed calls"},
};

namespace {

const DiffMetric* FindMetric(std::string_view name) {
  for (const DiffMetric& m : kDiffMetrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// One row of a per-item table (kernel or API function), by name.
struct ItemRow {
  std::string display_name;
  const DurationStats* time = nullptr;
  uint64_t failures = 0;
};

// Keyed by the UTF-8 form of the name (base/text_escape.h): a report read back from JSON
// holds names in that form, a trace holds the bytes, and both must meet.
std::map<std::string, ItemRow> Kernels(const ReportModel& m) {
  std::map<std::string, ItemRow> out;
  for (const KernelRow& k : m.kernels) {
    out[Utf8Text(k.name)] = {k.display_name.empty() ? k.name : k.display_name, &k.time, 0};
  }
  return out;
}

// Runtime and driver functions in one table; a driver row wins over a runtime row of
// the same name.
std::map<std::string, ItemRow> Apis(const ReportModel& m) {
  std::map<std::string, ItemRow> out;
  for (const auto* rows : {&m.runtime_api, &m.driver_api}) {
    for (const ApiRow& a : *rows) out[Utf8Text(a.name)] = {a.name, &a.time, a.failures};
  }
  return out;
}

std::set<std::string> ErrorKinds(const ReportModel& m, std::map<std::string, uint64_t>* counts) {
  std::set<std::string> out;
  for (const auto* rows : {&m.runtime_api, &m.driver_api}) {
    for (const ApiRow& row : *rows) {
      for (const ApiError& e : row.errors) {
        if (e.code == 0 || e.code == 600) continue;  // success, not ready
        std::string key = row.name + ": " + e.name;
        out.insert(key);
        if (counts) (*counts)[key] += e.count;
      }
    }
  }
  return out;
}

double Total(const ReportModel& m, const DiffMetric& metric) {
  const ReportSummary& s = m.summary;
  const std::string_view n = metric.name;
  auto value = [](uint64_t v) { return static_cast<double>(v); };
  if (n == "total_gpu_time") return value(s.gpu_ns());
  if (n == "total_kernel_time") return value(s.kernel_ns);
  if (n == "total_memcpy_time") return value(s.memcpy_ns);
  if (n == "total_memcpy_bytes") return value(s.memcpy_bytes);
  if (n == "total_api_time") return value(s.api_ns);
  if (n == "kernel_launches") return value(s.kernels);
  if (n == "api_calls") return value(s.api_calls);
  if (n == "api_failures") return value(s.api_failures);
  if (n == "span") return value(s.span_ns);
  if (n == "peak_memory" || n == "leaked_bytes") {
    double sum = 0;
    for (const MemoryDeviceRow& d : m.memory) {
      sum += value(n == "peak_memory" ? d.peak_bytes : d.live_bytes_at_exit);
    }
    return sum;
  }
  if (n == "gpu_busy") {
    double busy = 0, span = 0;
    for (const UtilizationRow& d : m.utilization) {
      busy += value(d.busy_ns);
      span += value(d.span_ns);
    }
    return span > 0 ? busy / span : 0;
  }
  if (n == "data_loss") {
    double sum = 0;
    for (const LossRow& l : m.loss) {
      if (l.severity == "data_loss") sum += value(l.value);
    }
    return sum;
  }
  return 0;
}

double ItemValue(const ItemRow& row, const DiffMetric& m) {
  const std::string_view n = m.name;
  const DurationStats& t = *row.time;
  if (n == "kernel_total" || n == "api_total") return static_cast<double>(t.total_ns);
  if (n == "kernel_avg" || n == "api_avg") return static_cast<double>(t.avg_ns());
  if (n == "kernel_median") return static_cast<double>(t.median_ns);
  if (n == "kernel_max" || n == "api_max") return static_cast<double>(t.max_ns);
  if (n == "kernel_calls" || n == "api_call_count") return static_cast<double>(t.count);
  if (n == "api_failed_calls") return static_cast<double>(row.failures);
  return 0;
}

std::vector<ItemDelta> Items(const std::map<std::string, ItemRow>& base,
                             const std::map<std::string, ItemRow>& now, MetricScope scope) {
  std::map<std::string, ItemDelta> items;
  auto fill = [&](const std::map<std::string, ItemRow>& rows, bool is_base) {
    for (const auto& [name, row] : rows) {
      ItemDelta& d = items[name];
      d.name = name;
      if (d.display_name.empty()) d.display_name = row.display_name;
      for (const DiffMetric& m : kDiffMetrics) {
        if (m.scope != scope) continue;
        auto it = std::find_if(d.values.begin(), d.values.end(),
                               [&](const auto& v) { return v.first == m.name; });
        if (it == d.values.end()) {
          d.values.push_back({m.name, {0, 0}});
          it = d.values.end() - 1;
        }
        (is_base ? it->second.first : it->second.second) = ItemValue(row, m);
      }
      const DurationStats& t = *row.time;
      if (is_base) {
        d.in_base = true;
        d.base_calls = t.count;
        d.base_total_ns = t.total_ns;
        d.base_avg_ns = t.avg_ns();
        d.base_failures = row.failures;
      } else {
        d.in_new = true;
        d.new_calls = t.count;
        d.new_total_ns = t.total_ns;
        d.new_avg_ns = t.avg_ns();
        d.new_failures = row.failures;
      }
    }
  };
  fill(base, true);
  fill(now, false);
  std::vector<ItemDelta> out;
  for (auto& [name, d] : items) out.push_back(std::move(d));
  auto change = [](const ItemDelta& d) {
    return std::abs(static_cast<double>(d.new_total_ns) - static_cast<double>(d.base_total_ns));
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const ItemDelta& a, const ItemDelta& b) { return change(a) > change(b); });
  return out;
}

std::string SignedPercent(double base, double now) {
  if (base == 0) return now == 0 ? "+0.0%" : "new";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", (now - base) / base * 100.0);
  return buf;
}

}  // namespace

std::string FormatMetric(MetricUnit unit, double value) {
  const uint64_t v = value <= 0 ? 0 : static_cast<uint64_t>(std::llround(value));
  switch (unit) {
    case MetricUnit::kNs:
      return FormatDuration(v);
    case MetricUnit::kBytes:
      return FormatBytes(v);
    case MetricUnit::kCount:
      return FormatCount(v);
    case MetricUnit::kFraction:
      return FormatPercent(value);
  }
  return std::to_string(value);
}

bool ParseComparison(std::string_view text, Comparison* out, std::string* why) {
  if (text.empty() || (text.front() != '<' && text.front() != '>')) {
    *why = "no comparison (>, >=, <, <=)";
    return false;
  }
  const bool greater = text.front() == '>';
  text.remove_prefix(1);
  const bool or_equal = !text.empty() && text.front() == '=';
  if (or_equal) text.remove_prefix(1);
  out->op = greater ? (or_equal ? FailCondition::Op::kGreaterEqual : FailCondition::Op::kGreater)
                    : (or_equal ? FailCondition::Op::kLessEqual : FailCondition::Op::kLess);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  double sign = 1;
  out->relative_to_base = !text.empty() && (text.front() == '+' || text.front() == '-');
  if (out->relative_to_base) {
    sign = text.front() == '-' ? -1 : 1;
    text.remove_prefix(1);
  }
  double number = 0;
  if (!SplitNumber(text, &number, &out->unit)) {
    *why = "no number after the comparison";
    return false;
  }
  if (!std::isfinite(number)) {
    *why = "the number is too large";
    return false;
  }
  out->number = sign * number;
  return true;
}

double ChangeFromBase(bool percent, double base, double now) {
  if (!percent) return now - base;
  // Anything from nothing is an infinite increase, nothing from nothing none.
  if (base == 0) return now > 0 ? INFINITY : 0;
  return (now - base) / base * 100.0;
}

bool Holds(FailCondition::Op op, double value, double threshold) {
  switch (op) {
    case FailCondition::Op::kGreater:
      return value > threshold;
    case FailCondition::Op::kGreaterEqual:
      return value >= threshold;
    case FailCondition::Op::kLess:
      return value < threshold;
    case FailCondition::Op::kLessEqual:
      return value <= threshold;
  }
  return false;
}

Result<FailCondition> ParseFailCondition(std::string_view text) {
  FailCondition c;
  c.text = std::string(text);
  auto bad = [&](const std::string& why) {
    return Error(StatusCode::kInvalidArgument,
                 "bad --fail-if '" + std::string(text) + "': " + why +
                     " (e.g. total_gpu_time>+10%, kernel_avg>+20%, api_failures>0)");
  };
  const size_t op = text.find_first_of("<>");
  if (op == std::string_view::npos) return bad("no comparison (>, >=, <, <=)");
  std::string_view name = text.substr(0, op);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  c.metric = FindMetric(name);
  if (c.metric == nullptr) {
    std::string names;
    for (const DiffMetric& m : kDiffMetrics)
      names += (names.empty() ? "" : ", ") + std::string(m.name);
    return Error(StatusCode::kInvalidArgument, "bad --fail-if '" + std::string(text) +
                                                   "': unknown metric '" + std::string(name) +
                                                   "' (metrics: " + names + ")");
  }
  Comparison comparison;
  std::string why;
  if (!ParseComparison(text.substr(op), &comparison, &why)) return bad(why);
  c.op = comparison.op;
  c.relative_to_base = comparison.relative_to_base;
  const double threshold = comparison.number;  // signed
  const std::string_view unit = comparison.unit;
  // The threshold's text without its sign, for the unit parsers.
  const std::string_view rest = text.substr(text.find_first_not_of("<>=+- ", op));
  if (unit == "%") {
    c.percent = true;
    if (!c.relative_to_base && c.metric->unit != MetricUnit::kFraction) {
      return bad("a percentage needs a sign (+10% means 10% more than the baseline)");
    }
    c.threshold = threshold;
  } else if (unit.empty()) {
    if (c.metric->unit == MetricUnit::kNs && threshold != 0) return bad("a time needs a unit");
    c.threshold = threshold;
  } else if (c.metric->unit == MetricUnit::kNs) {
    auto ns = ParseDurationNs("", rest, DurationSpec{});
    if (!ns.ok()) return bad(ns.status().message());
    c.threshold = (threshold < 0 ? -1.0 : 1.0) * static_cast<double>(*ns);
  } else if (c.metric->unit == MetricUnit::kBytes) {
    auto bytes = ParseBytes("", rest, SizeSpec{});
    if (!bytes.ok()) return bad(bytes.status().message());
    c.threshold = (threshold < 0 ? -1.0 : 1.0) * static_cast<double>(*bytes);
  } else {
    return bad("unit '" + std::string(unit) + "' does not fit metric " +
               std::string(c.metric->name));
  }
  return c;
}

ReportDiff DiffReports(const ReportModel& base, const ReportModel& now) {
  ReportDiff diff;
  std::map<std::string, uint64_t> new_error_counts;
  const std::set<std::string> base_errors = ErrorKinds(base, nullptr);
  const std::set<std::string> new_errors = ErrorKinds(now, &new_error_counts);
  for (const std::string& e : new_errors) {
    if (!base_errors.count(e)) {
      diff.new_api_errors.push_back(e + " x" + FormatCount(new_error_counts[e]));
    }
  }
  for (const DiffMetric& m : kDiffMetrics) {
    if (m.scope != MetricScope::kTotal) continue;
    MetricDelta d;
    d.metric = &m;
    d.in_base = d.in_new = true;
    if (m.name == "new_api_errors") {
      d.base = 0;
      d.now = static_cast<double>(diff.new_api_errors.size());
    } else {
      d.base = Total(base, m);
      d.now = Total(now, m);
    }
    diff.totals.push_back(d);
  }
  diff.kernels = Items(Kernels(base), Kernels(now), MetricScope::kKernel);
  diff.apis = Items(Apis(base), Apis(now), MetricScope::kApi);
  return diff;
}

namespace {

bool Violates(const FailCondition& c, double base, double now) {
  double value = now;
  if (c.relative_to_base) {
    value = ChangeFromBase(c.percent, base, now);
  } else if (c.percent) {
    value = now * 100.0;  // a fraction metric against an absolute percentage
  }
  return Holds(c.op, value, c.threshold);
}

std::string ThresholdText(const FailCondition& c) {
  const size_t op = c.text.find_first_of("<>");
  std::string t = c.text.substr(op + 1);
  if (!t.empty() && t.front() == '=') t.erase(0, 1);
  return t;
}

std::string Message(const FailCondition& c, const std::string& subject, double base, double now) {
  std::string line = subject + " " + FormatMetric(c.metric->unit, base) + " -> " +
                     FormatMetric(c.metric->unit, now) + " (" + SignedPercent(base, now) + ")";
  const bool above =
      c.op == FailCondition::Op::kGreater || c.op == FailCondition::Op::kGreaterEqual;
  line += above ? " exceeds " : " falls below ";
  return line + ThresholdText(c);
}

}  // namespace

std::vector<std::string> CheckFailConditions(const ReportDiff& diff,
                                             const std::vector<FailCondition>& conditions,
                                             uint64_t min_item_ns) {
  std::vector<std::string> out;
  for (const FailCondition& c : conditions) {
    if (c.metric->scope == MetricScope::kTotal) {
      for (const MetricDelta& d : diff.totals) {
        if (d.metric == c.metric && Violates(c, d.base, d.now)) {
          out.push_back(Message(c, std::string(c.metric->label), d.base, d.now));
        }
      }
      continue;
    }
    const bool kernel = c.metric->scope == MetricScope::kKernel;
    for (const ItemDelta& item : kernel ? diff.kernels : diff.apis) {
      if (!item.in_base || !item.in_new || item.base_total_ns < min_item_ns) continue;
      auto it = std::find_if(item.values.begin(), item.values.end(),
                             [&](const auto& v) { return v.first == c.metric->name; });
      if (it == item.values.end()) continue;
      const auto [base, now] = it->second;
      if (Violates(c, base, now)) {
        out.push_back(Message(
            c,
            (kernel ? "kernel " : "API ") + item.display_name + " " + std::string(c.metric->label),
            base, now));
      }
    }
  }
  return out;
}

}  // namespace gpuperf
