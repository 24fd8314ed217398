// The JSON document of a report read back into a ReportModel (for `gpuperf diff`
// baselines). The inverse of report_json.cc: every field the writer writes is read, the
// derived ones (averages, bandwidth, fractions of totals) are recomputed by the writer, so
// model -> JSON -> model -> JSON gives the same document. A field that is missing or of
// the wrong type reads as zero (or empty), as diff has always treated it.
#include <cstdlib>
#include <string>

#include "export/json_fields.h"
#include "export/report_hardware.h"
#include "export/report_json.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

using Json = nlohmann::ordered_json;

using json_fields::Field;
using json_fields::Number;
using json_fields::Rows;
using json_fields::Text;

std::vector<std::string> Texts(const Json& j, const char* key) {
  std::vector<std::string> out;
  for (const Json& v : Rows(j, key)) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// The enumerator whose name is `name`; unknown names read as the enum's 0 (kUnknown).
template <class E>
E EnumFrom(const std::string& name) {
  for (int value = 0; value < 256; ++value) {
    if (EnumName(static_cast<E>(value)) == name) return static_cast<E>(value);
  }
  return E{};
}

OccupancyLimiter LimiterFrom(const std::string& name) {
  for (int value = 0; value < 256; ++value) {
    const auto limiter = static_cast<OccupancyLimiter>(value);
    if (OccupancyLimiterName(limiter) == name) return limiter;
  }
  return OccupancyLimiter::kNone;
}

DurationStats Stats(const Json& j) {
  DurationStats s;
  s.count = Number<uint64_t>(j, "count");
  s.total_ns = Number<uint64_t>(j, "total_ns");
  s.min_ns = Number<uint64_t>(j, "min_ns");
  s.max_ns = Number<uint64_t>(j, "max_ns");
  s.median_ns = Number<uint64_t>(j, "median_ns");
  return s;
}

void ReadSummary(const Json& j, ReportModel& m) {
  ReportSummary& s = m.summary;
  s.origin_ns = Number<uint64_t>(j, "origin_ns");
  s.span_ns = Number<uint64_t>(j, "span_ns");
  s.kernels = Number<uint64_t>(j, "kernels");
  s.kernel_ns = Number<uint64_t>(j, "kernel_ns");
  s.memcpys = Number<uint64_t>(j, "memcpys");
  s.memcpy_ns = Number<uint64_t>(j, "memcpy_ns");
  s.memcpy_bytes = Number<uint64_t>(j, "memcpy_bytes");
  s.memsets = Number<uint64_t>(j, "memsets");
  s.memset_ns = Number<uint64_t>(j, "memset_ns");
  s.api_calls = Number<uint64_t>(j, "api_calls");
  s.api_ns = Number<uint64_t>(j, "api_ns");
  s.api_failures = Number<uint64_t>(j, "api_failures");
  for (const Json& p : Rows(j, "processes")) {
    m.processes.push_back({Number<uint32_t>(p, "pid"), Text(p, "command"), Text(p, "hostname"),
                           Number<uint64_t>(p, "start_ns"), Number<uint64_t>(p, "wall_ns"),
                           Field(p, "complete").is_boolean() && Field(p, "complete").get<bool>()});
  }
  for (const Json& d : Rows(j, "devices")) {
    DeviceRow row;
    row.pid = Number<uint32_t>(d, "pid");
    row.device = Number<uint32_t>(d, "device");
    row.name = Text(d, "name");
    const std::string capability = Text(d, "compute_capability");  // "9.0"
    const size_t dot = capability.find('.');
    row.compute_major = static_cast<uint32_t>(std::strtoul(capability.c_str(), nullptr, 10));
    if (dot != std::string::npos) {
      row.compute_minor =
          static_cast<uint32_t>(std::strtoul(capability.c_str() + dot + 1, nullptr, 10));
    }
    row.sm_count = Number<uint32_t>(d, "sm_count");
    m.devices.push_back(std::move(row));
  }
}

void ReadLoss(const Json& doc, ReportModel& m) {
  for (const Json& l : Rows(doc, "data_loss")) {
    LossRow row;
    if (Field(l, "pid").is_number()) row.pid = Number<uint32_t>(l, "pid");
    row.stat = Text(l, "stat");
    row.severity = Text(l, "severity");
    row.value = Number<uint64_t>(l, "value");
    row.description = Text(l, "description");
    m.loss.push_back(std::move(row));
  }
  m.read_warnings = Texts(doc, "read_warnings");
}

KernelConfig Config(const Json& c) {
  KernelConfig config;
  for (int i = 0; i < 3; ++i) {
    const Json& grid = Field(c, "grid");
    const Json& block = Field(c, "block");
    if (grid.is_array() && grid.size() == 3 && grid[i].is_number()) {
      config.grid[i] = grid[i].get<uint32_t>();
    }
    if (block.is_array() && block.size() == 3 && block[i].is_number()) {
      config.block[i] = block[i].get<uint32_t>();
    }
  }
  config.registers_per_thread = Number<uint32_t>(c, "registers_per_thread");
  config.static_shared_bytes = Number<uint32_t>(c, "static_shared_bytes");
  config.dynamic_shared_bytes = Number<uint32_t>(c, "dynamic_shared_bytes");
  config.calls = Number<uint64_t>(c, "calls");
  const Json& o = Field(c, "occupancy");
  if (o.is_object()) {
    config.occupancy.fraction = Number<double>(o, "fraction");
    config.occupancy.blocks_per_sm = Number<uint32_t>(o, "blocks_per_sm");
    config.occupancy.warps_per_sm = Number<uint32_t>(o, "warps_per_sm");
    config.occupancy.limiter = LimiterFrom(Text(o, "limiter"));
  }
  return config;
}

void ReadKernels(const Json& rows, ReportModel& m) {
  for (const Json& k : rows) {
    KernelRow row;
    row.name = Text(k, "name");
    row.demangled = Text(k, "demangled");
    row.display_name = Text(k, "short_name");
    row.time = Stats(k);
    row.gpu_time_fraction = Number<double>(k, "gpu_time_fraction");
    for (const Json& c : Rows(k, "configs")) row.configs.push_back(Config(c));
    m.kernels.push_back(std::move(row));
  }
}

std::vector<ApiRow> ReadApis(const Json& rows) {
  std::vector<ApiRow> out;
  for (const Json& a : rows) {
    ApiRow row;
    row.name = Text(a, "name");
    row.domain = EnumFrom<ApiDomain>(Text(a, "domain"));
    row.time = Stats(a);
    row.failures = Number<uint64_t>(a, "failures");
    for (const Json& e : Rows(a, "errors")) {
      row.errors.push_back(
          {Number<int32_t>(e, "code"), Text(e, "name"), Number<uint64_t>(e, "count")});
    }
    out.push_back(std::move(row));
  }
  return out;
}

void ReadCopies(const Json& doc, ReportModel& m) {
  for (const Json& r : Rows(doc, "memcpy")) {
    m.memcpy.push_back({EnumFrom<MemcpyKind>(Text(r, "kind")), Stats(r),
                        Number<uint64_t>(r, "bytes"), Number<uint64_t>(r, "min_bytes"),
                        Number<uint64_t>(r, "max_bytes")});
  }
  for (const Json& r : Rows(doc, "memset")) {
    m.memset.push_back(
        {EnumFrom<MemoryKind>(Text(r, "memory_kind")), Stats(r), Number<uint64_t>(r, "bytes")});
  }
}

void ReadSync(const Json& rows, ReportModel& m) {
  for (const Json& s : rows) {
    SyncRow row;
    row.pid = Number<uint32_t>(s, "pid");
    row.tid = Number<uint32_t>(s, "tid");
    row.kind = EnumFrom<SyncKind>(Text(s, "kind"));
    if (Field(s, "stream").is_number()) row.stream = Number<uint32_t>(s, "stream");
    row.time = Stats(s);
    row.stack = Texts(s, "stack");
    m.sync.push_back(std::move(row));
  }
}

void ReadMemory(const Json& j, ReportModel& m) {
  for (const Json& d : Rows(j, "devices")) {
    MemoryDeviceRow row;
    row.pid = Number<uint32_t>(d, "pid");
    row.device = Number<uint32_t>(d, "device");
    row.allocations = Number<uint64_t>(d, "allocations");
    row.frees = Number<uint64_t>(d, "frees");
    row.bytes_allocated = Number<uint64_t>(d, "bytes_allocated");
    row.bytes_freed = Number<uint64_t>(d, "bytes_freed");
    row.peak_bytes = Number<uint64_t>(d, "peak_bytes");
    row.peak_at_ns = Number<uint64_t>(d, "peak_at_ns");
    row.live_bytes_at_exit = Number<uint64_t>(d, "live_bytes_at_exit");
    row.live_allocations_at_exit = Number<uint64_t>(d, "live_allocations_at_exit");
    row.unmatched_frees = Number<uint64_t>(d, "unmatched_frees");
    m.memory.push_back(row);
  }
  for (const Json& l : Rows(j, "leaks")) {
    LeakRow row;
    row.pid = Number<uint32_t>(l, "pid");
    row.device = Number<uint32_t>(l, "device");
    row.address = std::strtoull(Text(l, "address").c_str(), nullptr, 16);  // "0x..."
    row.bytes = Number<uint64_t>(l, "bytes");
    row.memory_kind = EnumFrom<MemoryKind>(Text(l, "memory_kind"));
    row.at_ns = Number<uint64_t>(l, "at_ns");
    row.api = Text(l, "api");
    row.stack = Texts(l, "stack");
    m.leaks.push_back(std::move(row));
  }
}

void ReadUtilization(const Json& j, ReportModel& m) {
  m.gap_threshold_ns = Number<uint64_t>(j, "gap_threshold_ns");
  for (const Json& d : Rows(j, "devices")) {
    UtilizationRow row;
    row.pid = Number<uint32_t>(d, "pid");
    row.device = Number<uint32_t>(d, "device");
    row.span_ns = Number<uint64_t>(d, "span_ns");
    row.busy_ns = Number<uint64_t>(d, "busy_ns");
    row.kernel_ns = Number<uint64_t>(d, "kernel_ns");
    row.gaps = Number<uint64_t>(d, "idle_gaps");
    row.gap_ns = Number<uint64_t>(d, "idle_gap_ns");
    for (const Json& g : Rows(d, "longest_gaps")) {
      IdleGap gap{Number<uint64_t>(g, "at_ns"), Number<uint64_t>(g, "duration_ns"), {}};
      for (const Json& c : Rows(g, "cpu")) {
        gap.cpu.push_back(
            {Number<uint32_t>(c, "tid"), Text(c, "api"), Number<uint64_t>(c, "overlap_ns")});
      }
      row.longest_gaps.push_back(std::move(gap));
    }
    m.utilization.push_back(std::move(row));
  }
}

void ReadNvtx(const Json& rows, ReportModel& m) {
  for (const Json& n : rows) {
    NvtxRow row;
    row.name = Text(n, "name");
    row.domain = Text(n, "domain");
    row.time = Stats(n);
    row.unterminated = Number<uint64_t>(n, "unterminated");
    row.kernels = Number<uint64_t>(n, "kernels");
    row.gpu_time_ns = Number<uint64_t>(n, "gpu_time_ns");
    m.nvtx.push_back(std::move(row));
  }
}

void ReadOverhead(const Json& j, ReportModel& m) {
  OverheadSummary& o = m.overhead;
  for (const Json& r : Rows(j, "cupti")) {
    o.cupti.push_back({EnumFrom<OverheadKind>(Text(r, "kind")), Stats(r)});
  }
  o.cupti_ns = Number<uint64_t>(j, "cupti_ns");
  o.callbacks = Number<uint64_t>(j, "callbacks");
  o.callback_ns = Number<uint64_t>(j, "callback_ns");
  o.unwind_ns = Number<uint64_t>(j, "unwind_ns");
  o.translate_ns = Number<uint64_t>(j, "translate_ns");
  o.compress_ns = Number<uint64_t>(j, "compress_ns");
  o.stacks_unwound = Number<uint64_t>(j, "stacks_unwound");  // absent: no table walks
  o.table_stacks = Number<uint64_t>(j, "table_stacks");
  o.table_fallback_no_table = Number<uint64_t>(j, "table_fallback_no_table");
  o.table_fallback_rule = Number<uint64_t>(j, "table_fallback_rule");
  o.unwind_verified = Number<uint64_t>(j, "unwind_verified");
  o.python_codes = Number<uint64_t>(j, "python_codes");  // absent: no Python program
  o.python_no_thread_state = Number<uint64_t>(j, "python_no_thread_state");
  o.wall_ns = Number<uint64_t>(j, "wall_ns");
}

}  // namespace

Result<ReportModel> ReportFromJson(const Json& doc, std::string_view what) {
  const std::string subject(what);
  if (!doc.is_object() || !doc.contains("schema_version")) {
    return Error(StatusCode::kNotATrace, subject + " is not a gpuperf report (no schema_version)");
  }
  const Json& version = doc["schema_version"];
  if (!version.is_number_integer() || version.get<int>() != kReportSchemaVersion) {
    return Error(StatusCode::kUnsupportedVersion,
                 subject + " has report schema version " + version.dump() +
                     "; this gpuperf reads version " + std::to_string(kReportSchemaVersion));
  }
  ReportModel m;
  ReadSummary(Field(doc, "summary"), m);
  ReadLoss(doc, m);
  ReadKernels(Rows(doc, "kernels"), m);
  m.runtime_api = ReadApis(Rows(doc, "runtime_api"));
  m.driver_api = ReadApis(Rows(doc, "driver_api"));
  ReadCopies(doc, m);
  ReadSync(Rows(doc, "sync"), m);
  ReadMemory(Field(doc, "memory"), m);
  ReadUtilization(Field(doc, "utilization"), m);
  ReadNvtx(Rows(doc, "nvtx"), m);
  ReadOverhead(Field(doc, "overhead"), m);
  ReadHardwareJson(doc, m);
  return m;
}

}  // namespace gpuperf
