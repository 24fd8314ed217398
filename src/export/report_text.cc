// The terminal form of `gpuperf report`: a header with what the trace holds, what was
// lost (prominently, whenever anything was), then one aligned table per section.
#include <cinttypes>
#include <cstdio>
#include <string>

#include "base/text_escape.h"
#include "base/text_table.h"
#include "base/units.h"
#include "export/report_cpu.h"
#include "export/report_export.h"
#include "export/report_hardware.h"
#include "export/report_insights.h"
#include "export/report_ranks.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

using Align = TextTable::Align;

std::string Count(uint64_t n) {
  return FormatCount(n);
}
std::string Dur(uint64_t ns) {
  return FormatDuration(ns);
}
std::string Pct(double fraction) {
  return FormatPercent(fraction);
}

std::string Dim3(const uint32_t (&v)[3]) {
  if (v[1] <= 1 && v[2] <= 1) return std::to_string(v[0]);
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

std::string TopNote(size_t shown, uint32_t total, const char* what) {
  if (total > shown) {
    return "top " + std::to_string(shown) + " of " + FormatCount(total) + " " + what;
  }
  return FormatCount(shown) + " " + what;
}

void Summary(const ReportModel& m, std::ostream& out) {
  const ReportSummary& s = m.summary;
  out << "gpuperf report: " << m.processes.size()
      << (m.processes.size() == 1 ? " process" : " processes") << ", " << m.devices.size()
      << (m.devices.size() == 1 ? " device" : " devices") << ", span " << Dur(s.span_ns) << '\n';
  for (const ProcessRow& p : m.processes) {
    out << "  pid " << p.pid;
    if (!p.command.empty()) out << "  " << Ellipsize(DisplayText(p.command), 80);
    if (!p.hostname.empty()) out << "  on " << DisplayText(p.hostname);
    out << "  wall " << Dur(p.wall_ns)
        << (p.complete    ? ""
            : p.recording ? "  (still being recorded)"
                          : "  (incomplete)")
        << '\n';
  }
  for (const DeviceRow& d : m.devices) {
    out << "  device " << d.device << " of pid " << d.pid << ": " << DisplayText(d.name) << " (sm_"
        << d.compute_major << d.compute_minor << ", " << d.sm_count << " SMs)\n";
  }
  out << "  GPU time " << Dur(s.gpu_ns()) << ": kernels " << Dur(s.kernel_ns) << " ("
      << Count(s.kernels) << "), memcpy " << Dur(s.memcpy_ns) << " (" << Count(s.memcpys) << ", "
      << FormatBytes(s.memcpy_bytes) << "), memset " << Dur(s.memset_ns) << " (" << Count(s.memsets)
      << ")\n";
  out << "  CUDA API: " << Count(s.api_calls) << " calls, " << Dur(s.api_ns) << ", "
      << Count(s.api_failures) << (s.api_failures == 1 ? " failure" : " failures") << '\n';
}

void Loss(const ReportModel& m, std::ostream& out) {
  bool any_loss = false;
  for (const LossRow& l : m.loss) any_loss |= l.severity == "data_loss";
  if (m.loss.empty() && m.read_warnings.empty()) return;
  out << '\n'
      << (any_loss ? "!! DATA LOSS: this trace is incomplete; numbers below undercount"
                   : "!! Warnings from the recording")
      << '\n';
  for (const LossRow& l : m.loss) {
    out << "  " << (l.severity == "data_loss" ? "LOST " : "WARN ");
    if (l.pid) out << "pid " << *l.pid << ": ";
    out << Count(l.value) << " " << DisplayText(l.description) << " [" << l.stat << "]\n";
  }
  for (const std::string& w : m.read_warnings) out << "  READ " << DisplayText(w) << '\n';
}

void Kernels(const ReportModel& m, const ReportRenderOptions& o, std::ostream& out) {
  WriteHeading(out, "Kernels", TopNote(m.kernels.size(), o.total_kernels, "kernel names"));
  if (m.kernels.empty()) {
    out << "  no kernels\n";
    return;
  }
  TextTable t;
  // In a narrow terminal (TextTable's drop order) Shared .. Grid go first, then Max .. Med.
  const std::pair<const char*, int> columns[] = {
      {"Time%", 0}, {"Total", 0}, {"Calls", 0}, {"Avg", 0},  {"Med", 1},    {"Min", 2},
      {"Max", 3},   {"Grid", 4},  {"Block", 5}, {"Regs", 6}, {"Shared", 7}, {"Occ", 0}};
  for (const auto& [header, drop_order] : columns) t.AddColumn(header, Align::kRight, drop_order);
  t.AddColumn("Name", Align::kLeft);
  for (const KernelRow& k : m.kernels) {
    std::string grid, block, regs, shared, occ;
    if (!k.configs.empty()) {
      const KernelConfig& c = k.configs.front();
      grid = Dim3(c.grid);
      block = Dim3(c.block);
      regs = std::to_string(c.registers_per_thread);
      shared = FormatBytes(c.static_shared_bytes + c.dynamic_shared_bytes);
      occ = c.occupancy.limiter == OccupancyLimiter::kNone ? "-" : Pct(c.occupancy.fraction);
      if (k.configs.size() > 1) occ += " +" + std::to_string(k.configs.size() - 1);
    }
    std::string name = o.full_names ? k.demangled : Ellipsize(k.display_name, o.name_width);
    t.AddRow({Pct(k.gpu_time_fraction), Dur(k.time.total_ns), Count(k.time.count),
              Dur(k.time.avg_ns()), m.medians_known ? Dur(k.time.median_ns) : "-",
              Dur(k.time.min_ns), Dur(k.time.max_ns), grid, block, regs, shared, occ, name});
  }
  t.Render(out);
  WriteNote(out,
            "Grid/Block/Regs/Shared: the most frequent launch configuration; Occ: its "
            "theoretical occupancy (\"+N\": N more configurations, see --format json)");
}

void Apis(const std::vector<ApiRow>& rows, const char* title, uint32_t total, std::ostream& out) {
  WriteHeading(out, title, TopNote(rows.size(), total, "functions"));
  if (rows.empty()) {
    out << "  no calls\n";
    return;
  }
  uint64_t all = 0;
  for (const ApiRow& a : rows) all += a.time.total_ns;
  TextTable t;
  for (const char* h : {"Time%", "Total", "Calls", "Avg", "Min", "Max", "Failed"}) t.AddColumn(h);
  t.AddColumn("Name", Align::kLeft);
  t.AddColumn("Errors", Align::kLeft);
  for (const ApiRow& a : rows) {
    std::string errors;
    for (const ApiError& e : a.errors) {
      if (!errors.empty()) errors += ", ";
      errors += e.name + " x" + Count(e.count);
    }
    t.AddRow({Pct(all ? static_cast<double>(a.time.total_ns) / all : 0), Dur(a.time.total_ns),
              Count(a.time.count), Dur(a.time.avg_ns()), Dur(a.time.min_ns), Dur(a.time.max_ns),
              a.failures ? Count(a.failures) : "-", a.name, errors});
  }
  t.Render(out);
}

void Memcpy(const ReportModel& m, std::ostream& out) {
  WriteHeading(out, "Memory copies by kind");
  if (m.memcpy.empty()) {
    out << "  no copies\n";
    return;
  }
  TextTable t;
  t.AddColumn("Kind", Align::kLeft);
  for (const char* h :
       {"Count", "Bytes", "Total", "Avg", "Min", "Max", "Min size", "Max size", "Throughput"}) {
    t.AddColumn(h);
  }
  for (const MemcpyRow& r : m.memcpy) {
    t.AddRow({std::string(EnumName(r.kind)), Count(r.time.count), FormatBytes(r.bytes),
              Dur(r.time.total_ns), Dur(r.time.avg_ns()), Dur(r.time.min_ns), Dur(r.time.max_ns),
              FormatBytes(r.min_bytes), FormatBytes(r.max_bytes),
              FormatBandwidth(r.bytes, r.time.total_ns)});
  }
  t.Render(out);
}

void Memset(const ReportModel& m, std::ostream& out) {
  WriteHeading(out, "Memsets by memory kind");
  if (m.memset.empty()) {
    out << "  no memsets\n";
    return;
  }
  TextTable t;
  t.AddColumn("Memory", Align::kLeft);
  for (const char* h : {"Count", "Bytes", "Total", "Avg", "Max", "Throughput"}) t.AddColumn(h);
  for (const MemsetRow& r : m.memset) {
    t.AddRow({std::string(EnumName(r.memory_kind)), Count(r.time.count), FormatBytes(r.bytes),
              Dur(r.time.total_ns), Dur(r.time.avg_ns()), Dur(r.time.max_ns),
              FormatBandwidth(r.bytes, r.time.total_ns)});
  }
  t.Render(out);
}

void Sync(const ReportModel& m, std::ostream& out) {
  WriteHeading(out, "Synchronization: where the CPU waited");
  if (m.sync.empty()) {
    out << "  no synchronization records\n";
    return;
  }
  TextTable t;
  for (const char* h : {"Total", "Count", "Avg", "Max", "Pid", "Tid"}) t.AddColumn(h);
  t.AddColumn("Kind", Align::kLeft);
  t.AddColumn("Stream");
  t.AddColumn("Longest wait at", Align::kLeft);
  for (const SyncRow& s : m.sync) {
    t.AddRow({Dur(s.time.total_ns), Count(s.time.count), Dur(s.time.avg_ns()), Dur(s.time.max_ns),
              std::to_string(s.pid), std::to_string(s.tid), std::string(EnumName(s.kind)),
              s.stream ? std::to_string(*s.stream) : "-", InnermostFrames(s.stack, 2)});
  }
  t.Render(out);
}

void Memory(const ReportModel& m, std::ostream& out) {
  WriteHeading(out, "Device memory");
  if (m.memory.empty()) {
    out << "  no memory records (record with memory tracking on to see allocations)\n";
    return;
  }
  TextTable t;
  for (const char* h : {"Pid", "Device", "Allocs", "Frees", "Allocated", "Peak", "Peak at",
                        "Live at exit", "Live allocs"}) {
    t.AddColumn(h);
  }
  for (const MemoryDeviceRow& r : m.memory) {
    t.AddRow({std::to_string(r.pid), std::to_string(r.device), Count(r.allocations), Count(r.frees),
              FormatBytes(r.bytes_allocated), FormatBytes(r.peak_bytes), Dur(r.peak_at_ns),
              FormatBytes(r.live_bytes_at_exit), Count(r.live_allocations_at_exit)});
  }
  t.Render(out);
  for (const MemoryDeviceRow& r : m.memory) {
    if (r.unmatched_frees) {
      out << "  pid " << r.pid << " device " << r.device << ": " << Count(r.unmatched_frees)
          << " frees of addresses allocated before recording started\n";
    }
  }
  if (m.leaks.empty()) return;
  out << "  Still allocated at exit (largest first):\n";
  for (const LeakRow& l : m.leaks) {
    char address[24];
    std::snprintf(address, sizeof(address), "0x%" PRIx64, l.address);
    out << "    " << FormatBytes(l.bytes) << " at " << address << " (pid " << l.pid << ", device "
        << l.device << ", " << EnumName(l.memory_kind) << ", allocated at " << Dur(l.at_ns)
        << (l.api.empty() ? "" : " by " + DisplayText(l.api)) << ")\n";
    for (const std::string& frame : l.stack) out << "        " << DisplayText(frame) << '\n';
  }
}

std::string CpuSummary(const IdleGap& g) {
  if (g.cpu.empty()) return "no CUDA API call: CPU-side work";
  std::string text;
  for (const CpuActivity& c : g.cpu) {
    if (!text.empty()) text += "; ";
    text += c.api + " on tid " + std::to_string(c.tid) + " for " + Dur(c.overlap_ns);
  }
  return text;
}

void Utilization(const ReportModel& m, std::ostream& out) {
  WriteHeading(out, "GPU utilization", "idle gaps >= " + Dur(m.gap_threshold_ns));
  if (m.utilization.empty()) {
    out << "  no GPU activity\n";
    return;
  }
  TextTable t;
  for (const char* h :
       {"Pid", "Device", "Busy", "Busy%", "Kernel time", "Span", "Idle gaps", "Idle in gaps"}) {
    t.AddColumn(h);
  }
  for (const UtilizationRow& u : m.utilization) {
    t.AddRow({std::to_string(u.pid), std::to_string(u.device), Dur(u.busy_ns),
              Pct(u.span_ns ? static_cast<double>(u.busy_ns) / u.span_ns : 0), Dur(u.kernel_ns),
              Dur(u.span_ns), Count(u.gaps), Dur(u.gap_ns)});
  }
  t.Render(out);
  for (const UtilizationRow& u : m.utilization) {
    if (u.longest_gaps.empty()) continue;
    out << "  Longest idle gaps of device " << u.device << " (pid " << u.pid << "):\n";
    TextTable g;
    g.AddColumn("At");
    g.AddColumn("Idle");
    g.AddColumn("What the CPU was doing", Align::kLeft);
    for (const IdleGap& gap : u.longest_gaps) {
      g.AddRow({Dur(gap.at_ns), Dur(gap.duration_ns), CpuSummary(gap)});
    }
    g.Render(out, "    ");
  }
}

void Nvtx(const ReportModel& m, std::ostream& out) {
  WriteHeading(out, "NVTX ranges");
  if (m.nvtx.empty()) {
    out << "  no NVTX ranges\n";
    return;
  }
  TextTable t;
  for (const char* h : {"Total", "Count", "Avg", "Min", "Max", "Kernels", "GPU time"}) {
    t.AddColumn(h);
  }
  t.AddColumn("Range", Align::kLeft);
  for (const NvtxRow& n : m.nvtx) {
    std::string name = n.domain.empty() ? n.name : n.domain + ":" + n.name;
    if (n.unterminated) name += " (" + Count(n.unterminated) + " never ended)";
    t.AddRow({Dur(n.time.total_ns), Count(n.time.count), Dur(n.time.avg_ns()), Dur(n.time.min_ns),
              Dur(n.time.max_ns), Count(n.kernels), Dur(n.gpu_time_ns), name});
  }
  t.Render(out);
}

void Overhead(const ReportModel& m, std::ostream& out) {
  const OverheadSummary& o = m.overhead;
  WriteHeading(out, "Profiler overhead");
  if (!o.cupti.empty()) {
    TextTable t;
    t.AddColumn("CUPTI overhead", Align::kLeft);
    for (const char* h : {"Count", "Total", "Avg", "Max"}) t.AddColumn(h);
    for (const OverheadRow& r : o.cupti) {
      t.AddRow({std::string(EnumName(r.kind)), Count(r.time.count), Dur(r.time.total_ns),
                Dur(r.time.avg_ns()), Dur(r.time.max_ns)});
    }
    t.Render(out);
  }
  out << "  gpuperf callbacks: " << Count(o.callbacks) << " calls, " << Dur(o.callback_ns);
  if (o.callbacks) out << " (" << Dur(o.callback_ns / o.callbacks) << " per call";
  if (o.callbacks && o.unwind_ns) out << ", of which unwinding " << Dur(o.unwind_ns);
  if (o.callbacks) out << ")";
  out << '\n';
  const uint64_t table_fallbacks = o.table_fallback_no_table + o.table_fallback_rule;
  const bool tables = o.table_stacks || table_fallbacks;
  if (o.fp_stacks_verified || o.fp_stacks_rejected) {
    out << "  launch stacks: " << Count(o.unique_stacks) << " distinct; frame-pointer walk "
        << "confirmed by libunwind for " << Count(o.fp_stacks_verified) << ", refused for "
        << Count(o.fp_stacks_rejected)
        << (tables ? " (those unwound another way)\n" : " (those unwound with libunwind)\n");
  }
  if (tables) {
    out << "  launch stacks from .eh_frame tables: " << Count(o.table_stacks) << " of "
        << Count(o.stacks_unwound) << "; " << Count(table_fallbacks) << " fell back to libunwind ("
        << Count(o.table_fallback_no_table) << " for want of a table, "
        << Count(o.table_fallback_rule) << " at a rule the tables do not hold)";
    if (o.unwind_verified) out << "; " << Count(o.unwind_verified) << " checked by libunwind";
    out << '\n';
  }
  if (o.python_codes || o.python_no_thread_state) {
    out << "  Python frames: " << Count(o.python_codes) << " code objects copied; "
        << Count(o.python_no_thread_state)
        << " launches from threads without Python (native frames only)\n";
  }
  out << "  background threads: translating " << Dur(o.translate_ns) << ", compressing "
      << Dur(o.compress_ns) << '\n';
  if (o.memory_peak_bytes) {
    out << "  recorder memory: peak " << FormatBytes(o.memory_peak_bytes) << " per process";
    if (o.memory_budget_grown) {
      out << " (budget doubled " << Count(o.memory_budget_grown) << "x past its soft size)";
    }
    out << '\n';
  }
  out << "  Total profiling overhead: " << Dur(o.in_app_ns()) << " ("
      << Pct(o.wall_ns ? static_cast<double>(o.in_app_ns()) / o.wall_ns : 0)
      << " of total execution time " << Dur(o.wall_ns) << ")\n";
}

}  // namespace

Status ExportReportText(const ReportModel& model, const ReportRenderOptions& options,
                        std::ostream& out) {
  if (options.Wants("summary")) Summary(model, out);
  Loss(model, out);
  // The findings come first: they say where to look in the tables below.
  if (model.insights_run && options.Wants("insights")) InsightsText(model, out);
  if (options.Wants("kernels")) Kernels(model, options, out);
  if (options.Wants("runtime_api")) {
    Apis(model.runtime_api, "CUDA runtime API", options.total_runtime_api, out);
  }
  if (options.Wants("driver_api")) {
    Apis(model.driver_api, "CUDA driver API", options.total_driver_api, out);
  }
  if (options.Wants("memcpy")) Memcpy(model, out);
  if (options.Wants("memset")) Memset(model, out);
  if (options.Wants("sync")) Sync(model, out);
  if (options.Wants("memory")) Memory(model, out);
  if (options.Wants("utilization")) Utilization(model, out);
  if (options.Wants("nvtx")) Nvtx(model, out);
  if (options.Wants("cpu") && !model.cpu.empty()) WriteCpuReportText(model.cpu, out);
  if (options.Wants("overhead")) Overhead(model, out);
  if (options.Wants("hardware")) WriteHardwareText(model, out);
  if (options.Wants("ranks")) WriteRanksText(model, out);
  if (options.Wants("energy")) WriteEnergyText(model, options, out);
  if (!out) return Error(StatusCode::kIoError, "cannot write the report");
  return Status::Ok();
}

}  // namespace gpuperf
