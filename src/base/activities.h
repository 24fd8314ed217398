// The activity groups `gpuperf record --activities` selects (seed 001 "selective
// tracing"): one list shared by the CLI, which validates it, and the injection library,
// which enables the matching CUPTI kinds.
#pragma once

#include <cstdint>
#include <string>

namespace gpuperf {

enum ActivityBit : uint32_t {
  kActKernel = 1u << 0,
  kActMemcpy = 1u << 1,
  kActMemset = 1u << 2,
  kActRuntime = 1u << 3,
  kActDriver = 1u << 4,
  kActSync = 1u << 5,
  kActMemory = 1u << 6,
  kActNvtx = 1u << 7,
  kActOverhead = 1u << 8,
  kActGraph = 1u << 9,  // GRAPH_TRACE: one record per graph launch instead of per node
};

// Everything that costs little; GRAPH_TRACE is off because it replaces per-node kernels.
inline constexpr uint32_t kDefaultActivities = kActKernel | kActMemcpy | kActMemset | kActRuntime |
                                               kActDriver | kActSync | kActMemory | kActNvtx |
                                               kActOverhead;

// Parses "kernel,memcpy,..." / "all" / "default" into ActivityBits; false on an unknown
// name, which is stored in `bad_name`.
bool ParseActivities(const std::string& text, uint32_t* bits, std::string* bad_name);

}  // namespace gpuperf
