// pageable_copies: copies between the device and pageable (not page-locked) host memory.
// The driver stages them through a pinned buffer, so they run slower than the link
// allows, block the calling thread, and cannot overlap other work even when issued as
// async copies. Grouped by direction and launch stack; named when they took at least
// 1 ms of GPU time in all and 1% of the device's active span.
#include "analyze/insights/rule_support.h"
#include "analyze/insights/rules.h"
#include "base/units.h"

namespace gpuperf::insights {

void PageableCopies(InsightInput& input, std::vector<Insight>& out) {
  for (const ProcessWork& process : input.processes()) {
    const uint32_t pid = process.pid;
    for (const DeviceWork& device : process.devices) {
      const std::vector<CopyGroup> groups = GroupCopies(input, pid, device, [](const GpuWork& w) {
        return w.host_kind == MemoryKind::kPageable;
      });
      const uint64_t span = ActiveSpan(device);
      for (const CopyGroup& g : groups) {
        if (g.gpu_ns < kWorthNamingNs || g.gpu_ns < kWorthNamingShare * span) continue;
        Insight in;
        in.stack = input.PlaceStack(g.place);
        in.rule = "pageable_copies";
        in.pid = pid;
        in.device = device.device;
        in.stake = StakeKind::kGpuTime;
        in.at_stake_ns = g.gpu_ns;
        in.finding = Plural(g.copies, std::string(CopyDirection(g.kind)) + " copy",
                            std::string(CopyDirection(g.kind)) + " copies") +
                     FromWhere(in.stack) + " of " + FormatBytes(g.bytes) +
                     " used pageable host memory: " + FormatDuration(g.gpu_ns) + " on GPU " +
                     std::to_string(device.device) + " at " + FormatBandwidth(g.bytes, g.gpu_ns);
        in.evidence = {
            CountOf("copies", g.copies),
            BytesOf("bytes", g.bytes),
            TimeOf("gpu_time", g.gpu_ns),
            TimeOf("cpu_time_in_calls", g.cpu_ns),
            {"bandwidth", g.gpu_ns ? g.bytes * 1e9 / g.gpu_ns : 0, EvidenceUnit::kBytesPerSecond}};
        in.stack_role = "where the copies were made";
        in.suggestion =
            "Copy from page-locked memory: allocate the host buffers with cudaHostAlloc or "
            "cudaMallocHost (PyTorch: tensor.pin_memory(), DataLoader(pin_memory=True)) and use "
            "cudaMemcpyAsync (.to(device, non_blocking=True)), so copies run at full link speed "
            "and overlap compute.";
        out.push_back(std::move(in));
      }
    }
  }
}

}  // namespace gpuperf::insights
