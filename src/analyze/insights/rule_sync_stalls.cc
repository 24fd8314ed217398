// sync_stalls: synchronizations that drain the pipeline. A synchronize call returns when
// the GPU has finished what it waited for; if nothing else was queued, the GPU then sits
// idle until the CPU launches again. Each such gap (a device idle at least 10 µs, with a
// synchronize call that was waiting when it began and returned inside it) is charged to
// that call's name and stack.
#include <map>
#include <tuple>

#include "analyze/insights/rule_support.h"
#include "analyze/insights/rules.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr uint64_t kMinStallNs = 10'000;  // shorter: the launch latency any launch pays

struct SyncStallKey {
  StringId api;
  uint32_t place;  // InsightInput::Place of the call
  auto operator<=>(const SyncStallKey&) const = default;
};

struct SyncStallGroup {
  uint64_t stalls = 0, idle_ns = 0;
  std::vector<uint64_t> idle;  // per stall
  uint64_t calls = 0, wait_ns = 0;
};

}  // namespace

void SyncStalls(InsightInput& input, std::vector<Insight>& out) {
  for (const ProcessWork& process : input.processes()) {
    const uint32_t pid = process.pid;
    const std::vector<SyncCall> syncs = SynchronizeCalls(input, pid);
    if (syncs.empty()) continue;
    auto key_of = [&](const SyncCall& s) {
      return SyncStallKey{s.call->name, input.PlaceOf(input.Link(pid, s.call->correlation_id))};
    };
    for (const DeviceWork& device : process.devices) {
      const uint64_t span = ActiveSpan(device);
      std::map<SyncStallKey, SyncStallGroup> groups;
      for (const Gap& gap : InsightInput::Gaps(device, kMinStallNs)) {
        const SyncCall* sync = SyncThatDrained(syncs, gap);
        if (sync == nullptr) continue;
        SyncStallGroup& g = groups[key_of(*sync)];
        ++g.stalls;
        g.idle_ns += gap.duration();
        g.idle.push_back(gap.duration());
      }
      bool any = false;
      for (const auto& [key, g] : groups)
        any |= g.idle_ns >= kWorthNamingNs && g.idle_ns >= kWorthNamingShare * span;
      if (!any) continue;
      for (const SyncCall& s : syncs) {
        auto it = groups.find(key_of(s));
        if (it == groups.end()) continue;
        ++it->second.calls;
        it->second.wait_ns += s.call->end - s.call->start;
      }
      for (auto& [key, g] : groups) {
        if (g.idle_ns < kWorthNamingNs || g.idle_ns < kWorthNamingShare * span) continue;
        const std::string api = input.Str(key.api);
        Insight in;
        in.rule = "sync_stalls";
        in.pid = pid;
        in.device = device.device;
        in.stake = StakeKind::kGpuIdle;
        in.at_stake_ns = g.idle_ns;
        in.stack = input.PlaceStack(key.place);
        in.finding = "After " + Plural(g.stalls, api + " call") + FromWhere(in.stack) +
                     " returned, GPU " + std::to_string(device.device) + " sat idle " +
                     FormatDuration(g.idle_ns) + " in all until the CPU queued more work";
        in.evidence = {CountOf("stalls", g.stalls),
                       TimeOf("idle", g.idle_ns),
                       TimeOf("median_idle_per_stall", Median(g.idle)),
                       CountOf("calls", g.calls),
                       TimeOf("cpu_wait", g.wait_ns),
                       ShareOf("share_of_active_span", span ? double(g.idle_ns) / span : 0)};
        in.stack_role = "the " + api + " call";
        in.suggestion =
            "A synchronization empties the GPU's queue, and the GPU then waits for the CPU to "
            "launch again. Synchronize less often (read a loss or metric every N steps, not "
            "every step; no .item(), .cpu() or printing of GPU tensors inside the loop), or "
            "wait only for the work you need (an event, a non_blocking copy) with the next "
            "work already queued behind it.";
        out.push_back(std::move(in));
      }
    }
  }
}

}  // namespace gpuperf::insights
