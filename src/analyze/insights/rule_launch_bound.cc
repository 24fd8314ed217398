// launch_bound: phases in which the CPU could not launch kernels as fast as the GPU ran
// them. A kernel is short when it ran for less time than the API call that launched it;
// a phase is a run of at least 20 short kernels on one device, none more than 1 ms after
// the previous, during which the GPU was busy less than half the time. Kernels of graph
// launches are left out: one launch runs many of them, which is the remedy.
#include <map>

#include "analyze/insights/rule_support.h"
#include "analyze/insights/rules.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr size_t kMinPhaseKernels = 20;
constexpr uint64_t kMaxPauseNs = 1'000'000;  // a longer pause ends a phase
constexpr double kMaxBusy = 0.5;             // a phase keeps the GPU busy less than this

struct Short {
  const GpuWork* kernel;
  uint64_t launch_ns;  // the launching call's duration
  uint32_t place;      // InsightInput::Place of the launch
};

struct Phases {
  uint64_t phases = 0, kernels = 0, span_ns = 0, busy_ns = 0;
  std::vector<uint64_t> kernel_ns, launch_ns;
  std::map<uint32_t, uint64_t> places;  // kernels per launch place
  std::map<StringId, uint64_t> names;   // kernels per name

  void Add(const std::vector<Short>& run) {
    if (run.size() < kMinPhaseKernels) return;
    uint64_t busy = 0, end = 0;
    for (const Short& s : run) {
      busy += s.kernel->duration();
      end = std::max(end, s.kernel->end);
    }
    const uint64_t span = end - run.front().kernel->start;
    if (busy >= kMaxBusy * span) return;  // the GPU kept up
    ++phases;
    kernels += run.size();
    span_ns += span;
    busy_ns += busy;
    for (const Short& s : run) {
      kernel_ns.push_back(s.kernel->duration());
      launch_ns.push_back(s.launch_ns);
      ++places[s.place];
      ++names[s.kernel->name];
    }
  }
};

template <class Key>
std::pair<Key, uint64_t> MostCommon(const std::map<Key, uint64_t>& counts) {
  std::pair<Key, uint64_t> best{};
  for (const auto& [key, n] : counts) {
    if (n > best.second) best = {key, n};
  }
  return best;
}

}  // namespace

void LaunchBound(InsightInput& input, std::vector<Insight>& out) {
  for (const ProcessWork& process : input.processes()) {
    const uint32_t pid = process.pid;
    for (const DeviceWork& device : process.devices) {
      Phases phases;
      std::vector<Short> run;
      uint64_t last_end = 0;
      for (const GpuWork& w : device.work) {
        if (w.kind != GpuActivityKind::kKernel || w.graph_id != 0) continue;
        const report::ApiCall* call = input.ApiCall(pid, w.correlation_id);
        const uint64_t launch_ns = call ? call->end - call->start : 0;
        const bool is_short = call != nullptr && w.duration() < launch_ns;
        if (!is_short || (!run.empty() && w.start > last_end + kMaxPauseNs)) {
          phases.Add(run);
          run.clear();
        }
        last_end = std::max(last_end, w.end);
        if (!is_short) continue;
        run.push_back({&w, launch_ns, input.PlaceOf(input.Link(pid, w.correlation_id))});
      }
      phases.Add(run);

      const uint64_t span = ActiveSpan(device);
      const uint64_t idle = phases.span_ns - phases.busy_ns;
      if (phases.phases == 0 || idle < kWorthNamingNs || idle < kWorthNamingShare * span) continue;
      const auto [place, place_kernels] = MostCommon(phases.places);
      const StringId name = MostCommon(phases.names).first;
      const uint64_t median_kernel = Median(phases.kernel_ns);
      const uint64_t median_launch = Median(phases.launch_ns);
      Insight in;
      in.rule = "launch_bound";
      in.pid = pid;
      in.device = device.device;
      in.stake = StakeKind::kGpuIdle;
      in.at_stake_ns = idle;
      in.finding = "GPU " + std::to_string(device.device) + " was launch-bound for " +
                   FormatDuration(phases.span_ns) + " (" + Plural(phases.phases, "phase") +
                   "): " + Plural(phases.kernels, "kernel") + " ran a median " +
                   FormatDuration(median_kernel) + " each while their launch calls took " +
                   FormatDuration(median_launch) + ", so the GPU sat idle " + FormatDuration(idle) +
                   " between them (most often " + KernelName(input, name) + ")";
      in.evidence = {CountOf("phases", phases.phases),
                     CountOf("kernels", phases.kernels),
                     TimeOf("time_in_phases", phases.span_ns),
                     ShareOf("gpu_busy_in_phases",
                             phases.span_ns ? double(phases.busy_ns) / phases.span_ns : 0),
                     TimeOf("median_kernel", median_kernel),
                     TimeOf("median_launch_call", median_launch),
                     TimeOf("idle", idle),
                     CountOf("kernels_from_this_stack", place_kernels)};
      in.stack_role = "where most of these kernels were launched (" +
                      std::to_string(place_kernels) + " of " + std::to_string(phases.kernels) + ")";
      in.stack = input.PlaceStack(place);
      in.suggestion =
          "Make fewer, larger launches: fuse the small kernels (torch.compile, a fused or custom "
          "kernel), batch the work, or capture the sequence once in a CUDA graph "
          "(torch.cuda.CUDAGraph, cudaGraphLaunch) and replay it with one launch per step.";
      out.push_back(std::move(in));
    }
  }
}

}  // namespace gpuperf::insights
