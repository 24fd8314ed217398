#include "live/live_model.h"

#include <unistd.h>

#include <algorithm>

#include "base/quantity.h"

namespace gpuperf::live {
namespace {

// The seconds the rates average over: [first, first + count).
struct Window {
  uint64_t first = 0;
  uint32_t count = 0;
};

Window RateWindow(const ProcessSnapshot& process) {
  if (!process.has_counters || !process.has_ring || process.counters.updated_monotonic_ns == 0) {
    return {};
  }
  const uint64_t current = process.counters.updated_monotonic_ns / kNsPerSecond;  // incomplete
  const uint64_t started = process.identity.start_monotonic_ns / kNsPerSecond;
  const uint64_t available = current > started ? current - started : 0;
  const uint32_t count = static_cast<uint32_t>(std::min<uint64_t>(kRateWindowSeconds, available));
  return {current - count, count};
}

}  // namespace

LiveModel ReadLiveModel(const ScanOptions& options, const Nvml* nvml, std::string nvml_why) {
  LiveModel model;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  model.host = host;
  model.scan = ScanLivePages(options);
  model.nvml_available = nvml != nullptr;
  model.nvml_why = std::move(nvml_why);
  if (nvml != nullptr) model.gpus = nvml->Read();
  return model;
}

ProcessRates ProcessRatesOf(const ProcessSnapshot& process) {
  ProcessRates rates;
  const Window window = RateWindow(process);
  if (window.count == 0) return rates;
  rates.window_s = window.count;
  for (uint64_t second = window.first; second < window.first + window.count; ++second) {
    const ProcessBucket& bucket = process.ring->process[second % kRingSeconds];
    if (bucket.second != second) continue;
    rates.api_calls_per_s += bucket.api_calls;
    rates.api_failures_per_s += bucket.api_failures;
    rates.sync += static_cast<double>(bucket.sync_ns) / kNsPerSecond;
  }
  rates.api_calls_per_s /= window.count;
  rates.api_failures_per_s /= window.count;
  rates.sync /= window.count;
  return rates;
}

DeviceRates DeviceRatesOf(const ProcessSnapshot& process, uint32_t slot) {
  DeviceRates rates;
  const Window window = RateWindow(process);
  if (window.count == 0 || slot >= kMaxDevices) return rates;
  for (uint64_t second = window.first; second < window.first + window.count; ++second) {
    const DeviceBucket& bucket = process.ring->devices[slot][second % kRingSeconds];
    if (bucket.second != second) continue;
    rates.active += static_cast<double>(bucket.active_ns) / kNsPerSecond;
    rates.kernel += static_cast<double>(bucket.kernel_ns) / kNsPerSecond;
    rates.copy += static_cast<double>(bucket.copy_ns) / kNsPerSecond;
    rates.set += static_cast<double>(bucket.set_ns) / kNsPerSecond;
    rates.kernels_per_s += bucket.kernels;
    rates.copy_bytes_per_s += bucket.copy_bytes;
  }
  for (double* value : {&rates.active, &rates.kernel, &rates.copy, &rates.set, &rates.kernels_per_s,
                        &rates.copy_bytes_per_s}) {
    *value /= window.count;
  }
  return rates;
}

std::string UuidOf(const DeviceCounters& device) {
  return device.has_uuid ? UuidText(device.uuid) : std::string();
}

const NvmlDevice* GpuOf(const LiveModel& model, const DeviceCounters& device) {
  if (!device.has_uuid) return nullptr;
  const std::string uuid = UuidOf(device);
  for (const NvmlDevice& gpu : model.gpus) {
    if (gpu.uuid == uuid) return &gpu;
  }
  return nullptr;
}

uint32_t GpuIndexOf(const LiveModel& model, const DeviceCounters& device) {
  const NvmlDevice* gpu = GpuOf(model, device);
  return gpu != nullptr ? gpu->index : device.device_id;
}

uint64_t DroppedRecords(const ProcessSnapshot& process) {
  uint64_t total = 0;
  for (uint32_t id = 0; id < kStatSlots; ++id) {
    if (GetStatInfo(id).severity == StatSeverity::kDataLoss) total += process.stats.values[id];
  }
  return total;
}

}  // namespace gpuperf::live
