// rank_power: a rank whose GPU draws notably more or less power than the others' while
// the job is balanced. Ranks that do the same work at the same pace (no straggler_rank or
// rank_load_imbalance finding) should draw the same power; the figure is each rank's mean
// board power over its GPUs' sampled windows (NVML readings, analyze/energy). Identical
// boards running identical work stay within a few percent of each other, so 15% from the
// median of the other ranks points at the hardware or its settings: a different power
// limit, a hot or throttled GPU, a different board. Each GPU needs 10 readings, so that a
// start-up spike read once or twice does not decide. The energy at stake is the
// difference in power over the rank's sampled time.
#include <cmath>

#include "analyze/insights/rank_rule_support.h"
#include "analyze/insights/rule_support.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr double kMinPowerShare = 0.15;
constexpr uint64_t kMinReadings = 10;

struct RankPower {
  const RankWork* rank = nullptr;
  double joules = 0;
  uint64_t window_ns = 0;
  uint64_t readings = 0;
  double rate_hz = 0;
  double watts() const { return window_ns ? joules / (static_cast<double>(window_ns) * 1e-9) : 0; }
};

}  // namespace

void RankPowerOutlier(RankInsightInput& input, std::vector<Insight>& out) {
  const std::vector<RankWork> ranks = CollectRankWork(input);
  const ReportModel& model = input.input.model();
  if (ranks.size() < 2 || model.energy.empty() || NotableStraggler(model.ranks, ranks) ||
      ImbalancedRank(ranks)) {
    return;
  }
  std::vector<RankPower> powers;
  for (const RankWork& r : ranks) {
    RankPower p{&r};
    for (const EnergyDevice& d : model.energy.devices) {
      if (d.pid != r.row->pid) continue;
      if (d.samples < kMinReadings) return;  // too few readings to compare this rank
      p.joules += d.sampled_j;
      p.window_ns += d.last_ns - d.first_ns;
      p.readings += d.samples;
      p.rate_hz = std::max(p.rate_hz, d.rate_hz);
    }
    if (p.readings == 0) return;  // a rank without readings: nothing to compare it with
    powers.push_back(p);
  }
  // The rank furthest from the median of the others.
  size_t outlier = 0;
  double outlier_median = 0, outlier_share = 0;
  for (size_t i = 0; i < powers.size(); ++i) {
    std::vector<uint64_t> others_mw;
    for (size_t j = 0; j < powers.size(); ++j) {
      if (j != i) others_mw.push_back(static_cast<uint64_t>(std::llround(powers[j].watts() * 1e3)));
    }
    const double median = static_cast<double>(Median(others_mw)) / 1e3;
    const double share = median > 0 ? std::abs(powers[i].watts() - median) / median : 0;
    if (share > outlier_share) outlier = i, outlier_median = median, outlier_share = share;
  }
  if (outlier_share < kMinPowerShare) return;
  const RankPower& p = powers[outlier];
  const bool more = p.watts() > outlier_median;

  Insight in;
  in.rule = "rank_power";
  in.pid = p.rank->row->pid;
  if (p.rank->row->devices.size() == 1) in.device = p.rank->row->devices[0];
  in.stake = StakeKind::kEnergy;
  in.at_stake_joules =
      std::abs(p.watts() - outlier_median) * static_cast<double>(p.window_ns) * 1e-9;
  char watts[96];
  std::snprintf(watts, sizeof(watts),
                "%.0f W on average, %s than the median of the other ranks (%.0f W)", p.watts(),
                (FormatPercent(outlier_share) + (more ? " more" : " less")).c_str(),
                outlier_median);
  in.finding = "The GPU of " + Label(*p.rank) + " drew " + watts +
               ", though every rank did the same work at the same pace (an estimate from NVML "
               "power readings)";
  in.evidence = {{"mean_power", p.watts(), EvidenceUnit::kWatts},
                 {"others_median_power", outlier_median, EvidenceUnit::kWatts},
                 ShareOf("difference", outlier_share),
                 CountOf("readings", p.readings),
                 TimeOf("sampled", p.window_ns),
                 {"energy_difference", in.at_stake_joules, EvidenceUnit::kJoules}};
  in.suggestion =
      std::string(more ? "This GPU spends more energy on the same work: "
                       : "This GPU draws less for the same work and may be held back: ") +
      "compare its power limit, clocks, temperature and throttle reasons with the other "
      "GPUs' (nvidia-smi -q -d POWER,CLOCK,TEMPERATURE,PERFORMANCE on its host). A capped "
      "or throttling GPU becomes the job's straggler once it can no longer keep pace.";
  out.push_back(std::move(in));
}

}  // namespace gpuperf::insights
