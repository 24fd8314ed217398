// What the rules across ranks share (rule_straggler_rank.cc, rule_rank_load_imbalance.cc,
// rule_comm_not_overlapped.cc, rule_rank_power.cc): each rank's figures from the ranks
// section beside its GPU work by kernel, and the tests that decide which rule speaks for
// a rank, so that one problem is one finding.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyze/insights/rules.h"
#include "analyze/ranks/ranks_model.h"

namespace gpuperf::insights {

// GPU time of one kernel name on one rank, and the work that names where it was launched.
struct KernelTime {
  uint64_t ns = 0;
  uint64_t calls = 0;
  const GpuWork* longest = nullptr;  // its longest launch (for the stack)
};

struct RankWork {
  const RankRow* row = nullptr;          // the ranks section's figures
  const ProcessWork* process = nullptr;  // nullptr: the report's filters kept none of it
  uint64_t span_ns = 0;                  // its first GPU work to its last, over its devices
  // By the name the report shows (demangled, shortened): compute kernels, and NCCL's.
  std::map<std::string, KernelTime> compute;
  std::map<std::string, KernelTime> comm;
};

// The ranks of the input (rank order) with their work; ranks without kernels left out.
std::vector<RankWork> CollectRankWork(RankInsightInput& input);

// The median of the values of every rank but `skip` (the lower middle of an even count).
uint64_t MedianOfOthers(const std::vector<RankWork>& ranks, size_t skip,
                        uint64_t (*value)(const RankWork&));

// Where one rank's compute kernels took longer than the other ranks' (the median of
// theirs, 0 where a rank never ran the kernel): the largest differences first.
struct KernelExcess {
  std::string name;
  uint64_t excess_ns = 0;
  const GpuWork* longest = nullptr;
};
std::vector<KernelExcess> ComputeExcess(const std::vector<RankWork>& ranks, size_t rank);

// "backward +1.20 ms, forward +300 µs": the first `n` excesses.
std::string ExcessList(const std::vector<KernelExcess>& excess, size_t n);

// The straggler of the ranks section when it is worth a finding (straggler_rank's
// thresholds): its index in `ranks`, or nullopt. The other rules ask so as not to report
// the same rank twice.
std::optional<size_t> NotableStraggler(const RanksModel& model, const std::vector<RankWork>& ranks);

// The rank with the most GPU compute time when it exceeds the others' median by
// rank_load_imbalance's thresholds: its index in `ranks`, or nullopt.
std::optional<size_t> ImbalancedRank(const std::vector<RankWork>& ranks);

// "rank 1 (node3, GPU 1)" as the ranks section labels it.
inline const std::string& Label(const RankWork& r) {
  return r.row->label;
}

}  // namespace gpuperf::insights
