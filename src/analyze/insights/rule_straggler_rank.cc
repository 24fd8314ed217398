// straggler_rank: one rank that, as a rule, reaches the job's collectives last and keeps
// the others waiting (thresholds: NotableStraggler in rank_rule_support.cc). The finding
// says how late it was, how long the others waited for it, and where the delay came from:
// its compute kernels, when they ran longer than the other ranks' by at least half the
// delay (the kernels with the largest differences are named, with the launch of the
// first); else the time before its GPU work, that is its CPU launching late: its GPU's
// idle gaps (of at least half the median delay) that ended within the span of its
// collectives, beside the other ranks', and the stack of the launch that ended most of
// them.
#include <map>
#include <set>

#include "analyze/insights/rank_rule_support.h"
#include "analyze/insights/rule_support.h"
#include "analyze/ranks/collectives.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

// Kernels that ran longer by half the delay explain it (a rank whose kernels take 2 ms
// longer and that arrives 3 ms late has a GPU problem first); less is noise beside it.
constexpr double kGpuCauseShare = 0.5;

// The idle gaps of at least `min_ns` on a rank's GPUs that ended after its first
// collective began and before its last ended: their total, and the place whose launches
// ended most of that idle time. Start-up (loading, NCCL's set-up, DDP's checks of the
// model, the first compilations) idles every GPU for seconds before the first collective,
// and a straggler's late start there would outweigh its steps; the steps are what the
// others wait for.
struct IdleBefore {
  uint64_t total_ns = 0;
  uint32_t place = 0;
};
IdleBefore IdleBeforeLaunches(InsightInput& input, const RankWork& rank, uint64_t min_ns) {
  std::map<uint32_t, uint64_t> idle_by_place;
  IdleBefore idle;
  const uint32_t pid = rank.process->pid;
  for (const DeviceWork& device : rank.process->devices) {
    for (const Gap& gap : InsightInput::Gaps(device, min_ns)) {
      if (gap.end <= rank.row->first_collective_ns || gap.end >= rank.row->last_collective_end_ns)
        continue;
      idle_by_place[PlaceOfWork(input, pid, device.work[gap.next])] += gap.duration();
      idle.total_ns += gap.duration();
    }
  }
  uint64_t most = 0;
  for (const auto& [place, ns] : idle_by_place) {
    if (ns > most) most = ns, idle.place = place;
  }
  return idle;
}

std::string Kinds(const RankWork& r) {
  std::set<std::string> kinds;
  for (const auto& [name, time] : r.comm) kinds.insert(CollectiveKind(name));
  std::string text;
  for (const std::string& k : kinds) text += (text.empty() ? "" : ", ") + k;
  return text;
}

}  // namespace

void StragglerRank(RankInsightInput& input, std::vector<Insight>& out) {
  const std::vector<RankWork> ranks = CollectRankWork(input);
  const RanksModel& model = input.input.model().ranks;
  const std::optional<size_t> index = NotableStraggler(model, ranks);
  if (!index) return;
  const Straggler& s = *model.straggler;
  const RankWork& r = ranks[*index];
  const uint64_t others_compute =
      MedianOfOthers(ranks, *index, [](const RankWork& w) { return w.row->compute_ns; });
  const uint64_t compute_excess =
      r.row->compute_ns > others_compute ? r.row->compute_ns - others_compute : 0;
  const std::vector<KernelExcess> excess = ComputeExcess(ranks, *index);
  const bool gpu_cause =
      !excess.empty() &&
      static_cast<double>(compute_excess) >= kGpuCauseShare * static_cast<double>(s.delay_total_ns);

  Insight in;
  in.rule = "straggler_rank";
  in.pid = s.pid;
  if (r.row->devices.size() == 1) in.device = r.row->devices[0];
  in.stake = StakeKind::kGpuIdle;
  in.at_stake_ns = s.delay_total_ns;
  const std::string kinds = Kinds(r);
  in.finding = "R" + Label(r).substr(1) + " reached " + std::to_string(s.last_arrivals) +
               " of its " + Plural(s.collectives, "collective") +
               (kinds.empty() ? "" : " (" + kinds + ")") + " last, a median " +
               FormatDuration(s.delay_median_ns) +
               " after the next-latest rank: the other ranks waited " +
               FormatDuration(s.delay_total_ns) + " in all for it. ";
  in.evidence = {
      CountOf("collectives", s.collectives),           CountOf("last_arrivals", s.last_arrivals),
      TimeOf("median_delay", s.delay_median_ns),       TimeOf("total_delay", s.delay_total_ns),
      ShareOf("share_of_waiting", s.share_of_waiting), TimeOf("compute", r.row->compute_ns),
      TimeOf("others_median_compute", others_compute)};
  if (gpu_cause) {
    in.finding += "Its compute kernels ran " + FormatDuration(compute_excess) +
                  " longer than the other ranks' (median): " + ExcessList(excess, 3);
    in.stack = input.input.PlaceStack(PlaceOfWork(input.input, s.pid, *excess[0].longest));
    in.stack_role = "the launch of " + excess[0].name;
    in.suggestion =
        "This rank's GPU does more work than the others, or the same work slower. Balance "
        "the data across ranks (uneven batch or sequence lengths: bucket by length, drop "
        "the uneven last batch), give pipeline stages equal work, and compare this GPU "
        "with the others (nvidia-smi -q -d CLOCK,PERFORMANCE,TEMPERATURE: lower clocks, a "
        "power cap or throttling make the same kernels slower).";
  } else {
    // Its GPU's idle time before launches between its collectives, beside the other
    // ranks' (gaps of half the delay).
    const uint64_t min_gap = s.delay_median_ns / 2;
    const IdleBefore idle = IdleBeforeLaunches(input.input, r, min_gap);
    std::vector<uint64_t> others_idle;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (i != *index)
        others_idle.push_back(IdleBeforeLaunches(input.input, ranks[i], min_gap).total_ns);
    }
    const uint64_t others_median_idle = Median(others_idle);
    const uint64_t idle_excess =
        idle.total_ns > others_median_idle ? idle.total_ns - others_median_idle : 0;
    in.finding +=
        "Its compute kernels took no longer (" +
        (compute_excess ? "+" + FormatDuration(compute_excess) : std::string("the same")) +
        " GPU time), so the delay came before its GPU work: its CPU launched late";
    in.evidence.push_back(TimeOf("idle_before_launches", idle.total_ns));
    in.evidence.push_back(TimeOf("others_median_idle", others_median_idle));
    in.evidence.push_back(TimeOf("idle_excess", idle_excess));
    if (idle_excess > 0) {
      in.stack = input.input.PlaceStack(idle.place);
      in.finding += ", and its GPU sat idle " + FormatDuration(idle_excess) +
                    " longer than the other ranks' before launches between collectives" +
                    FromWhere(in.stack);
      in.stack_role = "the launch that ended most of its GPU's idle time";
    }
    in.suggestion =
        "The delay is on this rank's CPU before its steps: data loading, Python work, a "
        "host synchronization or work only this rank does (logging, checkpoints, "
        "evaluation on rank 0). Profile its CPU (gpuperf record --cpu), give its data "
        "loader more workers or prefetch, and move rank-specific work out of the step or "
        "onto every rank evenly.";
  }
  out.push_back(std::move(in));
}

}  // namespace gpuperf::insights
