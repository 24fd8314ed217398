// What `gpuperf report` says about the ranks of a distributed run (and what insight rules
// read): per rank, communication (NCCL kernels), compute (every other kernel) and their
// overlap; per collective instance, who arrived last and by how much; how the clocks of
// several hosts were aligned. Times in nanoseconds, on the aligned clock.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/ranks/clock_alignment.h"

namespace gpuperf {

struct RankRow {
  uint32_t pid = 0;
  int32_t rank = -1;  // -1: a process that is not a rank (a launcher's own process)
  int32_t local_rank = -1;
  int32_t world_size = -1;
  std::string label;  // "rank 1 (node3, GPU 1)"
  std::string hostname;
  std::string launcher;
  std::vector<uint32_t> devices;  // with kernels
  uint64_t kernels = 0;
  uint64_t comm_kernels = 0;
  uint64_t compute_ns = 0;  // time at least one non-communication kernel ran
  uint64_t comm_ns = 0;     // time at least one communication kernel ran
  uint64_t overlap_ns = 0;  // time both ran (per GPU, summed over the rank's GPUs)
  // Collectives: instances this process took part in, those it reached last (its kernel
  // started after every other rank's), and how much later than the next-latest rank.
  uint64_t collectives = 0;
  uint64_t last_arrivals = 0;
  uint64_t delay_total_ns = 0;
  uint64_t delay_median_ns = 0;  // over its last arrivals
  uint64_t delay_max_ns = 0;
  // The span of its collectives: its arrival at the first it took part in, the end of its
  // last (0 and 0 without any). Before it lies start-up, after it shutdown: the
  // straggler's idle time is counted inside it.
  uint64_t first_collective_ns = 0;
  uint64_t last_collective_end_ns = 0;

  uint64_t exposed_comm_ns() const { return comm_ns - overlap_ns; }
  // HTA's definition: the share of communication time that compute covered.
  double overlap_fraction() const {
    return comm_ns ? static_cast<double>(overlap_ns) / static_cast<double>(comm_ns) : 0;
  }
};

// Per communication kernel name: its instances matched across ranks.
struct CollectiveRow {
  std::string name;  // "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
  std::string kind;  // "AllReduce"
  uint64_t instances = 0;
  uint32_t ranks = 0;                     // most processes in one instance
  uint64_t arrival_spread_median_ns = 0;  // latest start - earliest start
  uint64_t arrival_spread_max_ns = 0;
  uint64_t end_spread_median_ns = 0;  // latest end - earliest end: ~0 when clocks agree
};

// Per communicator and operation: the collectives NCCL's profiler plugin described
// (docs/multi-rank.md). Sizes and bandwidths as nccl-tests defines them; an instance's time
// is its transfer time: from the last rank's kernel start to the last rank's kernel end (the
// waiting for a late rank left out), a group's kernel shared in proportion to bytes.
struct NcclCollectiveRow {
  uint64_t comm_hash = 0;
  std::string comm_name;  // the user's commName; empty when not set
  int32_t nranks = 0;
  std::string func;        // "AllReduce"
  uint32_t ranks = 0;      // processes that recorded some
  uint64_t calls = 0;      // over all processes
  uint64_t instances = 0;  // distinct sequence numbers
  uint64_t complete = 0;   // instances every rank of the communicator recorded
  uint64_t bytes = 0;      // over the instances, nccl-tests' size of each
  uint64_t min_bytes = 0;  // of one instance
  uint64_t max_bytes = 0;
  uint64_t timed = 0;        // instances with a time (joined to kernels)
  uint64_t time_ns = 0;      // their transfer time
  uint64_t timed_bytes = 0;  // their bytes
  double algbw_gbps = 0;     // timed_bytes / time_ns (GB/s, 1e9 bytes)
  double busbw_gbps = 0;     // algbw x NcclBusFactor
  uint64_t unjoined = 0;     // calls no kernel was found for
  std::string algorithms;    // "RING/LL x12, TREE/SIMPLE x3"
};

// The rank that kept the others waiting most, summed over all collectives.
struct Straggler {
  uint32_t pid = 0;
  int32_t rank = -1;
  std::string label;
  uint64_t last_arrivals = 0;
  uint64_t collectives = 0;
  uint64_t delay_median_ns = 0;
  uint64_t delay_total_ns = 0;
  double share_of_waiting = 0;  // its delay_total over all ranks' delay totals
};

struct RanksModel {
  std::vector<RankRow> ranks;  // rank order, then processes that are not ranks
  std::vector<CollectiveRow> collectives;
  uint64_t unmatched_comm_kernels = 0;
  // From NCCL's profiler plugin; empty without its records. With them on every process that
  // ran NCCL kernels, instances are matched by (communicator, operation, sequence number).
  std::vector<NcclCollectiveRow> nccl;
  bool matched_by_sequence = false;
  uint64_t nccl_unjoined = 0;          // plugin collectives no kernel was found for
  uint64_t nccl_kernels_unjoined = 0;  // NCCL kernels no plugin collective joined
  std::optional<Straggler> straggler;
  std::vector<HostClock> clocks;  // empty: one host, one clock
  std::vector<std::string> warnings;

  // Nothing to say: one process without a rank and no communication kernels.
  bool empty() const { return ranks.empty(); }
};

}  // namespace gpuperf
