// A small hand-made trace that exercises every timeline feature: nested runtime/driver
// calls, a graph launch (one call, three kernels), GPU work without a launch call and a
// call without GPU work (no arrows for either), overlapping kernels on one stream,
// copies, sets, NVTX ranges and marks, memory alloc/free, launch stacks with symbols, and
// a kernel name full of characters JSON must escape.
#pragma once

#include "gpuperf/trace.h"

namespace gpuperf::testing {

inline constexpr uint32_t kTimelinePid = 100;
inline constexpr uint32_t kTimelineTid = 101;
inline constexpr uint32_t kTimelineOtherTid = 102;
// A kernel name with a quote, a backslash, a newline, a tab, a control byte and bytes
// that are not UTF-8.
inline constexpr char kNastyKernelName[] = "evil\"kernel\\\n\t\x01name\xff\xfe";

Trace MakeTimelineTrace();

}  // namespace gpuperf::testing
