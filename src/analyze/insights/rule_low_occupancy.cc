// low_occupancy: hot kernels whose launch configuration lets few warps share an SM. A
// kernel is hot with 5% of all kernel time and at least 1 ms; its theoretical occupancy
// (analyze/hardware/occupancy.h, of its most frequent configuration) is low below 50%. Kernels of
// vendor libraries (cuBLAS, cuDNN, CUTLASS, FlashAttention) are left out: their tiles
// trade occupancy for data reuse on purpose, and their configuration is not the user's.
// A hint, not a verdict: more warps help a kernel that waits on memory, not one that is
// already compute-bound.
#include <map>

#include "analyze/insights/rule_support.h"
#include "analyze/insights/rules.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr double kHotShare = 0.05;
constexpr uint64_t kMinKernelNs = 1'000'000;
constexpr double kLowOccupancy = 0.5;

bool IsLibraryKernel(std::string_view name) {
  for (std::string_view marker : {"xmma", "cutlass", "cublas", "cudnn", "nvjet", "fmha", "flash_",
                                  "ampere_", "volta_", "turing_", "hopper_", "sm90_", "sm80_"}) {
    if (name.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

std::string WhatToTry(const KernelConfig& c, const Occupancy& occupancy) {
  const uint32_t threads = c.block[0] * c.block[1] * c.block[2];
  switch (occupancy.limiter) {
    case OccupancyLimiter::kRegisters:
      return "Each thread holds " + std::to_string(c.registers_per_thread) +
             " registers: cap them (__launch_bounds__(threads, minBlocksPerSM) or -maxrregcount) "
             "or keep fewer values live, then check with Nsight Compute that the extra warps "
             "hide memory latency rather than spill.";
    case OccupancyLimiter::kSharedMemory:
      return "Each block uses " +
             FormatBytes(uint64_t{c.static_shared_bytes} + c.dynamic_shared_bytes) +
             " of shared memory: use smaller tiles or fewer pipeline stages, or let the kernel "
             "use more of the SM's memory as shared memory "
             "(cudaFuncAttributePreferredSharedMemoryCarveout).";
    case OccupancyLimiter::kBlocks:
      return "Blocks of " + std::to_string(threads) +
             " threads are too small: the SM runs out of block slots before warp slots. Use "
             "blocks of 128 to 256 threads.";
    default:
      return "Choose a block size the SM's warp capacity divides evenly (cudaOccupancyMaxPotential"
             "BlockSize suggests one).";
  }
}

}  // namespace

void LowOccupancy(InsightInput& input, std::vector<Insight>& out) {
  const auto& processes = input.processes();
  for (const KernelRow& row : input.model().kernels) {
    if (row.gpu_time_fraction < kHotShare || row.time.total_ns < kMinKernelNs) continue;
    if (row.configs.empty() || IsLibraryKernel(row.name) || IsLibraryKernel(row.demangled))
      continue;
    const KernelConfig* config = &row.configs.front();
    for (const KernelConfig& c : row.configs) {
      if (c.calls > config->calls) config = &c;
    }
    const Occupancy& occupancy = config->occupancy;
    if (occupancy.limiter == OccupancyLimiter::kNone ||
        occupancy.limiter == OccupancyLimiter::kDoesNotFit || occupancy.fraction >= kLowOccupancy) {
      continue;
    }
    // Where this kernel is launched from most: count its launch sites.
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> places;  // (pid, place) -> launches
    for (const ProcessWork& process : processes) {
      for (const DeviceWork& device : process.devices) {
        for (const GpuWork& w : device.work) {
          if (w.kind != GpuActivityKind::kKernel || input.Str(w.name) != row.name) continue;
          ++places[{process.pid, input.PlaceOf(input.Link(process.pid, w.correlation_id))}];
        }
      }
    }
    std::pair<uint32_t, uint32_t> place{};
    uint64_t most = 0;
    for (const auto& [key, n] : places) {
      if (n > most) std::tie(place, most) = std::tie(key, n);
    }
    const uint32_t threads = config->block[0] * config->block[1] * config->block[2];
    Insight in;
    in.rule = "low_occupancy";
    in.pid = place.first;
    in.stake = StakeKind::kGpuTime;
    in.at_stake_ns = row.time.total_ns;
    in.finding = row.display_name + " takes " + FormatPercent(row.gpu_time_fraction) +
                 " of kernel time (" + FormatDuration(row.time.total_ns) + ") at " +
                 FormatPercent(occupancy.fraction) + " theoretical occupancy, limited by " +
                 std::string(OccupancyLimiterName(occupancy.limiter)) + " (" +
                 std::to_string(occupancy.warps_per_sm) + " warps per SM)";
    in.evidence = {TimeOf("gpu_time", row.time.total_ns),
                   ShareOf("share_of_kernel_time", row.gpu_time_fraction),
                   ShareOf("theoretical_occupancy", occupancy.fraction),
                   CountOf("blocks_per_sm", occupancy.blocks_per_sm),
                   CountOf("warps_per_sm", occupancy.warps_per_sm),
                   CountOf("threads_per_block", threads),
                   CountOf("registers_per_thread", config->registers_per_thread),
                   BytesOf("shared_bytes_per_block",
                           uint64_t{config->static_shared_bytes} + config->dynamic_shared_bytes)};
    in.stack_role = "where it is launched most";
    in.stack = input.PlaceStack(place.second);
    in.suggestion = WhatToTry(*config, occupancy);
    out.push_back(std::move(in));
  }
}

}  // namespace gpuperf::insights
