// What one process contributes to the multi-rank analysis, from its own records alone: its
// GPUs' busy times, its communication kernels and NCCL's plugin calls joined to them. Times
// are on the clock the records were read on. Partials are built per trace file (in
// parallel, or from a per-host summary) and only then put together: the clock alignment
// and the matching of collectives across ranks need every rank's (ranks_analysis.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/ranks/collectives.h"

namespace gpuperf {

// One call NCCL's profiler plugin described, and the kernel of this process that ran it.
struct JoinedNcclCall {
  uint64_t comm_hash = 0;
  int32_t nranks = 0;
  uint64_t seq = 0;
  std::string func;       // "AllReduce"
  std::string algorithm;  // "RING/LL", "?" when the plugin did not say
  uint64_t bytes = 0;     // nccl-tests' size
  int64_t kernel = -1;    // index into RankPartial::comm; -1: joined to none
  double share = 1;       // of that kernel's time (the calls of a group share one kernel)
  bool primary = false;   // the first call its kernel ran
};

struct RankPartial {
  uint32_t pid = 0;
  struct Device {
    uint32_t device = 0;
    uint64_t kernels = 0;
    uint64_t compute_ns = 0;  // time at least one non-communication kernel ran
    uint64_t comm_ns = 0;     // time at least one communication kernel ran
    uint64_t overlap_ns = 0;  // time both ran
  };
  std::vector<Device> devices;  // by device id
  // Names of its communication kernels; CommKernel::name indexes this ([0] is "").
  std::vector<std::string> comm_names{std::string()};
  std::vector<CommKernel> comm;       // in the order they were read
  std::vector<JoinedNcclCall> calls;  // empty: the plugin described none of its collectives
  uint64_t kernels_unjoined = 0;      // with calls: its NCCL kernels no call joined

  uint64_t kernels() const {
    uint64_t n = 0;
    for (const Device& d : devices) n += d.kernels;
    return n;
  }
};

// Adds `more` (the same process, read from another file) to `into`: busy times of the
// same GPU add up, kernels and calls are appended.
void MergeRankPartial(RankPartial& into, RankPartial more);

}  // namespace gpuperf
