#include "export/diff_text.h"

#include <cmath>
#include <cstdio>

#include "base/text_escape.h"
#include "base/text_table.h"
#include "base/units.h"

namespace gpuperf {
namespace {

std::string Change(double base, double now) {
  if (base == 0) return now == 0 ? "0.0%" : "new";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%+.1f%%", (now - base) / base * 100.0);
  return buf;
}

std::string SignedDuration(uint64_t base, uint64_t now) {
  return (now >= base ? "+" : "-") + FormatDuration(now >= base ? now - base : base - now);
}

void Items(const char* title, const std::vector<ItemDelta>& items, bool failures,
           const DiffTextOptions& o, std::ostream& out) {
  out << '\n' << title << "  (by change in total time";
  if (o.top && items.size() > o.top) out << "; top " << o.top << " of " << items.size();
  out << ")\n";
  if (items.empty()) {
    out << "  none in either report\n";
    return;
  }
  TextTable t;
  for (const char* h : {"Base total", "New total", "Change", "Change%", "Base avg", "New avg",
                        "Avg%", "Base calls", "New calls"}) {
    t.AddColumn(h);
  }
  if (failures) t.AddColumn("Failed");
  t.AddColumn("Name", TextTable::Align::kLeft);
  size_t shown = 0;
  for (const ItemDelta& d : items) {
    if (o.top && shown++ >= o.top) break;
    std::string name = Ellipsize(d.display_name, o.name_width);
    if (!d.in_base) name += " (new)";
    if (!d.in_new) name += " (gone)";
    std::vector<std::string> row = {
        d.in_base ? FormatDuration(d.base_total_ns) : "-",
        d.in_new ? FormatDuration(d.new_total_ns) : "-",
        SignedDuration(d.base_total_ns, d.new_total_ns),
        Change(static_cast<double>(d.base_total_ns), static_cast<double>(d.new_total_ns)),
        d.in_base ? FormatDuration(d.base_avg_ns) : "-",
        d.in_new ? FormatDuration(d.new_avg_ns) : "-",
        d.in_base && d.in_new
            ? Change(static_cast<double>(d.base_avg_ns), static_cast<double>(d.new_avg_ns))
            : "",
        FormatCount(d.base_calls),
        FormatCount(d.new_calls)};
    if (failures) {
      row.push_back(d.base_failures || d.new_failures
                        ? FormatCount(d.base_failures) + " -> " + FormatCount(d.new_failures)
                        : "-");
    }
    row.push_back(name);
    t.AddRow(std::move(row));
  }
  t.Render(out);
}

}  // namespace

Status ExportDiffText(const ReportDiff& diff, const DiffTextOptions& o, std::ostream& out) {
  out << "gpuperf diff: " << DisplayText(o.base_label) << " -> " << DisplayText(o.new_label)
      << '\n';
  TextTable t;
  t.AddColumn("Metric", TextTable::Align::kLeft);
  t.AddColumn("Baseline");
  t.AddColumn("New");
  t.AddColumn("Change");
  t.AddColumn("Name for --fail-if", TextTable::Align::kLeft);
  for (const MetricDelta& d : diff.totals) {
    t.AddRow({std::string(d.metric->label), FormatMetric(d.metric->unit, d.base),
              FormatMetric(d.metric->unit, d.now), Change(d.base, d.now),
              std::string(d.metric->name)});
  }
  t.Render(out);
  Items("Kernels", diff.kernels, false, o, out);
  Items("CUDA API", diff.apis, true, o, out);
  if (!diff.new_api_errors.empty()) {
    out << "\nAPI errors not in the baseline:\n";
    for (const std::string& e : diff.new_api_errors) out << "  " << DisplayText(e) << '\n';
  }
  if (!out) return Error(StatusCode::kIoError, "cannot write the diff");
  return Status::Ok();
}

}  // namespace gpuperf
