#include "analyze/insights/rules.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace gpuperf {

const char* EvidenceUnitName(EvidenceUnit unit) {
  switch (unit) {
    case EvidenceUnit::kCount:
      return "count";
    case EvidenceUnit::kNanoseconds:
      return "ns";
    case EvidenceUnit::kBytes:
      return "bytes";
    case EvidenceUnit::kFraction:
      return "fraction";
    case EvidenceUnit::kBytesPerSecond:
      return "bytes_per_second";
  }
  return "count";
}

const char* StakeKindName(StakeKind kind) {
  switch (kind) {
    case StakeKind::kGpuIdle:
      return "gpu_idle";
    case StakeKind::kGpuTime:
      return "gpu_time";
    case StakeKind::kCpuBlocked:
      return "cpu_blocked";
    case StakeKind::kMemory:
      return "memory";
  }
  return "gpu_idle";
}

namespace insights {
namespace {

// The order rules run in; findings are ranked afterwards, so it only orders ties.
constexpr Rule kRules[] = {
    {"gpu_idle_gaps", "GPU idle gaps, with what the CPU did meanwhile", GpuIdleGaps},
    {"sync_stalls", "synchronizations after which the GPU ran dry", SyncStalls},
    {"launch_bound", "phases of kernels shorter than their launch calls", LaunchBound},
    {"pageable_copies", "copies to or from pageable host memory", PageableCopies},
    {"tiny_copies", "many small copies from one place", TinyCopies},
    {"low_occupancy", "hot kernels with low theoretical occupancy", LowOccupancy},
    {"memory_growth", "device memory that keeps growing through the run", MemoryGrowth},
};

// Rules across ranks: "comm_not_overlapped" and "straggler_rank" belong here. The report
// passes RankInfo for every rank; the figures they need (per-rank communication, compute
// and overlap; the straggler and its delays; clock alignment) are input.model().ranks
// (analyze/ranks/ranks_model.h).
constexpr std::array<RankRule, 0> kRankRules = {};

}  // namespace

std::span<const Rule> ProcessRules() {
  return kRules;
}
std::span<const RankRule> RankRules() {
  return kRankRules;
}

std::vector<Insight> RunInsights(InsightInput& input, const std::vector<RankInfo>& ranks) {
  std::vector<Insight> out;
  for (const Rule& rule : kRules) rule.run(input, out);
  if (!ranks.empty()) {
    RankInsightInput rank_input{input, ranks};
    for (const RankRule& rule : kRankRules) rule.run(rank_input, out);
  }
  std::stable_sort(out.begin(), out.end(), [](const Insight& a, const Insight& b) {
    const bool a_memory = a.stake == StakeKind::kMemory;
    const bool b_memory = b.stake == StakeKind::kMemory;
    if (a_memory != b_memory) return b_memory;
    if (a_memory) return a.at_stake_bytes > b.at_stake_bytes;
    return a.at_stake_ns > b.at_stake_ns;
  });
  return out;
}

}  // namespace insights
}  // namespace gpuperf
