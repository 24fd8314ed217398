#include "live/top_screen.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/text_table.h"
#include "base/units.h"
#include "format/live_text.h"

namespace gpuperf::live {
namespace {

// 950, 12.3k, 4.56M: rates in a narrow column.
std::string Compact(double value) {
  char text[32];
  if (value < 999.5) {
    std::snprintf(text, sizeof(text), value > 0 && value < 9.95 ? "%.1f" : "%.0f", value);
  } else if (value < 999.5e3) {
    std::snprintf(text, sizeof(text), "%.1fk", value / 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%.2fM", value / 1e6);
  }
  return text;
}

// In the display form of base/text_escape.h (commands, names and paths come from other
// users' processes: none may steer the terminal), cut to the screen's width; 0: no limit.
std::string Fit(const std::string& text, size_t width) {
  return Ellipsize(text, width);
}

struct ProcessRow {
  const ProcessSnapshot* process;
  ProcessRates rates;
  std::vector<DeviceRates> devices;
  double active = 0, launches = 0;
  uint64_t memory = 0;
};

double SortValue(const ProcessRow& row, TopSort sort) {
  switch (sort) {
    case TopSort::kActive:
      return row.active;
    case TopSort::kLaunches:
      return row.launches;
    case TopSort::kMemory:
      return static_cast<double>(row.memory);
    case TopSort::kApi:
      return row.rates.api_calls_per_s;
    case TopSort::kPid:
      return -static_cast<double>(row.process->pid);
  }
  return 0;
}

std::vector<ProcessRow> SortedRows(const LiveModel& model, TopSort sort) {
  std::vector<ProcessRow> rows;
  for (const ProcessSnapshot& process : model.scan.processes) {
    ProcessRow row{&process, ProcessRatesOf(process), {}};
    const uint32_t devices = process.has_counters ? process.counters.device_count : 0;
    for (uint32_t slot = 0; slot < devices && slot < kMaxDevices; ++slot) {
      row.devices.push_back(DeviceRatesOf(process, slot));
      row.active += row.devices.back().active;
      row.launches += row.devices.back().kernels_per_s;
      row.memory += process.counters.devices[slot].memory_current;
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [sort](const ProcessRow& a, const ProcessRow& b) {
    return SortValue(a, sort) > SortValue(b, sort);
  });
  return rows;
}

void AppendTable(const TextTable& table, size_t width, std::vector<std::string>& lines) {
  std::ostringstream text;
  TextTable copy = table;
  copy.set_max_width(width);
  copy.Render(text, " ");
  std::string line;
  std::istringstream in(text.str());
  while (std::getline(in, line)) lines.push_back(line);
}

void GpuTable(const LiveModel& model, size_t width, std::vector<std::string>& lines) {
  if (!model.nvml_available) {
    lines.push_back(Fit(" devices: no NVML readings (" + model.nvml_why + ")", width));
    return;
  }
  TextTable table;
  for (const char* header :
       {"GPU", "NAME", "UTIL", "MEM USED", "MEM TOTAL", "SM MHz", "MEM MHz", "POWER", "TEMP"}) {
    table.AddColumn(header, std::string_view(header) == "NAME" ? TextTable::Align::kLeft
                                                               : TextTable::Align::kRight);
  }
  auto reading = [](auto value, const char* suffix) {
    return value < 0 ? std::string("-") : std::to_string(static_cast<long long>(value)) + suffix;
  };
  for (const NvmlDevice& gpu : model.gpus) {
    table.AddRow({std::to_string(gpu.index), gpu.name, reading(gpu.gpu_util_percent, "%"),
                  gpu.memory_used_bytes < 0 ? "-" : FormatBytes(gpu.memory_used_bytes),
                  gpu.memory_total_bytes < 0 ? "-" : FormatBytes(gpu.memory_total_bytes),
                  reading(gpu.sm_clock_mhz, ""), reading(gpu.memory_clock_mhz, ""),
                  reading(gpu.power_watts, " W"), reading(gpu.temperature_c, " C")});
  }
  AppendTable(table, width, lines);
}

void ProcessTable(const LiveModel& model, const std::vector<ProcessRow>& rows, size_t width,
                  std::vector<std::string>& lines) {
  TextTable table;
  using A = TextTable::Align;
  // Narrow terminals lose columns, highest drop order first; the rest always stay.
  const std::pair<const char*, int> columns[] = {
      {"PID", 0},      {"RANK", 9},   {"GPU", 0},   {"ACTIVE", 0}, {"KERNEL", 6},
      {"LAUNCH/s", 0}, {"COPY/s", 5}, {"API/s", 3}, {"FAIL/s", 4}, {"SYNC", 7},
      {"MEMORY", 0},   {"PEAK", 8},   {"DROPS", 2}, {"STATE", 1},  {"COMMAND", 0}};
  for (const auto& [header, drop] : columns) {
    table.AddColumn(header, std::string_view(header) == "COMMAND" ? A::kLeft : A::kRight, drop);
  }
  for (const ProcessRow& row : rows) {
    const ProcessSnapshot& p = *row.process;
    const std::string rank =
        p.has_identity && p.identity.rank >= 0 ? std::to_string(p.identity.rank) : "-";
    std::vector<std::string> process_cells = {Compact(row.rates.api_calls_per_s),
                                              Compact(row.rates.api_failures_per_s),
                                              FormatPercent(row.rates.sync)};
    const std::string drops = p.has_stats ? FormatCount(DroppedRecords(p)) : "?";
    const std::string command = p.has_identity ? TextOf(p.identity.command) : "?";
    if (row.devices.empty()) {
      table.AddRow({std::to_string(p.pid), rank, "-", "-", "-", "-", "-", process_cells[0],
                    process_cells[1], process_cells[2], "-", "-", drops, PageStateName(p.state),
                    command});
    }
    for (size_t slot = 0; slot < row.devices.size(); ++slot) {
      const DeviceCounters& d = p.counters.devices[slot];
      const DeviceRates& r = row.devices[slot];
      const bool first = slot == 0;
      // A process on several devices: one row each, the process's own columns once.
      table.AddRow(
          {first ? std::to_string(p.pid) : "", first ? rank : "",
           std::to_string(GpuIndexOf(model, d)), FormatPercent(r.active), FormatPercent(r.kernel),
           Compact(r.kernels_per_s), FormatBytes(static_cast<uint64_t>(r.copy_bytes_per_s)) + "/s",
           first ? process_cells[0] : "", first ? process_cells[1] : "",
           first ? process_cells[2] : "", FormatBytes(d.memory_current), FormatBytes(d.memory_peak),
           first ? drops : "", first ? PageStateName(p.state) : "", first ? command : ""});
    }
  }
  if (rows.empty()) {
    lines.push_back(" no recorded process is running (gpuperf record -- CMD starts one)");
    return;
  }
  AppendTable(table, width, lines);
}

void KernelTable(const LiveModel& model, size_t width, size_t max_rows,
                 std::vector<std::string>& lines) {
  struct Row {
    const ProcessSnapshot* process;
    const KernelEntry* kernel;
    uint64_t process_kernel_ns;
  };
  std::vector<Row> rows;
  for (const ProcessSnapshot& p : model.scan.processes) {
    if (!p.has_kernels) continue;
    uint64_t total = p.kernels.other_ns;
    for (uint32_t i = 0; i < p.kernels.count && i < kMaxKernels; ++i) {
      total += p.kernels.entries[i].ns;
    }
    for (uint32_t i = 0; i < p.kernels.count && i < kMaxKernels; ++i) {
      rows.push_back({&p, &p.kernels.entries[i], total});
    }
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.kernel->ns > b.kernel->ns; });
  if (rows.size() > max_rows) rows.resize(max_rows);
  if (rows.empty()) return;
  lines.push_back("");
  lines.push_back(" TOP KERNELS (GPU time since recording began)");
  TextTable table;
  using A = TextTable::Align;
  for (const char* header : {"PID", "DEVICE", "TIME", "SHARE", "LAUNCHES", "AVERAGE"}) {
    table.AddColumn(header);
  }
  table.AddColumn("KERNEL", A::kLeft);
  for (const Row& row : rows) {
    const KernelEntry& k = *row.kernel;
    table.AddRow(
        {std::to_string(row.process->pid), std::to_string(k.device_id), FormatDuration(k.ns),
         FormatPercent(row.process_kernel_ns ? double(k.ns) / row.process_kernel_ns : 0),
         FormatCount(k.count), FormatDuration(k.count ? k.ns / k.count : 0), TextOf(k.name)});
  }
  AppendTable(table, width, lines);
}

void ApiTable(const LiveModel& model, size_t width, size_t max_rows,
              std::vector<std::string>& lines) {
  struct Row {
    uint32_t pid;
    const ApiEntry* api;
  };
  std::vector<Row> rows;
  for (const ProcessSnapshot& p : model.scan.processes) {
    for (uint32_t i = 0; p.has_apis && i < p.apis.count && i < kMaxApis; ++i) {
      rows.push_back({p.pid, &p.apis.entries[i]});
    }
  }
  // Failures first: a failing call is what someone looking at this wants to see.
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if ((a.api->failures > 0) != (b.api->failures > 0)) return a.api->failures > 0;
    return a.api->calls > b.api->calls;
  });
  if (rows.size() > max_rows) rows.resize(max_rows);
  if (rows.empty() || max_rows == 0) return;
  lines.push_back("");
  lines.push_back(" CUDA API (since recording began)");
  TextTable table;
  for (const char* header : {"PID", "CALLS", "FAILED", "TIME"}) table.AddColumn(header);
  table.AddColumn("API", TextTable::Align::kLeft);
  for (const Row& row : rows) {
    table.AddRow({std::to_string(row.pid), FormatCount(row.api->calls),
                  FormatCount(row.api->failures), FormatDuration(row.api->ns),
                  TextOf(row.api->name)});
  }
  AppendTable(table, width, lines);
}

}  // namespace

const char* TopSortName(TopSort sort) {
  switch (sort) {
    case TopSort::kActive:
      return "GPU active";
    case TopSort::kLaunches:
      return "launches";
    case TopSort::kMemory:
      return "memory";
    case TopSort::kApi:
      return "API calls";
    case TopSort::kPid:
      return "pid";
  }
  return "?";
}

std::vector<std::string> RenderTopScreen(const LiveModel& model, const TopScreenOptions& options) {
  std::vector<std::string> lines;
  const size_t width = options.width == 0 ? 0 : std::max<size_t>(options.width, 40);
  const size_t n = model.scan.processes.size();
  std::string title = "gpuperf top - " + model.host + " - " + std::to_string(n) +
                      (n == 1 ? " process" : " processes") + " - sorted by " +
                      TopSortName(options.sort) + " - rates over the last " +
                      std::to_string(kRateWindowSeconds) + " s";
  if (options.interactive) title += " - keys: g k m a p (or s) sort, q quit";
  lines.push_back(Fit(title, width));
  lines.push_back("");
  GpuTable(model, width, lines);
  lines.push_back("");
  ProcessTable(model, SortedRows(model, options.sort), width, lines);
  if (model.scan.stale > 0) {
    lines.push_back(" " + std::to_string(model.scan.stale) +
                    " page(s) of ended processes skipped (" + std::to_string(model.scan.removed) +
                    " removed)");
  }
  for (const std::string& skipped : model.scan.skipped) {
    lines.push_back(Fit(" skipped " + skipped, width));
  }
  // What is left of the screen goes to kernels (two thirds) and APIs.
  size_t kernel_rows = 20, api_rows = 10;
  if (options.height > 0) {
    const size_t used = lines.size() + 8;  // titles, headers and rules of both tables
    const size_t left = options.height > used ? options.height - used : 0;
    kernel_rows = std::max<size_t>(left * 2 / 3, left > 0 ? 1 : 0);
    api_rows = left - kernel_rows;
  }
  KernelTable(model, width, kernel_rows, lines);
  ApiTable(model, width, api_rows, lines);
  if (options.height > 0 && lines.size() > options.height) lines.resize(options.height);
  // A line the terminal would wrap moves every line below it: none is wider than the screen.
  // Every line is escaped here, whatever built it.
  for (std::string& line : lines) line = Fit(line, width);
  return lines;
}

}  // namespace gpuperf::live
