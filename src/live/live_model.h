// What `gpuperf top` and `gpuperf serve` show: every live page read once, NVML's readings
// of the devices, and the rates taken from the pages' 1-second buckets.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/nvml.h"
#include "live/live_reader.h"

namespace gpuperf::live {

struct LiveModel {
  std::string host;
  ScanResult scan;
  bool nvml_available = false;
  std::string nvml_why;  // why not, when not
  std::vector<NvmlDevice> gpus;
};

// Reads the pages and, when `nvml` is given, the devices.
LiveModel ReadLiveModel(const ScanOptions& options, const Nvml* nvml, std::string nvml_why);

// Rates are averages over the last kRateWindowSeconds complete seconds before the page's last
// update (fewer for a process younger than that), from GPU timestamps: what the devices did
// in those seconds, whenever CUPTI handed the records over.
inline constexpr uint32_t kRateWindowSeconds = 5;

struct DeviceRates {
  double active = 0;  // fraction of the time any work ran (0-1)
  double kernel = 0;  // kernel time per second (above 1 when kernels overlap)
  double copy = 0;
  double set = 0;
  double kernels_per_s = 0;
  double copy_bytes_per_s = 0;
};

struct ProcessRates {
  uint32_t window_s = 0;  // 0: no complete second yet
  double api_calls_per_s = 0;
  double api_failures_per_s = 0;
  double sync = 0;  // sync wait time per second
};

ProcessRates ProcessRatesOf(const ProcessSnapshot& process);
DeviceRates DeviceRatesOf(const ProcessSnapshot& process, uint32_t slot);

// The NVML device a process's device is (by UUID); nullptr when unknown.
const NvmlDevice* GpuOf(const LiveModel& model, const DeviceCounters& device);

// DCGM's "gpu" label: NVML's index when the device is known to NVML, else CUDA's ordinal
// inside the process (the same unless CUDA_VISIBLE_DEVICES reorders devices).
uint32_t GpuIndexOf(const LiveModel& model, const DeviceCounters& device);

// "GPU-..." or "" when the page has no UUID for the device.
std::string UuidOf(const DeviceCounters& device);

// Sum of the data-loss counters (gpuperf/stats.h severity kDataLoss).
uint64_t DroppedRecords(const ProcessSnapshot& process);

}  // namespace gpuperf::live
