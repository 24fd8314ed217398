// The multi-rank analysis behind the report's "ranks" section (and for insight rules), in
// two steps:
//  1. per process (RanksAnalysis, fed the records of any number of processes): its GPUs'
//     busy times and its communication kernels, a RankPartial each (rank_partial.h);
//  2. over the job, from every process's partial: the hosts' clocks aligned (AlignRanks),
//     collectives matched across ranks, delays and the straggler (FinishRanks).
// The first step needs every kernel; the second only the partials, so a job's trace files
// are read in parallel (job_ranks.h) or reduced on each host first (summaries).
//
// Memory of step 1: per GPU, the disjoint busy intervals of compute and of communication
// (as the utilization section keeps), and every communication kernel.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/ranks/clock_alignment.h"
#include "analyze/ranks/collectives.h"
#include "analyze/ranks/nccl_analysis.h"
#include "analyze/ranks/rank_partial.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/ranks/ranks_model.h"
#include "base/interval_union.h"
#include "gpuperf/records.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

class RanksAnalysis {
 public:
  using NameOf = std::function<std::string_view(StringId)>;
  RanksAnalysis(const RankScan& scan, NameOf name_of);

  void AddKernels(std::span<const KernelRecord> kernels);
  // NCCL's profiler plugin records and the launches their kernels join through (kept only
  // when the trace has plugin records: nccl_analysis.h).
  void AddNcclCollectives(std::span<const NcclCollectiveRecord> records) {
    nccl_.AddCollectives(records);
  }
  void AddLaunchLinks(std::span<const LaunchLinkRecord> records) { nccl_.AddLaunchLinks(records); }
  void AddApiCalls(std::span<const ApiRecord> records) { nccl_.AddApiCalls(records); }

  // One partial per process that ran kernels or had plugin calls, in pid order; the
  // analysis is spent.
  std::vector<RankPartial> TakePartials();

 private:
  struct Busy {
    IntervalUnion compute;
    IntervalUnion comm;
    uint64_t kernels = 0;
  };
  // The communication kernel name id of a kernel name (0: not communication).
  uint32_t CommId(StringId name);

  NameOf name_of_;
  std::vector<int64_t> comm_id_by_name_;  // by StringId: -1 not looked at yet
  std::vector<std::string> comm_names_{std::string()};
  std::map<std::pair<uint32_t, uint32_t>, Busy> busy_;  // (pid, device)
  std::map<uint32_t, std::vector<CommKernel>> comm_;
  NcclCallCollector nccl_;
};

// The hosts' clocks, from the partials of every process with times as recorded: wall-clock
// anchors refined on collectives, matched by (communicator, operation, sequence number)
// where NCCL's plugin described every rank's, else by kernel order.
ClockAlignment AlignRanks(const RankScan& scan, const std::vector<RankPartial>& partials);

// The ranks model from every process's partial. With `shift`, the partials' times are as
// recorded and `clocks` puts them on the job's clock first; without, they are on it already
// (`clocks` is then only reported).
RanksModel FinishRanks(const RankScan& scan, const ClockAlignment& clocks,
                       std::vector<RankPartial> partials, bool shift);

// Partials of one trace in memory, times as recorded.
std::vector<RankPartial> RankPartials(const Trace& trace, const RankScan& scan);

// The record types step 1 reads (ReadTraceChunks): kernels, and with the plugin's records
// (the scan saw a communicator) API calls, launch links and the collectives.
std::span<const uint16_t> RankPartialChunkTypes(const RankScan& scan);

// A RecordSink that feeds a RanksAnalysis (with the strings of its trace).
class RanksSink final : public RecordSink {
 public:
  explicit RanksSink(const RankScan& scan)
      : analysis_(scan, [this](StringId id) {
          return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
        }) {}
  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }
  void OnKernel(std::span<const KernelRecord> records) override { analysis_.AddKernels(records); }
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override {
    analysis_.AddLaunchLinks(records);
  }
  void OnApi(std::span<const ApiRecord> records) override { analysis_.AddApiCalls(records); }
  void OnNcclCollective(std::span<const NcclCollectiveRecord> records) override {
    analysis_.AddNcclCollectives(records);
  }
  std::vector<RankPartial> TakePartials() { return analysis_.TakePartials(); }

 private:
  std::vector<std::string> strings_{std::string()};
  RanksAnalysis analysis_;
};

}  // namespace gpuperf
