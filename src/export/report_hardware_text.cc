// The report's hardware tables: metrics per kernel with the bound, metrics per NVTX range or
// window, and PC sampling's hottest lines per kernel.
#include <cmath>
#include <cstdio>
#include <string>

#include "base/text_escape.h"
#include "base/text_table.h"
#include "base/units.h"
#include "export/report_hardware.h"

namespace gpuperf {
namespace {

using Align = TextTable::Align;

// A metric for a table cell: "-" when not measured.
std::string Cell(const HardwareRow& row, const char* metric, double scale = 1, int decimals = 1) {
  const std::optional<double> v = row.Get(metric);
  if (!v || !std::isfinite(*v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, *v * scale);
  return buf;
}

std::string Stalls(const StallList& stalls, uint64_t total, size_t most) {
  std::string out;
  for (size_t i = 0; i < stalls.size() && i < most; ++i) {
    if (!out.empty()) out += ", ";
    out += stalls[i].first + " " + FormatPercent(total ? double(stalls[i].second) / total : 0);
  }
  return out;
}

void Metrics(const ReportModel& m, bool kernels, std::ostream& out) {
  TextTable t;
  const bool per_kernel = kernels;
  for (const char* h : {"Count", "Bound"})
    t.AddColumn(h, h[0] == 'B' ? Align::kLeft : Align::kRight);
  if (per_kernel) {
    for (const char* h : {"SM %", "Mem %"}) t.AddColumn(h);
  } else {
    for (const char* h : {"SM busy %", "Issue %"}) t.AddColumn(h);
  }
  for (const char* h : {"DRAM %", "DRAM GB/s", "Occupancy %", "L1 hit %"}) t.AddColumn(h);
  if (per_kernel) t.AddColumn("L2 hit %", Align::kRight, 2);
  t.AddColumn("Tensor %", Align::kRight, 1);
  t.AddColumn(per_kernel ? "Kernel" : "Range", Align::kLeft);
  std::vector<const HardwareRow*> rows;
  for (const HardwareRow& row : m.hardware) {
    if ((row.kind == MetricRangeKind::kKernel) == kernels) rows.push_back(&row);
  }
  if (rows.empty()) return;
  std::string set = rows.front()->metric_set;
  uint32_t passes = rows.front()->passes;
  for (const HardwareRow* r : rows) {
    std::vector<std::string> cells = {FormatCount(r->ranges),
                                      r->verdict.bound.empty() ? "-" : r->verdict.bound};
    cells.push_back(Cell(*r, per_kernel ? "sm_pct" : "sm_busy_pct"));
    cells.push_back(Cell(*r, per_kernel ? "mem_pct" : "issue_pct"));
    cells.push_back(Cell(*r, "dram_pct"));
    cells.push_back(Cell(*r, "dram_bw", 1e-9, 0));
    cells.push_back(Cell(*r, "occupancy"));
    cells.push_back(Cell(*r, "l1_hit"));
    if (per_kernel) cells.push_back(Cell(*r, "l2_hit"));
    cells.push_back(Cell(*r, "tensor_pct"));
    cells.push_back(r->kind == MetricRangeKind::kWindow ? "[" + r->display_name + "]"
                                                        : r->display_name);
    t.AddRow(std::move(cells));
  }
  out << '\n'
      << (per_kernel ? "Hardware metrics per kernel" : "Hardware metrics per range") << "  (set "
      << set << ", " << passes << (passes == 1 ? " pass" : " passes")
      << (per_kernel ? "; kernel replay ran each kernel alone, so these are not timeline times)"
                     : "; kernels kept concurrent)")
      << '\n';
  t.Render(out);
  for (const HardwareRow* r : rows) {
    if (r->verdict.bound.empty()) continue;
    WriteNote(out, r->display_name + ": " + r->verdict.bound + " bound: " + r->verdict.reason,
              "    ");
  }
}

void PcSampling(const ReportModel& m, std::ostream& out) {
  uint64_t total = 0;
  for (const PcKernelRow& k : m.pc_sampling) total += k.samples;
  out << "\nPC sampling: hot lines  (" << FormatCount(total) << " samples; 'gpuperf source KERNEL' "
      << "shows every line)\n";
  for (const PcKernelRow& k : m.pc_sampling) {
    out << "  " << DisplayText(k.display_name) << "  " << FormatCount(k.samples) << " samples ("
        << FormatPercent(k.fraction) << ")";
    if (!k.stalls.empty()) out << "; stalls: " << Stalls(k.stalls, k.samples, 3);
    out << '\n';
    if (!k.has_lines) {
      WriteNote(out,
                "no line information: the kernel was built without -lineinfo (rebuild with "
                "nvcc -lineinfo to see source lines); hottest SASS offsets:",
                "    ");
    }
    TextTable t;
    for (const char* h : {"Samples", "Share"}) t.AddColumn(h);
    t.AddColumn(k.has_lines ? "Line" : "Offset", Align::kLeft);
    t.AddColumn("Stalls", Align::kLeft, 1);
    for (const HotLineRow& l : k.lines) {
      char offset[32];
      std::snprintf(offset, sizeof(offset), "+0x%llx",
                    static_cast<unsigned long long>(l.pc_offset));
      std::string where = l.line ? l.file + ":" + std::to_string(l.line) : std::string(offset);
      t.AddRow({FormatCount(l.samples), FormatPercent(l.fraction), where,
                Stalls(l.stalls, l.samples, 3)});
    }
    t.Render(out, "    ");
  }
}

}  // namespace

void WriteHardwareText(const ReportModel& model, std::ostream& out) {
  Metrics(model, /*kernels=*/true, out);
  Metrics(model, /*kernels=*/false, out);
  if (!model.pc_sampling.empty()) PcSampling(model, out);
}

}  // namespace gpuperf
