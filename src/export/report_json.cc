#include "export/report_json.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "base/json_output.h"
#include "export/report_cpu.h"
#include "export/report_hardware.h"
#include "export/report_insights.h"
#include "export/report_ranks.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

using Json = nlohmann::ordered_json;

// Ratios rounded to 6 decimals: stable text, and more precision than any reader needs.
double Ratio(double value) {
  return std::round(value * 1e6) / 1e6;
}

void PutStats(Json& j, const DurationStats& s, bool median) {
  j["count"] = s.count;
  j["total_ns"] = s.total_ns;
  j["avg_ns"] = s.avg_ns();
  if (median) j["median_ns"] = s.median_ns;
  j["min_ns"] = s.min_ns;
  j["max_ns"] = s.max_ns;
}

Json Summary(const ReportModel& m) {
  const ReportSummary& s = m.summary;
  Json j;
  j["origin_ns"] = s.origin_ns;
  j["span_ns"] = s.span_ns;
  j["gpu_ns"] = s.gpu_ns();
  j["kernels"] = s.kernels;
  j["kernel_ns"] = s.kernel_ns;
  j["memcpys"] = s.memcpys;
  j["memcpy_ns"] = s.memcpy_ns;
  j["memcpy_bytes"] = s.memcpy_bytes;
  j["memsets"] = s.memsets;
  j["memset_ns"] = s.memset_ns;
  j["api_calls"] = s.api_calls;
  j["api_ns"] = s.api_ns;
  j["api_failures"] = s.api_failures;
  Json processes = Json::array();
  for (const ProcessRow& p : m.processes) {
    processes.push_back({{"pid", p.pid},
                         {"command", p.command},
                         {"hostname", p.hostname},
                         {"start_ns", p.start_ns},
                         {"wall_ns", p.wall_ns},
                         {"complete", p.complete}});
  }
  j["processes"] = std::move(processes);
  Json devices = Json::array();
  for (const DeviceRow& d : m.devices) {
    devices.push_back({{"pid", d.pid},
                       {"device", d.device},
                       {"name", d.name},
                       {"compute_capability",
                        std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                       {"sm_count", d.sm_count}});
  }
  j["devices"] = std::move(devices);
  return j;
}

Json Loss(const ReportModel& m) {
  Json rows = Json::array();
  for (const LossRow& l : m.loss) {
    Json j;
    j["pid"] = l.pid ? Json(*l.pid) : Json(nullptr);
    j["stat"] = l.stat;
    j["severity"] = l.severity;
    j["value"] = l.value;
    j["description"] = l.description;
    rows.push_back(std::move(j));
  }
  return rows;
}

Json Kernels(const ReportModel& m) {
  Json rows = Json::array();
  for (const KernelRow& k : m.kernels) {
    Json j;
    j["name"] = k.name;
    j["demangled"] = k.demangled;
    j["short_name"] = k.display_name;
    PutStats(j, k.time, true);
    if (!m.medians_known) j["median_ns"] = nullptr;  // merged from summaries
    j["gpu_time_fraction"] = Ratio(k.gpu_time_fraction);
    Json configs = Json::array();
    for (const KernelConfig& c : k.configs) {
      Json cj;
      cj["grid"] = {c.grid[0], c.grid[1], c.grid[2]};
      cj["block"] = {c.block[0], c.block[1], c.block[2]};
      cj["registers_per_thread"] = c.registers_per_thread;
      cj["static_shared_bytes"] = c.static_shared_bytes;
      cj["dynamic_shared_bytes"] = c.dynamic_shared_bytes;
      cj["calls"] = c.calls;
      if (c.occupancy.limiter == OccupancyLimiter::kNone) {
        cj["occupancy"] = nullptr;
      } else {
        cj["occupancy"] = {{"fraction", Ratio(c.occupancy.fraction)},
                           {"blocks_per_sm", c.occupancy.blocks_per_sm},
                           {"warps_per_sm", c.occupancy.warps_per_sm},
                           {"limiter", OccupancyLimiterName(c.occupancy.limiter)}};
      }
      configs.push_back(std::move(cj));
    }
    j["configs"] = std::move(configs);
    rows.push_back(std::move(j));
  }
  return rows;
}

Json Apis(const std::vector<ApiRow>& apis) {
  Json rows = Json::array();
  for (const ApiRow& a : apis) {
    Json j;
    j["name"] = a.name;
    j["domain"] = EnumName(a.domain);
    PutStats(j, a.time, false);
    j["failures"] = a.failures;
    Json errors = Json::array();
    for (const ApiError& e : a.errors) {
      errors.push_back({{"code", e.code}, {"name", e.name}, {"count", e.count}});
    }
    j["errors"] = std::move(errors);
    rows.push_back(std::move(j));
  }
  return rows;
}

double GigabytesPerSecond(uint64_t bytes, uint64_t ns) {
  return ns ? Ratio(static_cast<double>(bytes) / static_cast<double>(ns)) : 0.0;
}

Json Memcpy(const ReportModel& m) {
  Json rows = Json::array();
  for (const MemcpyRow& r : m.memcpy) {
    Json j;
    j["kind"] = EnumName(r.kind);
    PutStats(j, r.time, false);
    j["bytes"] = r.bytes;
    j["min_bytes"] = r.min_bytes;
    j["max_bytes"] = r.max_bytes;
    j["bandwidth_gbps"] = GigabytesPerSecond(r.bytes, r.time.total_ns);
    rows.push_back(std::move(j));
  }
  return rows;
}

Json Memset(const ReportModel& m) {
  Json rows = Json::array();
  for (const MemsetRow& r : m.memset) {
    Json j;
    j["memory_kind"] = EnumName(r.memory_kind);
    PutStats(j, r.time, false);
    j["bytes"] = r.bytes;
    rows.push_back(std::move(j));
  }
  return rows;
}

Json Sync(const ReportModel& m) {
  Json rows = Json::array();
  for (const SyncRow& s : m.sync) {
    Json j;
    j["pid"] = s.pid;
    j["tid"] = s.tid;
    j["kind"] = EnumName(s.kind);
    j["stream"] = s.stream ? Json(*s.stream) : Json(nullptr);
    PutStats(j, s.time, false);
    j["stack"] = s.stack;
    rows.push_back(std::move(j));
  }
  return rows;
}

std::string Hex(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, value);
  return buf;
}

Json Memory(const ReportModel& m) {
  Json devices = Json::array();
  for (const MemoryDeviceRow& r : m.memory) {
    devices.push_back({{"pid", r.pid},
                       {"device", r.device},
                       {"allocations", r.allocations},
                       {"frees", r.frees},
                       {"bytes_allocated", r.bytes_allocated},
                       {"bytes_freed", r.bytes_freed},
                       {"peak_bytes", r.peak_bytes},
                       {"peak_at_ns", r.peak_at_ns},
                       {"live_bytes_at_exit", r.live_bytes_at_exit},
                       {"live_allocations_at_exit", r.live_allocations_at_exit},
                       {"unmatched_frees", r.unmatched_frees}});
  }
  Json leaks = Json::array();
  for (const LeakRow& l : m.leaks) {
    leaks.push_back({{"pid", l.pid},
                     {"device", l.device},
                     {"address", Hex(l.address)},
                     {"bytes", l.bytes},
                     {"memory_kind", EnumName(l.memory_kind)},
                     {"at_ns", l.at_ns},
                     {"api", l.api},
                     {"stack", l.stack}});
  }
  return {{"devices", std::move(devices)}, {"leaks", std::move(leaks)}};
}

Json Utilization(const ReportModel& m) {
  Json devices = Json::array();
  for (const UtilizationRow& u : m.utilization) {
    Json gaps = Json::array();
    for (const IdleGap& g : u.longest_gaps) {
      Json cpu = Json::array();
      for (const CpuActivity& c : g.cpu) {
        cpu.push_back({{"tid", c.tid}, {"api", c.api}, {"overlap_ns", c.overlap_ns}});
      }
      gaps.push_back({{"at_ns", g.at_ns}, {"duration_ns", g.duration_ns}, {"cpu", std::move(cpu)}});
    }
    devices.push_back(
        {{"pid", u.pid},
         {"device", u.device},
         {"span_ns", u.span_ns},
         {"busy_ns", u.busy_ns},
         {"busy_fraction", u.span_ns ? Ratio(static_cast<double>(u.busy_ns) / u.span_ns) : 0.0},
         {"kernel_ns", u.kernel_ns},
         {"idle_gaps", u.gaps},
         {"idle_gap_ns", u.gap_ns},
         {"longest_gaps", std::move(gaps)}});
  }
  return {{"gap_threshold_ns", m.gap_threshold_ns}, {"devices", std::move(devices)}};
}

Json Nvtx(const ReportModel& m) {
  Json rows = Json::array();
  for (const NvtxRow& n : m.nvtx) {
    Json j;
    j["name"] = n.name;
    j["domain"] = n.domain;
    PutStats(j, n.time, false);
    j["unterminated"] = n.unterminated;
    j["kernels"] = n.kernels;
    j["gpu_time_ns"] = n.gpu_time_ns;
    rows.push_back(std::move(j));
  }
  return rows;
}

Json Overhead(const ReportModel& m) {
  const OverheadSummary& o = m.overhead;
  Json cupti = Json::array();
  for (const OverheadRow& r : o.cupti) {
    Json j;
    j["kind"] = EnumName(r.kind);
    PutStats(j, r.time, false);
    cupti.push_back(std::move(j));
  }
  Json j;
  j["cupti"] = std::move(cupti);
  j["cupti_ns"] = o.cupti_ns;
  j["callbacks"] = o.callbacks;
  j["callback_ns"] = o.callback_ns;
  j["callback_avg_ns"] = o.callbacks ? o.callback_ns / o.callbacks : 0;
  j["unwind_ns"] = o.unwind_ns;
  j["translate_ns"] = o.translate_ns;
  j["compress_ns"] = o.compress_ns;
  if (o.memory_peak_bytes) {  // traces from before gpuperf kept these have none
    j["memory_peak_bytes"] = o.memory_peak_bytes;
    j["memory_budget_grown"] = o.memory_budget_grown;
  }
  if (o.table_stacks || o.table_fallback_no_table || o.table_fallback_rule) {  // tables walked
    j["stacks_unwound"] = o.stacks_unwound;
    j["table_stacks"] = o.table_stacks;
    j["table_fallback_no_table"] = o.table_fallback_no_table;
    j["table_fallback_rule"] = o.table_fallback_rule;
    j["unwind_verified"] = o.unwind_verified;
  }
  if (o.python_codes || o.python_no_thread_state) {  // only where a Python program ran
    j["python_codes"] = o.python_codes;
    j["python_no_thread_state"] = o.python_no_thread_state;
  }
  j["wall_ns"] = o.wall_ns;
  j["in_app_ns"] = o.in_app_ns();
  j["in_app_fraction"] = o.wall_ns ? Ratio(static_cast<double>(o.in_app_ns()) / o.wall_ns) : 0.0;
  return j;
}

}  // namespace

Json ReportToJson(const ReportModel& model, const ReportRenderOptions& options) {
  Json j;
  j["schema_version"] = kReportSchemaVersion;
  j["generator"] = "gpuperf report";
  if (options.Wants("summary")) j["summary"] = Summary(model);
  // What was lost is always part of the document: nothing lost silently.
  j["data_loss"] = Loss(model);
  j["read_warnings"] = model.read_warnings;
  if (model.insights_run && options.Wants("insights")) j["insights"] = InsightsJson(model);
  if (options.Wants("kernels")) j["kernels"] = Kernels(model);
  if (options.Wants("runtime_api")) j["runtime_api"] = Apis(model.runtime_api);
  if (options.Wants("driver_api")) j["driver_api"] = Apis(model.driver_api);
  if (options.Wants("memcpy")) j["memcpy"] = Memcpy(model);
  if (options.Wants("memset")) j["memset"] = Memset(model);
  if (options.Wants("sync")) j["sync"] = Sync(model);
  if (options.Wants("memory")) j["memory"] = Memory(model);
  if (options.Wants("utilization")) j["utilization"] = Utilization(model);
  if (options.Wants("nvtx")) j["nvtx"] = Nvtx(model);
  if (options.Wants("cpu") && !model.cpu.empty()) j["cpu"] = CpuReportToJson(model.cpu);
  if (options.Wants("overhead")) j["overhead"] = Overhead(model);
  if (options.Wants("hardware")) PutHardwareJson(model, j);
  // Present only where there is something to say, so reports of one process keep their form.
  if (options.Wants("ranks") && !model.ranks.empty()) j["ranks"] = RanksToJson(model.ranks);
  if (options.Wants("energy") && !model.energy.empty()) j["energy"] = EnergyToJson(model.energy);
  return j;
}

Status ExportReportJson(const ReportModel& model, const ReportRenderOptions& options,
                        std::ostream& out) {
  out << DumpJson(ReportToJson(model, options)) << '\n';
  if (!out) return Error(StatusCode::kIoError, "cannot write the report");
  return Status::Ok();
}

}  // namespace gpuperf
