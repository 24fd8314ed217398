// What `gpuperf report` says about GPU energy (the "energy" section): an estimate from
// NVML power readings (energy.h says how), per kernel name and per GPU, next to NVML's own
// energy counter over the same stretch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/energy/energy.h"

namespace gpuperf {

struct EnergyKernelRow {
  std::string name;          // as recorded
  std::string display_name;  // demangled and shortened
  uint64_t calls = 0;
  uint64_t gpu_ns = 0;
  double joules = 0;
  double share = 0;  // of the energy attributed to kernels
  // Mean power while it ran (its joules over its GPU time); concurrent kernels each get
  // their share, so this is the power it accounts for, not the board's.
  double watts() const { return gpu_ns ? joules / (static_cast<double>(gpu_ns) * 1e-9) : 0; }
};

struct EnergyModel {
  std::vector<EnergyDevice> devices;
  std::vector<EnergyKernelRow> kernels;  // most joules first
  double attributed_j = 0;
  double idle_j = 0;
  double sampled_j = 0;

  bool empty() const { return devices.empty(); }
};

}  // namespace gpuperf
