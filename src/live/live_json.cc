#include "live/live_json.h"

#include <nlohmann/json.hpp>

#include "base/json_output.h"
#include "format/live_text.h"

namespace gpuperf::live {
namespace {

using nlohmann::json;

json GpuJson(const NvmlDevice& gpu) {
  json out = {{"gpu", gpu.index}, {"uuid", gpu.uuid}, {"name", gpu.name}};
  // Readings NVML could not give are left out rather than shown as numbers.
  auto put = [&out](const char* key, auto value) {
    if (value >= 0) out[key] = value;
  };
  put("utilization_percent", gpu.gpu_util_percent);
  put("memory_utilization_percent", gpu.memory_util_percent);
  put("sm_clock_mhz", gpu.sm_clock_mhz);
  put("memory_clock_mhz", gpu.memory_clock_mhz);
  put("power_watts", gpu.power_watts);
  put("temperature_c", gpu.temperature_c);
  put("memory_used_bytes", gpu.memory_used_bytes);
  put("memory_total_bytes", gpu.memory_total_bytes);
  return out;
}

json DeviceJson(const LiveModel& model, const ProcessSnapshot& process, uint32_t slot) {
  const DeviceCounters& d = process.counters.devices[slot];
  json copy_bytes = json::object();
  for (uint32_t kind = 0; kind < kCopyKinds; ++kind) {
    copy_bytes[kCopyKindNames[kind]] = d.copy_bytes[kind];
  }
  const DeviceRates rates = DeviceRatesOf(process, slot);
  json out = {
      {"device", d.device_id},
      {"gpu", GpuIndexOf(model, d)},
      {"uuid", UuidOf(d)},
      {"name", TextOf(d.name)},
      {"active_ns", d.active_ns},
      {"kernel_ns", d.kernel_ns},
      {"copy_ns", d.copy_ns},
      {"set_ns", d.set_ns},
      {"kernels", d.kernels},
      {"copies", d.copies},
      {"sets", d.sets},
      {"copy_bytes", copy_bytes},
      {"set_bytes", d.set_bytes},
      {"memory_bytes", d.memory_current},
      {"memory_peak_bytes", d.memory_peak},
      {"allocations", d.allocations},
      {"frees", d.frees},
      {"rates",
       {{"active", rates.active},
        {"kernel", rates.kernel},
        {"copy", rates.copy},
        {"set", rates.set},
        {"kernels_per_s", rates.kernels_per_s},
        {"copy_bytes_per_s", rates.copy_bytes_per_s}}},
  };
  if (const NvmlDevice* gpu = GpuOf(model, d)) out["nvml"] = GpuJson(*gpu);
  return out;
}

json ProcessJson(const LiveModel& model, const ProcessSnapshot& p) {
  json out = {{"pid", p.pid}, {"state", PageStateName(p.state)}, {"page", p.path}};
  if (p.has_identity) {
    const Identity& id = p.identity;
    out["parent_pid"] = id.parent_pid;
    out["command"] = TextOf(id.command);
    out["host"] = TextOf(id.host);
    out["gpuperf_version"] = TextOf(id.version);
    out["start_realtime_ns"] = id.start_realtime_ns;
    for (auto [key, value] : {std::pair{"rank", id.rank}, std::pair{"local_rank", id.local_rank},
                              std::pair{"world_size", id.world_size}}) {
      out[key] = value >= 0 ? json(value) : json(nullptr);
    }
  }
  if (p.has_counters) {
    const Counters& c = p.counters;
    const ProcessRates rates = ProcessRatesOf(p);
    out["updates"] = c.updates;
    out["capturing"] = c.capturing != 0;
    out["api"] = {{"calls", c.api_calls},
                  {"failures", c.api_failures},
                  {"ns", c.api_ns},
                  {"calls_per_s", rates.api_calls_per_s},
                  {"failures_per_s", rates.api_failures_per_s}};
    out["sync"] = {{"calls", c.syncs}, {"ns", c.sync_ns}, {"per_s", rates.sync}};
    out["rate_window_s"] = rates.window_s;
    json devices = json::array();
    for (uint32_t slot = 0; slot < c.device_count && slot < kMaxDevices; ++slot) {
      devices.push_back(DeviceJson(model, p, slot));
    }
    out["devices"] = devices;
  }
  if (p.has_kernels) {
    json kernels = json::array();
    for (uint32_t i = 0; i < p.kernels.count && i < kMaxKernels; ++i) {
      const KernelEntry& k = p.kernels.entries[i];
      kernels.push_back(
          {{"device", k.device_id}, {"name", TextOf(k.name)}, {"ns", k.ns}, {"count", k.count}});
    }
    out["kernels"] = kernels;
    out["kernels_other"] = {{"ns", p.kernels.other_ns}, {"count", p.kernels.other_count}};
  }
  if (p.has_apis) {
    json apis = json::array();
    for (uint32_t i = 0; i < p.apis.count && i < kMaxApis; ++i) {
      const ApiEntry& a = p.apis.entries[i];
      apis.push_back(
          {{"name", TextOf(a.name)}, {"calls", a.calls}, {"failures", a.failures}, {"ns", a.ns}});
    }
    out["apis"] = apis;
  }
  if (p.has_stats) {
    json by_reason = json::object();
    for (uint32_t id = 0; id < kStatSlots; ++id) {
      const StatInfo info = GetStatInfo(id);
      if (info.severity == StatSeverity::kDataLoss && p.stats.values[id] != 0) {
        by_reason[std::string(info.name)] = p.stats.values[id];
      }
    }
    out["dropped"] = {{"total", DroppedRecords(p)}, {"by_reason", by_reason}};
  }
  return out;
}

}  // namespace

std::string LiveModelJson(const LiveModel& model) {
  json processes = json::array();
  for (const ProcessSnapshot& process : model.scan.processes) {
    processes.push_back(ProcessJson(model, process));
  }
  json nvml = {{"available", model.nvml_available}};
  if (model.nvml_available) {
    json gpus = json::array();
    for (const NvmlDevice& gpu : model.gpus) gpus.push_back(GpuJson(gpu));
    nvml["gpus"] = gpus;
  } else {
    nvml["why"] = model.nvml_why;
  }
  json out = {{"host", model.host},
              {"processes", processes},
              {"nvml", nvml},
              {"stale_pages", model.scan.stale},
              {"stale_pages_removed", model.scan.removed},
              {"skipped", model.scan.skipped}};
  return DumpJson(std::move(out)) + "\n";
}

}  // namespace gpuperf::live
