// Folded stacks ("collapsed" format): one line per unique path, frames root first and
// separated by ';', then a space and the weight, e.g.
//   main;train_step;cudaLaunchKernel;[GPU0] at::native::gemm 1234567
// Weights are nanoseconds of GPU time (or activity counts), never rounded, so the lines
// sum to the exact total. Any folded-stack tool (speedscope, pprof converters,
// flamegraph renderers) reads it.
#pragma once

#include <ostream>

#include "analyze/flame/flamegraph.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

// Writes the stacks of `graph` in their (sorted) order; paths of weight 0 are left out.
Status ExportFolded(const FlameGraph& graph, FlameWeight weight, std::ostream& out);

// Builds the flame graph of `trace` and writes it folded.
Status ExportFolded(const Trace& trace, const FlameGraphOptions& options, std::ostream& out);

}  // namespace gpuperf
