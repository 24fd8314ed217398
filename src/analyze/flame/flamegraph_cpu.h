// The CPU side of the flame graph (analyze/flame/flamegraph.h): on-CPU samples and off-CPU time
// under the frames of their stacks, ending in a "[cpu]" or "[off-cpu]" leaf, after a
// "[spin: GPU sync]" or "[wait: GPU sync]" frame inside CUDA calls that wait for the GPU,
// and after the reason ("[sleep]", "[uninterruptible]", "[preempted]") for other waits.
#pragma once

#include <vector>

#include "analyze/flame/flamegraph.h"
#include "analyze/flame/flamegraph_names.h"
#include "analyze/join/cpu_time.h"

namespace gpuperf::flame {

// Adds `entries` (cpu_time.h) to `graph` and its summary. `process_labels`: the graph
// roots each process under a "[pid N] command" frame.
void AddCpuTime(const std::vector<CpuTimeEntry>& entries, const FlameGraphOptions& options,
                bool process_labels, GraphResolver& resolver, PathIndex& paths, FlameGraph& graph);

}  // namespace gpuperf::flame
