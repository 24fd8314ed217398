// tiny_copies: many small copies from one place. A copy of a few KiB costs a call, a
// command and often a synchronization, whatever its size, so hundreds of them cost far
// more than one copy of their total. Copies under 64 KiB, grouped by direction and launch
// stack; named from 50 copies and 1 ms spent in the calls that made them (or on the GPU,
// when the trace has no API records).
#include "analyze/insights/rule_support.h"
#include "analyze/insights/rules.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr uint64_t kTinyBytes = 64 * 1024;
constexpr uint64_t kMinCopies = 50;

}  // namespace

void TinyCopies(InsightInput& input, std::vector<Insight>& out) {
  for (const ProcessWork& process : input.processes()) {
    const uint32_t pid = process.pid;
    for (const DeviceWork& device : process.devices) {
      const std::vector<CopyGroup> groups = GroupCopies(input, pid, device, [](const GpuWork& w) {
        return w.bytes < kTinyBytes && w.graph_id == 0;
      });
      for (const CopyGroup& g : groups) {
        const bool cpu = g.calls != 0;
        const uint64_t at_stake = cpu ? g.cpu_ns : g.gpu_ns;
        if (g.copies < kMinCopies || at_stake < kWorthNamingNs) continue;
        const std::string direction(CopyDirection(g.kind));
        Insight in;
        in.stack = input.PlaceStack(g.place);
        in.rule = "tiny_copies";
        in.pid = pid;
        in.device = device.device;
        in.stake = cpu ? StakeKind::kCpuBlocked : StakeKind::kGpuTime;
        in.at_stake_ns = at_stake;
        in.finding = Plural(g.copies, direction + " copy", direction + " copies") +
                     FromWhere(in.stack) + " averaged " + FormatBytes(g.bytes / g.copies) +
                     (cpu ? "; the calls that made them took " + FormatDuration(g.cpu_ns)
                          : "; they took " + FormatDuration(g.gpu_ns) + " of GPU time");
        in.evidence = {CountOf("copies", g.copies), BytesOf("bytes", g.bytes),
                       BytesOf("average_bytes", g.bytes / g.copies), TimeOf("gpu_time", g.gpu_ns),
                       TimeOf("cpu_time_in_calls", g.cpu_ns)};
        in.stack_role = "where the copies were made";
        in.suggestion =
            "Pack the small pieces into one buffer and copy it once, keep the data on the GPU "
            "between steps, or read scalars back less often (each .item() or .cpu() of a small "
            "tensor is a copy and a synchronization).";
        out.push_back(std::move(in));
      }
    }
  }
}

}  // namespace gpuperf::insights
