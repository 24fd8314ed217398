// The multi-rank analysis behind the report's "ranks" section (and for insight rules):
// feed it the kernels of a trace on the aligned clock, get a RanksModel.
//
//   scan  = ScanRanks(path)                     who is who, clocks, power (cheap)
//   clock = AlignTraceClocks(path, scan)        one clock for several hosts
//   RanksAnalysis a(scan, clock); a.AddKernels(...) for every kernel (ReadTraceAligned)
//   model = a.Finish()
//
// Memory: per GPU, the disjoint busy intervals of compute and of communication (as the
// utilization section keeps), and every communication kernel (one per collective call).
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
  RanksAnalysis(const RankScan& scan, const ClockAlignment& clocks, NameOf name_of);

  void AddKernels(std::span<const KernelRecord> kernels);
  // NCCL's profiler plugin records and the launches their kernels join through (kept only
  // when the trace has plugin records: nccl_analysis.h).
  void AddNcclCollectives(std::span<const NcclCollectiveRecord> records) {
    nccl_.AddCollectives(records);
  }
  void AddLaunchLinks(std::span<const LaunchLinkRecord> records) { nccl_.AddLaunchLinks(records); }
  void AddApiCalls(std::span<const ApiRecord> records) { nccl_.AddApiCalls(records); }
  RanksModel Finish();

 private:
  struct Busy {
    IntervalUnion compute;
    IntervalUnion comm;
    uint64_t kernels = 0;
  };
  // The communication kernel name id of a kernel name (0: not communication).
  uint32_t CommId(StringId name);

  const RankScan& scan_;
  const ClockAlignment& clocks_;
  NameOf name_of_;
  std::vector<int64_t> comm_id_by_name_;  // by StringId: -1 not looked at yet
  std::vector<std::string> comm_names_{std::string()};
  std::map<std::pair<uint32_t, uint32_t>, Busy> busy_;  // (pid, device)
  std::map<uint32_t, std::vector<CommKernel>> comm_;
  NcclAnalysis nccl_;
};

// The clock alignment of FILE or DIR: nothing to read when its processes share one clock;
// else its communication kernels refine the wall-clock anchors.
Result<ClockAlignment> AlignTraceClocks(const std::string& path, const RankScan& scan);
ClockAlignment AlignTraceClocks(const Trace& trace, const RankScan& scan);

// The whole analysis of FILE or DIR, or of a trace in memory.
Result<RanksModel> AnalyzeRanks(const std::string& path);
RanksModel AnalyzeRanks(const Trace& trace);

}  // namespace gpuperf
