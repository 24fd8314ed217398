// memory_growth: device memory that keeps growing while the GPU works. The device's
// active span (first to last GPU work) is cut into 8 windows; memory grows when the bytes
// in use rise in at least 3 of the last 4 windows, by at least 16 MiB and 5% of what was
// in use at the midpoint. Allocation during start-up, however large, rises in the first
// windows only and is not growth. The stack is where the largest share of the memory
// allocated after the midpoint and never freed was allocated.
#include <map>
#include <unordered_map>

#include "analyze/insights/rule_support.h"
#include "analyze/insights/rules.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr int kWindows = 8;
constexpr int kMinRisingWindows = 3;  // of the last kWindows / 2
constexpr uint64_t kMinGrowthBytes = 16ull << 20;
constexpr double kMinGrowthShare = 0.05;

struct Window {
  uint64_t begin = 0, end = 0;
};

}  // namespace

void MemoryGrowth(InsightInput& input, std::vector<Insight>& out) {
  for (const ProcessWork& process : input.processes()) {
    const uint32_t pid = process.pid;
    for (const DeviceWork& device : process.devices) {
      if (device.work.empty()) continue;
      const uint64_t begin = device.work.front().start;
      const uint64_t span = ActiveSpan(device);
      if (span < kWindows) continue;
      // Bytes in use at the end of each window, replaying this device's allocations.
      std::unordered_map<uint64_t, const MemoryRecord*> live;  // by address
      std::vector<uint64_t> in_use(kWindows + 1, 0);           // [0]: at `begin`
      uint64_t bytes = 0;
      size_t next = 0;
      const auto& memory = process.memory;
      for (int w = 0; w <= kWindows; ++w) {
        const uint64_t until = begin + span * w / kWindows;
        for (; next < memory.size() && memory[next].timestamp_ns <= until; ++next) {
          const MemoryRecord& m = memory[next];
          if (m.op == MemoryOp::kAllocation && m.device_id == device.device) {
            live[m.address] = &m;
            bytes += m.bytes;
          } else if (m.op == MemoryOp::kRelease) {
            auto it = live.find(m.address);
            if (it == live.end()) continue;
            bytes -= it->second->bytes;
            live.erase(it);
          }
        }
        in_use[w] = bytes;
      }
      const int half = kWindows / 2;
      int rising = 0;
      for (int w = half + 1; w <= kWindows; ++w) rising += in_use[w] > in_use[w - 1];
      const uint64_t midpoint = in_use[half];
      const uint64_t end = in_use[kWindows];
      const uint64_t growth = end > midpoint ? end - midpoint : 0;
      if (rising < kMinRisingWindows || growth < kMinGrowthBytes ||
          growth < kMinGrowthShare * midpoint) {
        continue;
      }
      // What was allocated after the midpoint and is still in use, by allocating stack.
      const uint64_t midpoint_ns = begin + span / 2;
      std::map<uint32_t, uint64_t> by_place;  // bytes per InsightInput::Place
      uint64_t allocations = 0;
      for (const auto& [address, m] : live) {
        if (m->timestamp_ns <= midpoint_ns) continue;
        ++allocations;
        by_place[input.PlaceOf(input.Link(pid, m->correlation_id))] += m->bytes;
      }
      uint32_t place = 0;
      uint64_t place_bytes = 0;
      for (const auto& [key, b] : by_place) {
        if (b > place_bytes) std::tie(place, place_bytes) = std::tie(key, b);
      }
      const uint64_t second_half_ns = span - span / 2;
      Insight in;
      in.rule = "memory_growth";
      in.pid = pid;
      in.device = device.device;
      in.stake = StakeKind::kMemory;
      in.at_stake_bytes = growth;
      in.finding = "Device memory in use on GPU " + std::to_string(device.device) + " grew by " +
                   FormatBytes(growth) + " in the second half of the run (" +
                   FormatBytes(midpoint) + " to " + FormatBytes(end) + "), rising in " +
                   std::to_string(rising) + " of its last " + std::to_string(half) + " eighths";
      in.evidence = {BytesOf("in_use_at_midpoint", midpoint),
                     BytesOf("in_use_at_end", end),
                     BytesOf("growth", growth),
                     {"growth_rate", second_half_ns ? growth * 1e9 / second_half_ns : 0,
                      EvidenceUnit::kBytesPerSecond},
                     CountOf("allocations_kept_since_midpoint", allocations),
                     BytesOf("bytes_from_this_stack", place_bytes)};
      in.stack_role = "where most of the memory kept since the midpoint was allocated";
      in.stack = input.PlaceStack(place);
      in.suggestion =
          "Something allocates every step and keeps it: look for tensors kept across "
          "iterations (a list of losses kept as tensors instead of .item(), caches that only "
          "grow, retain_graph=True), and free or reuse buffers; if this is the first steps of "
          "a run warming a caching allocator up, record longer to tell.";
      out.push_back(std::move(in));
    }
  }
}

}  // namespace gpuperf::insights
