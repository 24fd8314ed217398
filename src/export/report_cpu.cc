#include "export/report_cpu.h"

#include <string>

#include "base/text_table.h"
#include "base/units.h"

namespace gpuperf {
namespace {

using Align = TextTable::Align;

std::string Share(uint64_t part, uint64_t whole) {
  return whole ? FormatPercent(static_cast<double>(part) / whole) : "-";
}

}  // namespace

void WriteCpuReportText(const CpuReport& c, std::ostream& out) {
  out << "\nCPU time: where threads ran and where they blocked\n";
  out << "  on CPU " << FormatDuration(c.on_cpu_ns) << " (" << FormatCount(c.samples)
      << " samples), off CPU " << FormatDuration(c.off_cpu_ns) << " (" << FormatCount(c.intervals)
      << " intervals); waiting for the GPU: " << FormatDuration(c.gpu_wait_ns) << " blocked, "
      << FormatDuration(c.gpu_spin_ns) << " spinning\n";
  TextTable threads;
  for (const char* h : {"Pid", "Tid"}) threads.AddColumn(h);
  threads.AddColumn("Thread", Align::kLeft);
  for (const char* h : {"On CPU", "Off CPU", "GPU wait", "Preempted"}) threads.AddColumn(h);
  threads.AddColumn("Busiest function", Align::kLeft);
  for (const CpuThreadRow& t : c.threads) {
    threads.AddRow({std::to_string(t.pid), std::to_string(t.tid), t.name,
                    FormatDuration(t.on_cpu_ns), FormatDuration(t.off_cpu_ns),
                    FormatDuration(t.gpu_wait_ns), FormatDuration(t.preempted_ns), t.top_function});
  }
  threads.Render(out);
  if (!c.functions.empty()) {
    out << "  functions by on-CPU time (self: innermost on the stack; total: anywhere on it)\n";
    TextTable functions;
    for (const char* h : {"Self", "Self %", "Total", "Total %", "Off CPU"}) functions.AddColumn(h);
    functions.AddColumn("Function", Align::kLeft);
    for (const CpuFunctionRow& f : c.functions) {
      functions.AddRow({FormatDuration(f.self_ns), Share(f.self_ns, c.on_cpu_ns),
                        FormatDuration(f.on_cpu_ns), Share(f.on_cpu_ns, c.on_cpu_ns),
                        FormatDuration(f.off_cpu_ns), f.function});
    }
    functions.Render(out);
  }
  if (!c.blocked.empty()) {
    out << "  where threads blocked\n";
    TextTable blocked;
    for (const char* h : {"Off CPU", "Share", "Intervals", "Pid", "Tid"}) blocked.AddColumn(h);
    blocked.AddColumn("Reason", Align::kLeft);
    blocked.AddColumn("Stack (innermost first)", Align::kLeft);
    for (const CpuBlockRow& b : c.blocked) {
      blocked.AddRow({FormatDuration(b.off_cpu_ns), Share(b.off_cpu_ns, c.off_cpu_ns),
                      FormatCount(b.intervals), std::to_string(b.pid), std::to_string(b.tid),
                      b.reason, InnermostFrames(b.stack, 3)});
    }
    blocked.Render(out);
  }
}

nlohmann::ordered_json CpuReportToJson(const CpuReport& c) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["on_cpu_ns"] = c.on_cpu_ns;
  j["samples"] = c.samples;
  j["off_cpu_ns"] = c.off_cpu_ns;
  j["intervals"] = c.intervals;
  j["gpu_wait_ns"] = c.gpu_wait_ns;
  j["gpu_spin_ns"] = c.gpu_spin_ns;
  Json threads = Json::array();
  for (const CpuThreadRow& t : c.threads) {
    threads.push_back({{"pid", t.pid},
                       {"tid", t.tid},
                       {"name", t.name},
                       {"on_cpu_ns", t.on_cpu_ns},
                       {"off_cpu_ns", t.off_cpu_ns},
                       {"gpu_wait_ns", t.gpu_wait_ns},
                       {"preempted_ns", t.preempted_ns},
                       {"top_function", t.top_function}});
  }
  j["threads"] = std::move(threads);
  Json functions = Json::array();
  for (const CpuFunctionRow& f : c.functions) {
    functions.push_back({{"function", f.function},
                         {"self_ns", f.self_ns},
                         {"on_cpu_ns", f.on_cpu_ns},
                         {"off_cpu_ns", f.off_cpu_ns}});
  }
  j["functions"] = std::move(functions);
  Json blocked = Json::array();
  for (const CpuBlockRow& b : c.blocked) {
    blocked.push_back({{"pid", b.pid},
                       {"tid", b.tid},
                       {"reason", b.reason},
                       {"off_cpu_ns", b.off_cpu_ns},
                       {"intervals", b.intervals},
                       {"stack", b.stack}});
  }
  j["blocked"] = std::move(blocked);
  return j;
}

}  // namespace gpuperf
