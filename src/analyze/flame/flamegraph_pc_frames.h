// `gpuperf flamegraph --pc-frames`: above each kernel frame, the kernel's source lines and the
// stall reasons its warps were sampled in, each as wide as its share of the kernel's PC
// samples ("[line] hw_bound.cu:51", then "[stall] math_pipe_throttle"). PC samples carry no
// launch (continuous sampling), so every launch stack of a kernel is split alike.
#pragma once

#include "analyze/flame/flamegraph.h"
#include "analyze/hardware/pc_profile.h"

namespace gpuperf {

// Lines beyond this many per kernel are drawn as one "[line] (other lines)" frame.
inline constexpr size_t kPcFrameLines = 24;

// Returns the number of kernel frames extended (kernels without samples keep theirs as is).
size_t AddPcFrames(FlameGraph& graph, const PcProfile& profile, const FlameGraphOptions& options);

}  // namespace gpuperf
