// The ranks analysis's use of NCCL's profiler plugin records (NcclCollectiveRecord), in two
// steps. Per process (NcclCallCollector): each collective joined to the kernel that ran it
// (nccl_join.h), into the process's RankPartial. Over the job (FoldNccl): per communicator
// and operation its count, sizes, time and bandwidths, and the collective instances matched
// across ranks by (communicator, operation, sequence number) rather than by kernel order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyze/ranks/collectives.h"
#include "analyze/ranks/rank_partial.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/ranks/ranks_model.h"
#include "gpuperf/records.h"

namespace gpuperf {

class NcclCallCollector {
 public:
  using NameOf = std::function<std::string_view(StringId)>;
  NcclCallCollector(const RankScan& scan, NameOf name_of)
      : scan_(scan), name_of_(std::move(name_of)) {}

  // The trace has plugin records (the scan saw a communicator): only then are launches kept.
  bool active() const { return !scan_.nccl_comms.empty(); }
  void AddLaunchLinks(std::span<const LaunchLinkRecord> records);
  void AddApiCalls(std::span<const ApiRecord> records);
  void AddCollectives(std::span<const NcclCollectiveRecord> records);

  // Pids with calls, ascending.
  std::vector<uint32_t> Pids() const;
  // Joins `partial.pid`'s calls to its communication kernels (partial.comm): fills
  // partial.calls and partial.kernels_unjoined.
  void Join(RankPartial& partial) const;

 private:
  struct Call {
    uint32_t tid = 0;
    uint64_t start_ns = 0;
    JoinedNcclCall joined;
  };

  const RankScan& scan_;
  NameOf name_of_;
  std::map<uint32_t, std::vector<Call>> calls_;                                      // by pid
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint64_t>> launches_;  // (pid,
  // correlation id) -> (thread, API entry)
};

struct NcclOutcome {
  std::vector<NcclCollectiveRow> rows;
  bool by_sequence = false;                   // `instances` replace the kernel-order match
  std::vector<CollectiveInstance> instances;  // one per (communicator, operation, sequence)
  uint64_t unjoined = 0;                      // calls no kernel was found for
  uint64_t kernels_unjoined = 0;              // NCCL kernels of processes with calls
};

// The job's plugin collectives, from every process's partial (times on one clock). Instance
// names are `name_id(partial, CommKernel::name)`: the caller's ids of kernel names.
NcclOutcome FoldNccl(const RankScan& scan, const std::vector<RankPartial>& partials,
                     const std::function<uint32_t(const RankPartial&, uint32_t)>& name_id);

}  // namespace gpuperf
