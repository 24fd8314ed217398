#include "analyze/flame/flamegraph_cpu.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "format/enum_names.h"

namespace gpuperf::flame {

void AddCpuTime(const std::vector<CpuTimeEntry>& entries, const FlameGraphOptions& options,
                bool process_labels, GraphResolver& resolver, PathIndex& paths, FlameGraph& graph) {
  FlameSummary& summary = graph.summary;
  std::set<std::pair<uint32_t, uint32_t>> threads;
  std::vector<uint32_t> path;
  for (const CpuTimeEntry& e : entries) {
    if (!options.KeepsThread(e.pid, e.tid)) continue;
    threads.emplace(e.pid, e.tid);
    const bool on_cpu = e.kind == CpuTimeKind::kOnCpu;
    path.clear();
    if (options.split == FlameSplit::kRank) {
      path.push_back(resolver.Intern(resolver.RankLabel(e.pid), FlameFrameKind::kContext));
    } else if (process_labels) {
      path.push_back(resolver.Intern(resolver.ProcessLabel(e.pid), FlameFrameKind::kContext));
    }
    switch (options.split) {
      case FlameSplit::kNone:
      case FlameSplit::kRank:
        break;
      case FlameSplit::kThread:
        path.push_back(
            resolver.Intern(resolver.ThreadLabel(e.pid, e.tid, true), FlameFrameKind::kContext));
        break;
      case FlameSplit::kDevice:
      case FlameSplit::kStream:  // CPU time belongs to no device: beside the GPUs' roots
        path.push_back(resolver.Intern("[CPU]", FlameFrameKind::kContext));
        break;
    }
    if (e.stack == 0) {
      path.push_back(resolver.Intern("[stack unavailable]", FlameFrameKind::kContext));
    } else {
      const std::vector<uint32_t>& frames = resolver.CpuFrames(e.stack, e.tid);
      path.insert(path.end(), frames.begin(), frames.end());
    }
    const bool gpu_wait = e.gpu_wait || (e.stack != 0 && resolver.NamesGpuWait(e.stack, e.tid));
    if (gpu_wait) {
      path.push_back(resolver.Intern(on_cpu ? "[spin: GPU sync]" : "[wait: GPU sync]",
                                     FlameFrameKind::kGpuWait));
    } else if (!on_cpu) {
      path.push_back(
          resolver.Intern("[" + std::string(EnumName(e.reason)) + "]", FlameFrameKind::kContext));
    }
    path.push_back(on_cpu ? resolver.Intern("[cpu]", FlameFrameKind::kOnCpu)
                          : resolver.Intern("[off-cpu]", FlameFrameKind::kOffCpu));
    if (options.inverted) std::reverse(path.begin(), path.end());

    FlameStack& stack = paths.At(path, graph);
    if (on_cpu) {
      stack.cpu_ns += e.ns;
      summary.cpu_ns += e.ns;
      summary.cpu_samples += e.count;
      if (gpu_wait) summary.gpu_spin_ns += e.ns;
    } else {
      stack.offcpu_ns += e.ns;
      summary.offcpu_ns += e.ns;
      summary.offcpu_intervals += e.count;
      if (gpu_wait) summary.gpu_wait_ns += e.ns;
    }
  }
  summary.cpu_threads = static_cast<uint32_t>(threads.size());
}

}  // namespace gpuperf::flame
