#include "base/metric_sets.h"

#include <array>

namespace gpuperf {
namespace {

constexpr std::array kKnown = {
    // What the verdict reads (per kernel): the units' throughput against their peak.
    KnownMetric{"sm_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM throughput",
                MetricUnitKind::kPercent},
    KnownMetric{"mem_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
                "memory throughput", MetricUnitKind::kPercent},
    KnownMetric{"dram_pct", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                "DRAM throughput", MetricUnitKind::kPercent},
    KnownMetric{"dram_bw", "dram__bytes.sum.per_second", "DRAM bandwidth",
                MetricUnitKind::kBytesPerSecond},
    KnownMetric{"dram_read", "dram__bytes_read.sum", "DRAM bytes read", MetricUnitKind::kBytes},
    KnownMetric{"dram_write", "dram__bytes_write.sum", "DRAM bytes written",
                MetricUnitKind::kBytes},
    KnownMetric{"occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active",
                "achieved occupancy", MetricUnitKind::kPercent},
    KnownMetric{"l1_hit", "l1tex__t_sector_hit_rate.pct", "L1 hit rate", MetricUnitKind::kPercent},
    KnownMetric{"l2_hit", "lts__t_sector_hit_rate.pct", "L2 hit rate", MetricUnitKind::kPercent},
    KnownMetric{"tensor_pct",
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                "tensor pipe (HMMA/HGMMA)", MetricUnitKind::kPercent},
    KnownMetric{"duration", "gpu__time_duration.sum", "duration under replay",
                MetricUnitKind::kNanoseconds},
    // One-pass stand-ins the range sets use (sm__throughput alone needs 8 passes on GH100).
    KnownMetric{"sm_busy_pct", "sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "SM busy",
                MetricUnitKind::kPercent},
    KnownMetric{"issue_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active",
                "issue slots busy", MetricUnitKind::kPercent},
    // Deeper views of the memory, compute and tensor sets.
    KnownMetric{"l1_pct", "l1tex__throughput.avg.pct_of_peak_sustained_active", "L1 throughput",
                MetricUnitKind::kPercent},
    KnownMetric{"l2_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "L2 throughput",
                MetricUnitKind::kPercent},
    KnownMetric{"global_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                "global load sectors", MetricUnitKind::kBytes},
    KnownMetric{"global_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                "global store sectors", MetricUnitKind::kBytes},
    KnownMetric{"l2_read_sectors", "lts__t_sectors_op_read.sum", "L2 read sectors",
                MetricUnitKind::kBytes},
    KnownMetric{"ipc", "sm__inst_executed.avg.per_cycle_active", "IPC (per SM)",
                MetricUnitKind::kPerCycle},
    KnownMetric{"inst_pct", "sm__instruction_throughput.avg.pct_of_peak_sustained_active",
                "instruction throughput", MetricUnitKind::kPercent},
    KnownMetric{"fma_pct", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                "FMA pipe", MetricUnitKind::kPercent},
    KnownMetric{"alu_pct", "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
                "ALU pipe", MetricUnitKind::kPercent},
    KnownMetric{"fp64_pct", "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
                "FP64 pipe", MetricUnitKind::kPercent},
    KnownMetric{"tensor_all_pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                "tensor pipe (all)", MetricUnitKind::kPercent},
};

// The basic per-kernel set: the verdict's inputs plus what a first look wants.
constexpr std::array kBasicKernel = {"sm_pct",    "mem_pct",    "dram_pct",  "dram_bw",
                                     "dram_read", "dram_write", "occupancy", "l1_hit",
                                     "l2_hit",    "tensor_pct", "duration"};
constexpr std::array kBasicRange = {"sm_busy_pct", "issue_pct",  "dram_pct",  "dram_bw",
                                    "dram_read",   "dram_write", "occupancy", "l1_hit",
                                    "tensor_pct",  "duration"};
constexpr std::array kMemoryKernel = {
    "sm_pct",  "mem_pct", "dram_pct", "dram_bw", "dram_read",         "dram_write",
    "l1_hit",  "l2_hit",  "l1_pct",   "l2_pct",  "global_ld_sectors", "global_st_sectors",
    "duration"};
constexpr std::array kMemoryRange = {"sm_busy_pct",     "issue_pct",        "dram_pct", "dram_bw",
                                     "dram_read",       "dram_write",       "l1_hit",   "duration",
                                     "l2_read_sectors", "global_ld_sectors"};
constexpr std::array kComputeKernel = {"sm_pct",    "mem_pct",     "dram_pct", "ipc",
                                       "inst_pct",  "fma_pct",     "alu_pct",  "fp64_pct",
                                       "occupancy", "sm_busy_pct", "duration"};
constexpr std::array kComputeRange = {"sm_busy_pct", "issue_pct", "ipc",     "occupancy",
                                      "dram_pct",    "alu_pct",   "duration"};
constexpr std::array kTensorKernel = {"sm_pct",         "mem_pct",   "dram_pct", "tensor_pct",
                                      "tensor_all_pct", "occupancy", "duration"};
constexpr std::array kTensorRange = {"tensor_all_pct", "tensor_pct", "issue_pct",
                                     "dram_pct",       "occupancy",  "duration"};

template <size_t N>
std::vector<std::string_view> Names(const std::array<const char*, N>& short_names) {
  std::vector<std::string_view> out;
  for (const char* name : short_names) out.push_back(FindKnownMetric(name)->cupti_name);
  return out;
}

}  // namespace

std::span<const KnownMetric> KnownMetrics() {
  return kKnown;
}

const KnownMetric* FindKnownMetric(std::string_view name) {
  for (const KnownMetric& m : kKnown) {
    if (m.short_name == name || m.cupti_name == name) return &m;
  }
  return nullptr;
}

std::vector<std::string_view> MetricSet(std::string_view set, SetScope scope) {
  const bool kernel = scope == SetScope::kPerKernel;
  if (set == "basic") return kernel ? Names(kBasicKernel) : Names(kBasicRange);
  if (set == "memory") return kernel ? Names(kMemoryKernel) : Names(kMemoryRange);
  if (set == "compute") return kernel ? Names(kComputeKernel) : Names(kComputeRange);
  if (set == "tensor") return kernel ? Names(kTensorKernel) : Names(kTensorRange);
  return {};
}

std::string MetricSetNames() {
  return "basic, memory, compute, tensor";
}

}  // namespace gpuperf
