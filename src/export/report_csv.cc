// CSV form of the report: one table per section, raw numbers (ns, bytes). With one
// section selected the output is a single plain CSV table; with several, each table
// starts with a "# <section>" line and tables are separated by a blank line.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "base/text_escape.h"
#include "export/report_export.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

// A cell in the display form of base/text_escape.h (one line, nothing a terminal acts on),
// quoted when it holds a comma or a quote.
std::string Quote(std::string_view bytes) {
  std::string storage;
  const std::string_view field = EscapedView(bytes, TextForm::kDisplay, storage);
  if (field.find_first_of(",\"") == std::string_view::npos) return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

class CsvWriter {
 public:
  CsvWriter(std::ostream& out, bool headed) : out_(out), headed_(headed) {}

  void Begin(std::string_view section, std::initializer_list<std::string_view> columns) {
    if (headed_) {
      if (tables_ > 0) out_ << '\n';
      out_ << "# " << section << '\n';
    }
    ++tables_;
    bool first = true;
    for (std::string_view c : columns) {
      out_ << (first ? "" : ",") << c;
      first = false;
    }
    out_ << '\n';
  }
  void Row(const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out_ << (i ? "," : "") << Quote(cells[i]);
    out_ << '\n';
  }

 private:
  std::ostream& out_;
  bool headed_;
  int tables_ = 0;
};

std::string N(uint64_t v) {
  return std::to_string(v);
}
std::string F(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6f", v);
  return buf;
}
std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

void ApiTable(CsvWriter& w, const char* section, const std::vector<ApiRow>& rows) {
  w.Begin(section, {"name", "domain", "calls", "total_ns", "avg_ns", "min_ns", "max_ns", "failures",
                    "errors"});
  for (const ApiRow& a : rows) {
    std::vector<std::string> errors;
    for (const ApiError& e : a.errors) errors.push_back(e.name + "=" + N(e.count));
    w.Row({a.name, std::string(EnumName(a.domain)), N(a.time.count), N(a.time.total_ns),
           N(a.time.avg_ns()), N(a.time.min_ns), N(a.time.max_ns), N(a.failures),
           Join(errors, ";")});
  }
}

}  // namespace

Status ExportReportCsv(const ReportModel& m, const ReportRenderOptions& o, std::ostream& out) {
  // The CPU section is three tables: they keep their headings.
  CsvWriter w(out, o.sections.size() != 1 || o.sections[0] == "cpu");
  if (o.Wants("summary")) {
    const ReportSummary& s = m.summary;
    w.Begin("summary", {"metric", "value"});
    for (auto [key, value] : std::initializer_list<std::pair<const char*, uint64_t>>{
             {"span_ns", s.span_ns},
             {"gpu_ns", s.gpu_ns()},
             {"kernels", s.kernels},
             {"kernel_ns", s.kernel_ns},
             {"memcpys", s.memcpys},
             {"memcpy_ns", s.memcpy_ns},
             {"memcpy_bytes", s.memcpy_bytes},
             {"memsets", s.memsets},
             {"memset_ns", s.memset_ns},
             {"api_calls", s.api_calls},
             {"api_ns", s.api_ns},
             {"api_failures", s.api_failures}}) {
      w.Row({key, N(value)});
    }
  }
  if (o.Wants("loss")) {
    w.Begin("loss", {"pid", "stat", "severity", "value", "description"});
    for (const LossRow& l : m.loss) {
      w.Row({l.pid ? N(*l.pid) : "", l.stat, l.severity, N(l.value), l.description});
    }
  }
  if (m.insights_run && o.Wants("insights")) {
    w.Begin("insights", {"rank", "rule", "pid", "device", "at_stake_kind", "at_stake_ns",
                         "at_stake_bytes", "finding", "stack", "suggestion"});
    for (size_t i = 0; i < m.insights.size(); ++i) {
      const Insight& in = m.insights[i];
      w.Row({N(i + 1), in.rule, N(in.pid), in.device ? N(*in.device) : "", StakeKindName(in.stake),
             N(in.at_stake_ns), N(in.at_stake_bytes), in.finding, Join(in.stack, ";"),
             in.suggestion});
    }
  }
  if (o.Wants("kernels")) {
    w.Begin("kernels", {"name", "short_name", "calls", "total_ns", "avg_ns", "median_ns", "min_ns",
                        "max_ns", "gpu_time_fraction", "grid", "block", "registers_per_thread",
                        "shared_bytes", "occupancy", "configs"});
    for (const KernelRow& k : m.kernels) {
      std::string grid, block, regs, shared, occ;
      if (!k.configs.empty()) {
        const KernelConfig& c = k.configs.front();
        grid = N(c.grid[0]) + "x" + N(c.grid[1]) + "x" + N(c.grid[2]);
        block = N(c.block[0]) + "x" + N(c.block[1]) + "x" + N(c.block[2]);
        regs = N(c.registers_per_thread);
        shared = N(c.static_shared_bytes + c.dynamic_shared_bytes);
        if (c.occupancy.limiter != OccupancyLimiter::kNone) occ = F(c.occupancy.fraction);
      }
      w.Row({k.name, k.display_name, N(k.time.count), N(k.time.total_ns), N(k.time.avg_ns()),
             N(k.time.median_ns), N(k.time.min_ns), N(k.time.max_ns), F(k.gpu_time_fraction), grid,
             block, regs, shared, occ, N(k.configs.size())});
    }
  }
  if (o.Wants("runtime_api")) ApiTable(w, "runtime_api", m.runtime_api);
  if (o.Wants("driver_api")) ApiTable(w, "driver_api", m.driver_api);
  if (o.Wants("memcpy")) {
    w.Begin("memcpy", {"kind", "count", "bytes", "total_ns", "avg_ns", "min_ns", "max_ns",
                       "min_bytes", "max_bytes", "bandwidth_gbps"});
    for (const MemcpyRow& r : m.memcpy) {
      w.Row({std::string(EnumName(r.kind)), N(r.time.count), N(r.bytes), N(r.time.total_ns),
             N(r.time.avg_ns()), N(r.time.min_ns), N(r.time.max_ns), N(r.min_bytes), N(r.max_bytes),
             F(r.time.total_ns ? static_cast<double>(r.bytes) / r.time.total_ns : 0)});
    }
  }
  if (o.Wants("memset")) {
    w.Begin("memset", {"memory_kind", "count", "bytes", "total_ns", "avg_ns", "min_ns", "max_ns"});
    for (const MemsetRow& r : m.memset) {
      w.Row({std::string(EnumName(r.memory_kind)), N(r.time.count), N(r.bytes), N(r.time.total_ns),
             N(r.time.avg_ns()), N(r.time.min_ns), N(r.time.max_ns)});
    }
  }
  if (o.Wants("sync")) {
    w.Begin("sync",
            {"pid", "tid", "kind", "stream", "count", "total_ns", "avg_ns", "max_ns", "stack"});
    for (const SyncRow& s : m.sync) {
      w.Row({N(s.pid), N(s.tid), std::string(EnumName(s.kind)), s.stream ? N(*s.stream) : "",
             N(s.time.count), N(s.time.total_ns), N(s.time.avg_ns()), N(s.time.max_ns),
             Join(s.stack, " <- ")});
    }
  }
  if (o.Wants("memory")) {
    w.Begin("memory", {"pid", "device", "allocations", "frees", "bytes_allocated", "bytes_freed",
                       "peak_bytes", "peak_at_ns", "live_bytes_at_exit", "live_allocations_at_exit",
                       "unmatched_frees"});
    for (const MemoryDeviceRow& r : m.memory) {
      w.Row({N(r.pid), N(r.device), N(r.allocations), N(r.frees), N(r.bytes_allocated),
             N(r.bytes_freed), N(r.peak_bytes), N(r.peak_at_ns), N(r.live_bytes_at_exit),
             N(r.live_allocations_at_exit), N(r.unmatched_frees)});
    }
    w.Begin("leaks", {"pid", "device", "address", "bytes", "memory_kind", "at_ns", "api", "stack"});
    for (const LeakRow& l : m.leaks) {
      char address[24];
      std::snprintf(address, sizeof(address), "0x%" PRIx64, l.address);
      w.Row({N(l.pid), N(l.device), address, N(l.bytes), std::string(EnumName(l.memory_kind)),
             N(l.at_ns), l.api, Join(l.stack, " <- ")});
    }
  }
  if (o.Wants("utilization")) {
    w.Begin("utilization", {"pid", "device", "span_ns", "busy_ns", "busy_fraction", "kernel_ns",
                            "idle_gaps", "idle_gap_ns"});
    for (const UtilizationRow& u : m.utilization) {
      w.Row({N(u.pid), N(u.device), N(u.span_ns), N(u.busy_ns),
             F(u.span_ns ? static_cast<double>(u.busy_ns) / u.span_ns : 0), N(u.kernel_ns),
             N(u.gaps), N(u.gap_ns)});
    }
    w.Begin("idle_gaps", {"pid", "device", "at_ns", "duration_ns", "cpu"});
    for (const UtilizationRow& u : m.utilization) {
      for (const IdleGap& g : u.longest_gaps) {
        std::vector<std::string> cpu;
        for (const CpuActivity& c : g.cpu) {
          cpu.push_back(c.api + "@" + N(c.tid) + "=" + N(c.overlap_ns));
        }
        w.Row({N(u.pid), N(u.device), N(g.at_ns), N(g.duration_ns), Join(cpu, ";")});
      }
    }
  }
  if (o.Wants("nvtx")) {
    w.Begin("nvtx", {"domain", "name", "count", "total_ns", "avg_ns", "min_ns", "max_ns",
                     "unterminated", "kernels", "gpu_time_ns"});
    for (const NvtxRow& n : m.nvtx) {
      w.Row({n.domain, n.name, N(n.time.count), N(n.time.total_ns), N(n.time.avg_ns()),
             N(n.time.min_ns), N(n.time.max_ns), N(n.unterminated), N(n.kernels),
             N(n.gpu_time_ns)});
    }
  }
  if (o.Wants("cpu") && !m.cpu.empty()) {
    w.Begin("cpu_threads", {"pid", "tid", "name", "on_cpu_ns", "off_cpu_ns", "gpu_wait_ns",
                            "preempted_ns", "top_function"});
    for (const CpuThreadRow& t : m.cpu.threads) {
      w.Row({N(t.pid), N(t.tid), t.name, N(t.on_cpu_ns), N(t.off_cpu_ns), N(t.gpu_wait_ns),
             N(t.preempted_ns), t.top_function});
    }
    w.Begin("cpu_functions", {"function", "self_ns", "on_cpu_ns", "off_cpu_ns"});
    for (const CpuFunctionRow& f : m.cpu.functions) {
      w.Row({f.function, N(f.self_ns), N(f.on_cpu_ns), N(f.off_cpu_ns)});
    }
    w.Begin("cpu_blocked", {"pid", "tid", "reason", "off_cpu_ns", "intervals", "stack"});
    for (const CpuBlockRow& b : m.cpu.blocked) {
      w.Row({N(b.pid), N(b.tid), b.reason, N(b.off_cpu_ns), N(b.intervals), Join(b.stack, ";")});
    }
  }
  if (o.Wants("overhead")) {
    const OverheadSummary& s = m.overhead;
    w.Begin("overhead", {"source", "count", "total_ns"});
    for (const OverheadRow& r : s.cupti) {
      w.Row({"cupti_" + std::string(EnumName(r.kind)), N(r.time.count), N(r.time.total_ns)});
    }
    w.Row({"gpuperf_callbacks", N(s.callbacks), N(s.callback_ns)});
    w.Row({"gpuperf_unwind", "", N(s.unwind_ns)});
    w.Row({"gpuperf_translate", "", N(s.translate_ns)});
    w.Row({"gpuperf_compress", "", N(s.compress_ns)});
    w.Row({"wall", "", N(s.wall_ns)});
  }
  // Only traces with hardware data have these tables.
  if (o.Wants("hardware") && !m.hardware.empty()) {
    w.Begin("hardware", {"kind", "name", "short_name", "ranges", "passes", "serialized", "bound",
                         "metric", "value"});
    for (const HardwareRow& r : m.hardware) {
      for (const MetricValue& v : r.metrics) {
        w.Row({std::string(EnumName(r.kind)), r.name, r.display_name, N(r.ranges), N(r.passes),
               r.serialized ? "1" : "0", r.verdict.bound, v.metric, F(v.value)});
      }
    }
  }
  if (o.Wants("hardware") && !m.pc_sampling.empty()) {
    w.Begin("pc_lines", {"kernel", "short_name", "kernel_samples", "file", "line", "pc_offset",
                         "samples", "stalls"});
    for (const PcKernelRow& k : m.pc_sampling) {
      for (const HotLineRow& l : k.lines) {
        std::vector<std::string> stalls;
        for (const auto& [name, n] : l.stalls) stalls.push_back(name + "=" + N(n));
        w.Row({k.name, k.display_name, N(k.samples), l.file, N(l.line), N(l.pc_offset),
               N(l.samples), Join(stalls, ";")});
      }
    }
  }
  // Only where there is something to say (several ranks, NCCL kernels, power readings).
  if (o.Wants("ranks") && !m.ranks.empty()) {
    w.Begin("ranks",
            {"pid", "rank", "hostname", "compute_ns", "comm_ns", "overlap_ns", "exposed_comm_ns",
             "collectives", "last_arrivals", "delay_median_ns", "delay_total_ns", "delay_max_ns"});
    for (const RankRow& r : m.ranks.ranks) {
      w.Row({N(r.pid), std::to_string(r.rank), r.hostname, N(r.compute_ns), N(r.comm_ns),
             N(r.overlap_ns), N(r.exposed_comm_ns()), N(r.collectives), N(r.last_arrivals),
             N(r.delay_median_ns), N(r.delay_total_ns), N(r.delay_max_ns)});
    }
  }
  if (o.Wants("energy") && !m.energy.empty()) {
    w.Begin("energy", {"name", "calls", "gpu_ns", "joules", "share"});
    for (const EnergyKernelRow& k : m.energy.kernels) {
      w.Row({k.name, N(k.calls), N(k.gpu_ns), F(k.joules), F(k.share)});
    }
  }
  if (!out) return Error(StatusCode::kIoError, "cannot write the report");
  return Status::Ok();
}

}  // namespace gpuperf
