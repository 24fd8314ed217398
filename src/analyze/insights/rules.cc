#include "analyze/insights/rules.h"

#include <algorithm>
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
    case EvidenceUnit::kWatts:
      return "watts";
    case EvidenceUnit::kJoules:
      return "joules";
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
    case StakeKind::kEnergy:
      return "energy";
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

// Rules across ranks. The report passes RankInfo for every rank; the figures they read
// (per-rank communication, compute and overlap; the straggler and its delays; power) are
// input.model().ranks and .energy, joined with each rank's kernels (rank_rule_support.h).
constexpr RankRule kRankRules[] = {
    {"straggler_rank", "the rank that reaches collectives last, and why", StragglerRank},
    {"rank_load_imbalance", "a rank whose GPU computes longer than the others'", RankLoadImbalance},
    {"comm_not_overlapped", "communication with no compute beside it", CommNotOverlapped},
    {"rank_power", "a rank whose GPU draws notably more or less power", RankPowerOutlier},
};

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
  // Timed findings first, then energy, then memory; each by its own measure.
  auto order = [](const Insight& in) {
    return in.stake == StakeKind::kMemory ? 2 : in.stake == StakeKind::kEnergy ? 1 : 0;
  };
  std::stable_sort(out.begin(), out.end(), [&order](const Insight& a, const Insight& b) {
    if (order(a) != order(b)) return order(a) < order(b);
    if (a.stake == StakeKind::kMemory) return a.at_stake_bytes > b.at_stake_bytes;
    if (a.stake == StakeKind::kEnergy) return a.at_stake_joules > b.at_stake_joules;
    return a.at_stake_ns > b.at_stake_ns;
  });
  return out;
}

}  // namespace insights
}  // namespace gpuperf
