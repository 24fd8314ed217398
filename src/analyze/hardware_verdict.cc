#include "analyze/hardware_verdict.h"

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
    return {"latency", reason + ": warps wait (memory latency, dependencies, or too few warps)"};
  }
  if (*memory >= *sm) {
    return {"memory", memory_label + " " + Pct(*memory) + " of peak vs " + sm_label + " " +
                          Pct(*sm) + dram_note};
  }
  std::string reason =
      sm_label + " " + Pct(*sm) + " of peak vs " + memory_label + " " + Pct(*memory);
  if (tensor && *tensor > 0) reason += "; tensor pipe " + Pct(*tensor);
  return {"compute", reason};
}

}  // namespace gpuperf
