// NCCL's kernels and the collectives they run. NCCL launches one kernel per collective
// call and rank, named after the operation: "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
// (NCCL 2.19+), "ncclKernel_AllReduce_RING_LL_Sum_float" (older). The same call runs the
// same kernel on every rank, in the same order on each communicator's stream, so the
// n-th such kernel on a rank's k-th NCCL stream is the same collective instance on every
// rank. That is how instances are matched across ranks (no communicator id is recorded;
// docs/multi-rank.md says what this cannot tell apart).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf {

// The kernel name of a communication kernel without its argument list
// ("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), from the recorded (mangled or plain)
// name; empty when the kernel is not NCCL's.
std::string CommKernelName(std::string_view recorded_name);

// The operation of a communication kernel name: "AllReduce", "AllGather",
// "ReduceScatter", "Broadcast", "Reduce", "SendRecv", ...
std::string CollectiveKind(std::string_view comm_kernel_name);

// One communication kernel of one process.
struct CommKernel {
  uint32_t name = 0;  // the caller's id of its CommKernelName
  uint32_t stream = 0;
  uint32_t device = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;  // of its launch (joins NCCL's plugin records)
};

// One collective as every rank ran it.
struct CollectiveInstance {
  uint32_t name = 0;            // as in CommKernel
  uint32_t stream_ordinal = 0;  // which of each rank's NCCL streams (by first use)
  uint32_t ordinal = 0;         // the n-th kernel of this name on that stream
  struct Arrival {
    uint32_t pid = 0;
    uint64_t start_ns = 0;
    uint64_t end_ns = 0;
  };
  std::vector<Arrival> arrivals;  // one per process that ran it, in pid order
};

struct MatchedCollectives {
  std::vector<CollectiveInstance> instances;  // in order of (stream, name, ordinal)
  uint64_t unmatched = 0;  // kernels beyond what other processes ran of the same sequence
};

// Matches the communication kernels of each process (any order) into instances. A
// sequence that some processes ran more often than others (a trace cut short) matches
// as far as all of them got; the rest is counted as unmatched.
MatchedCollectives MatchCollectives(std::map<uint32_t, std::vector<CommKernel>> kernels_by_pid);

}  // namespace gpuperf
