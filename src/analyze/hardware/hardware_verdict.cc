#include "analyze/hardware/hardware_verdict.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace gpuperf {
namespace {

std::string Pct(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f%%", value);
  return buf;
}

std::string Gbps(double bytes_per_second) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.0f GB/s", bytes_per_second / 1e9);
  return buf;
}

}  // namespace

BoundVerdict JudgeBound(const HardwareRow& row) {
  std::optional<double> sm = row.Get("sm_pct");
  std::string sm_label = "SM";
  if (!sm) {
    sm = row.Get("issue_pct");
    sm_label = "SM issue slots";
  }
  std::optional<double> memory = row.Get("mem_pct");
  std::string memory_label = "memory";
  if (!memory) {
    memory = row.Get("dram_pct");
    memory_label = "DRAM";
  }
  if (!sm || !memory) return {"", "SM and memory throughput were not both measured"};
  // A range (NVTX, window) holds the gaps between its kernels, which dilute every rate: on
  // the H100, hw_bound's copy range read DRAM 50% of peak with the SMs busy 54% of it, while
  // the same kernel alone read 85%. So a range's DRAM rate is judged over the time the SMs
  // were busy, and the reason says how much of the range that was. (Its issue-slot rate is
  // CUPTI's ...pct_of_peak_sustained_active: already over the active cycles.)
  std::string busy_note;
  const std::optional<double> busy = row.Get("sm_busy_pct");
  if (sm_label != "SM" && busy && *busy > 0 && *busy < kRangeBusyScalePct) {
    memory = std::min(100.0, *memory * 100 / *busy);
    busy_note = "; SMs busy " + Pct(*busy) + " of the range, rates over that time";
  }
  const std::optional<double> tensor = row.Get("tensor_pct");
  const std::optional<double> dram = row.Get("dram_pct");
  const std::optional<double> bandwidth = row.Get("dram_bw");
  std::string dram_note;
  if (bandwidth && dram) {
    dram_note = "; DRAM " + Gbps(*bandwidth) + ", " + Pct(*dram) + " of peak";
  }
  if (std::max(*sm, *memory) < kBoundThresholdPct) {
    std::string reason = "neither " + sm_label + " (" + Pct(*sm) + " of peak) nor " + memory_label +
                         " (" + Pct(*memory) + ") is busy";
    if (const std::optional<double> occupancy = row.Get("occupancy")) {
      reason += "; achieved occupancy " + Pct(*occupancy);
    }
    return {"latency",
            reason + ": warps wait (memory latency, dependencies, or too few warps)" + busy_note};
  }
  if (*memory >= *sm) {
    return {"memory", memory_label + " " + Pct(*memory) + " of peak vs " + sm_label + " " +
                          Pct(*sm) + dram_note + busy_note};
  }
  std::string reason =
      sm_label + " " + Pct(*sm) + " of peak vs " + memory_label + " " + Pct(*memory);
  if (tensor && *tensor > 0) reason += "; tensor pipe " + Pct(*tensor);
  return {"compute", reason + busy_note};
}

}  // namespace gpuperf
