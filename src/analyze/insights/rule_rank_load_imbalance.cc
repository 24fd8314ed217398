// rank_load_imbalance: ranks of one job whose GPUs compute for different times. Every
// synchronization of the job waits for the rank with the most GPU work, so the others
// sit idle for the difference (thresholds: ImbalancedRank in rank_rule_support.cc). The
// finding names that rank, how much longer it computed than the median of the others,
// and the kernels that account for it. When that rank is also the straggler that
// straggler_rank reports, that finding names its kernels already and this rule is silent.
#include "analyze/insights/rank_rule_support.h"
#include "analyze/insights/rule_support.h"
#include "base/units.h"

namespace gpuperf::insights {

void RankLoadImbalance(RankInsightInput& input, std::vector<Insight>& out) {
  const std::vector<RankWork> ranks = CollectRankWork(input);
  const std::optional<size_t> index = ImbalancedRank(ranks);
  if (!index || index == NotableStraggler(input.input.model().ranks, ranks)) return;
  const RankWork& r = ranks[*index];
  auto compute = [](const RankWork& w) { return w.row->compute_ns; };
  const uint64_t median = MedianOfOthers(ranks, *index, compute);
  size_t lightest = *index;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (compute(ranks[i]) < compute(ranks[lightest])) lightest = i;
  }
  const uint64_t excess = r.row->compute_ns - median;
  const std::vector<KernelExcess> kernels = ComputeExcess(ranks, *index);

  Insight in;
  in.rule = "rank_load_imbalance";
  in.pid = r.row->pid;
  if (r.row->devices.size() == 1) in.device = r.row->devices[0];
  in.stake = StakeKind::kGpuIdle;
  in.at_stake_ns = excess;
  const double share = median ? static_cast<double>(excess) / static_cast<double>(median) : 1;
  const std::string others =
      ranks.size() == 2 ? Label(ranks[lightest]) + ": " + FormatDuration(median)
                        : "the median of the other " + Plural(ranks.size() - 1, "rank") + " (" +
                              FormatDuration(median) + "; least: " + Label(ranks[lightest]) + ", " +
                              FormatDuration(compute(ranks[lightest])) + ")";
  in.finding = "The GPU of " + Label(r) + " computed " + FormatDuration(r.row->compute_ns) + ", " +
               FormatDuration(excess) + " (" + FormatPercent(share) + ") longer than " + others;
  if (!kernels.empty()) {
    in.finding += "; longer kernels: " + ExcessList(kernels, 3);
    in.stack = input.input.PlaceStack(PlaceOfWork(input.input, in.pid, *kernels[0].longest));
    in.stack_role = "the launch of " + kernels[0].name;
  }
  in.evidence = {TimeOf("compute", r.row->compute_ns),
                 TimeOf("others_median_compute", median),
                 TimeOf("least_compute", compute(ranks[lightest])),
                 TimeOf("excess", excess),
                 ShareOf("excess_share", share),
                 CountOf("ranks", ranks.size())};
  in.suggestion =
      "The other ranks' GPUs sit idle for the difference, at the next synchronization or at "
      "the end of the run. Give each rank the same work: balance the data split (bucket "
      "samples by length, even out the last batch) and the layers of each pipeline stage. If "
      "the work is the same, compare the GPUs: one at lower clocks (temperature, power limit) "
      "runs the same kernels slower (the report's energy section shows each GPU's power).";
  out.push_back(std::move(in));
}

}  // namespace gpuperf::insights
