// What `gpuperf report --insights` finds: one record per finding, with the numbers behind
// it, the stack that causes it and what to try. Rules (analyze/insights/rules.h) make
// them; the report's renderers print them ranked by the time at stake.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuperf {

enum class EvidenceUnit : uint8_t {
  kCount,
  kNanoseconds,
  kBytes,
  kFraction,
  kBytesPerSecond,
  kWatts,
  kJoules,
};

// One number behind a finding, e.g. {"idle", 12'300'000, kNanoseconds}.
struct Evidence {
  std::string name;
  double value = 0;
  EvidenceUnit unit = EvidenceUnit::kCount;
};

// What the time at stake measures.
enum class StakeKind : uint8_t {
  kGpuIdle,     // the GPU had nothing to run: time the finding could give back
  kGpuTime,     // GPU time spent in the work the finding concerns (a saving is part of it)
  kCpuBlocked,  // time a CPU thread spent in the calls the finding concerns
  kMemory,      // no time: bytes (memory findings rank after every timed one)
  kEnergy,      // no time: GPU energy in joules (after the timed findings, before memory)
};

struct Insight {
  std::string rule;     // the rule's id, e.g. "gpu_idle_gaps"
  std::string finding;  // one sentence, numbers included
  std::vector<Evidence> evidence;
  std::string stack_role;          // what the stack is, e.g. "the launch that ended the gaps"
  std::vector<std::string> stack;  // innermost first; empty when the trace has none
  std::string suggestion;          // what to try
  uint64_t at_stake_ns = 0;        // the ranking key
  uint64_t at_stake_bytes = 0;     // kMemory findings
  double at_stake_joules = 0;      // kEnergy findings
  StakeKind stake = StakeKind::kGpuIdle;
  uint32_t pid = 0;
  std::optional<uint32_t> device;
};

const char* EvidenceUnitName(EvidenceUnit unit);  // "count", "ns", "bytes", ...
const char* StakeKindName(StakeKind kind);        // "gpu_idle", "gpu_time", ...

}  // namespace gpuperf
