// The ranks analysis's use of NCCL's profiler plugin records (NcclCollectiveRecord): each
// collective joined to its kernel (nccl_join.h), per communicator and operation its count,
// sizes, time and bandwidths, and the collective instances matched across ranks by
// (communicator, operation, sequence number) rather than by kernel order.
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
#include "analyze/ranks/rank_scan.h"
#include "analyze/ranks/ranks_model.h"
#include "gpuperf/records.h"

namespace gpuperf {

class NcclAnalysis {
 public:
  using NameOf = std::function<std::string_view(StringId)>;
  NcclAnalysis(const RankScan& scan, NameOf name_of) : scan_(scan), name_of_(std::move(name_of)) {}

  // The trace has plugin records (the scan saw a communicator): only then are launches kept.
  bool active() const { return !scan_.nccl_comms.empty(); }
  void AddLaunchLinks(std::span<const LaunchLinkRecord> records);
  void AddApiCalls(std::span<const ApiRecord> records);
  void AddCollectives(std::span<const NcclCollectiveRecord> records);

  struct Outcome {
    std::vector<NcclCollectiveRow> rows;
    bool by_sequence = false;                   // `instances` replace the kernel-order match
    std::vector<CollectiveInstance> instances;  // one per (communicator, operation, sequence)
    uint64_t unjoined = 0;                      // calls no kernel was found for
    uint64_t kernels_unjoined = 0;              // NCCL kernels of processes with calls
  };
  // `comm`: every process's NCCL kernels, which the calls join.
  Outcome Finish(const std::map<uint32_t, std::vector<CommKernel>>& comm) const;

 private:
  struct Call {
    uint32_t tid = 0;
    uint64_t start_ns = 0;
    uint64_t comm_hash = 0;
    int32_t nranks = 0;
    uint64_t seq = 0;
    std::string func, algorithm;
    uint64_t bytes = 0;
  };
  // One rank's part of one instance: its call and the kernel that ran it.
  struct Part {
    uint32_t pid = 0;
    const CommKernel* kernel = nullptr;  // nullptr: not joined
    double share = 1;                    // of the kernel's time (a group shares one kernel)
    bool primary = false;                // the first call its kernel ran
  };
  using Parts = std::vector<std::pair<const Call*, Part>>;  // one instance's, every rank's
  using Instances = std::map<uint64_t, Parts>;              // by sequence number
  // (communicator, operation) -> its instances.
  using Rows = std::map<std::pair<uint64_t, std::string>, Instances>;

  // Joins one process's calls to its NCCL kernels and files each call's part in `rows`.
  void JoinCalls(uint32_t pid, const std::vector<Call>& calls,
                 const std::vector<CommKernel>& kernels, Rows& rows, Outcome& out) const;
  // One (communicator, operation)'s row; its instances go to out.instances.
  NcclCollectiveRow FoldRow(uint64_t comm_hash, const std::string& func, const Instances& instances,
                            Outcome& out) const;

  const RankScan& scan_;
  NameOf name_of_;
  std::map<uint32_t, std::vector<Call>> calls_;                                      // by pid
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint64_t>> launches_;  // (pid,
  // correlation id) -> (thread, API entry)
};

}  // namespace gpuperf
