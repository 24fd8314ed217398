// The injection library's settings, read once from the environment that
// `gpuperf record` prepares (documented in docs/recording.md).
#pragma once

#include <cstdint>
#include <string>

namespace gpuperf::inject {

// Activity groups that can be switched on and off (seed 001 "selective tracing").
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

struct Config {
  std::string output_dir = ".";
  uint32_t activities = kDefaultActivities;
  bool stacks = true;
  uint32_t max_stack_depth = 64;
  // CUDA 13 keeps one buffer per launching thread, so buffers are kept small.
  uint64_t buffer_bytes = 2ull << 20;       // one CUPTI activity buffer
  uint64_t max_memory_bytes = 64ull << 20;  // CUPTI buffers + queued batches
  uint32_t flush_period_ms = 500;
  uint64_t delay_ms = 0;         // capture range: start recording after this long
  uint64_t duration_ms = 0;      // ... and stop after this long (0 = until exit)
  std::string save_buffers_dir;  // raw CUPTI buffers for replay fixtures (testing)
};

// Parses GPUPERF_* variables. `error` receives a description of the first bad value
// (the setting keeps its default).
Config ReadConfigFromEnvironment(std::string* error);

// Parses "kernel,memcpy,..." / "all" / "default" into ActivityBits; false on an unknown name.
bool ParseActivities(const std::string& text, uint32_t* bits, std::string* bad_name);

}  // namespace gpuperf::inject
