#include "analyze/insights/rank_rule_support.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "analyze/insights/rule_support.h"
#include "analyze/ranks/collectives.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

// straggler_rank. Arrival order alone is noise: with N ranks whose launches jitter, each
// one reaches about 1/N of the collectives last (half of them with two ranks), so a
// straggler must be last in three quarters of its collectives. The time the others waited
// for it (its delay behind the next-latest rank, summed) must be 1 ms and 5% of its active
// span: launch queues and host scheduling move arrivals by a few percent of a step on a
// healthy job, and below that no rank is to blame.
constexpr double kMinLastShare = 0.75;
constexpr uint64_t kMinStragglerDelayNs = 1'000'000;
constexpr double kMinStragglerSpanShare = 0.05;
// It caused most of the waiting (the ranks section's share of all ranks' delays), so it is
// one rank's problem, not the job's arrivals spread among all.
constexpr double kMinShareOfWaiting = 0.5;

// rank_load_imbalance. Identical kernels on identical GPUs take the same time to within a
// few percent (boost clocks, temperature); a rank whose GPU computes 10% longer than the
// median of the others does more work or runs slower hardware. 1 ms in all, as the
// per-process rules ask of a finding.
constexpr double kMinImbalanceShare = 0.10;
constexpr uint64_t kMinImbalanceNs = 1'000'000;

void Add(KernelTime& k, const GpuWork& work) {
  k.ns += work.duration();
  ++k.calls;
  if (k.longest == nullptr || work.duration() > k.longest->duration()) k.longest = &work;
}

}  // namespace

std::vector<RankWork> CollectRankWork(RankInsightInput& input) {
  std::vector<RankWork> out;
  const InsightInput& in = input.input;
  for (const RankInfo& info : input.ranks) {
    RankWork r;
    for (const RankRow& row : in.model().ranks.ranks) {
      if (row.pid == info.pid) r.row = &row;
    }
    for (const ProcessWork& p : in.processes()) {
      if (p.pid == info.pid) r.process = &p;
    }
    if (r.row == nullptr || r.process == nullptr || r.row->kernels == 0) continue;
    uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
    // A rank runs few kernel names many times: each name's row is found once.
    std::unordered_map<StringId, KernelTime*> row_of_name;
    for (const DeviceWork& device : r.process->devices) {
      for (const GpuWork& w : device.work) {
        first = std::min(first, w.start);
        last = std::max(last, w.end);
        if (w.kind != GpuActivityKind::kKernel) continue;
        auto [it, fresh] = row_of_name.try_emplace(w.name, nullptr);
        if (fresh) {
          std::string comm = CommKernelName(in.Str(w.name));
          it->second = comm.empty() ? &r.compute[KernelName(in, w.name)] : &r.comm[comm];
        }
        Add(*it->second, w);
      }
    }
    r.span_ns = last > first ? last - first : 0;
    out.push_back(std::move(r));
  }
  return out;
}

uint64_t MedianOfOthers(const std::vector<RankWork>& ranks, size_t skip,
                        uint64_t (*value)(const RankWork&)) {
  std::vector<uint64_t> values;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i != skip) values.push_back(value(ranks[i]));
  }
  return Median(values);
}

std::vector<KernelExcess> ComputeExcess(const std::vector<RankWork>& ranks, size_t rank) {
  std::vector<KernelExcess> out;
  for (const auto& [name, mine] : ranks[rank].compute) {
    std::vector<uint64_t> others;
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (i == rank) continue;
      auto it = ranks[i].compute.find(name);
      others.push_back(it == ranks[i].compute.end() ? 0 : it->second.ns);
    }
    const uint64_t median = Median(others);
    if (mine.ns > median) out.push_back({name, mine.ns - median, mine.longest});
  }
  std::sort(out.begin(), out.end(),
            [](const KernelExcess& a, const KernelExcess& b) { return a.excess_ns > b.excess_ns; });
  return out;
}

std::string ExcessList(const std::vector<KernelExcess>& excess, size_t n) {
  std::string text;
  for (size_t i = 0; i < excess.size() && i < n; ++i) {
    text += (i ? ", " : "") + excess[i].name + " +" + FormatDuration(excess[i].excess_ns);
  }
  return text;
}

std::optional<size_t> NotableStraggler(const RanksModel& model,
                                       const std::vector<RankWork>& ranks) {
  if (!model.straggler || ranks.size() < 2) return std::nullopt;
  const Straggler& s = *model.straggler;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].row->pid != s.pid) continue;
    const bool consistent =
        s.collectives > 0 &&
        static_cast<double>(s.last_arrivals) >= kMinLastShare * static_cast<double>(s.collectives);
    const bool costly = s.delay_total_ns >= kMinStragglerDelayNs &&
                        static_cast<double>(s.delay_total_ns) >=
                            kMinStragglerSpanShare * static_cast<double>(ranks[i].span_ns);
    if (consistent && costly && s.share_of_waiting >= kMinShareOfWaiting) return i;
  }
  return std::nullopt;
}

std::optional<size_t> ImbalancedRank(const std::vector<RankWork>& ranks) {
  if (ranks.size() < 2) return std::nullopt;
  size_t heaviest = 0;
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].row->compute_ns > ranks[heaviest].row->compute_ns) heaviest = i;
  }
  const uint64_t mine = ranks[heaviest].row->compute_ns;
  const uint64_t median =
      MedianOfOthers(ranks, heaviest, [](const RankWork& r) { return r.row->compute_ns; });
  const uint64_t excess = mine > median ? mine - median : 0;
  if (excess < kMinImbalanceNs ||
      static_cast<double>(excess) < kMinImbalanceShare * static_cast<double>(median)) {
    return std::nullopt;
  }
  return heaviest;
}

}  // namespace gpuperf::insights
