// Joins the collectives NCCL's profiler plugin described (NcclCollectiveRecord) to the NCCL
// kernels that ran them, and the arithmetic of their sizes and bandwidths.
//
// NCCL (2.26-2.28) starts and stops a collective's plugin event on the thread that launched
// the collective's kernel, right after the launch (ncclLaunchKernel, then the plan's host
// task). So a collective belongs to the latest NCCL kernel launch on its thread that entered
// the launch API before the event started. A group (ncclGroupStart/End) of collectives NCCL
// planned into one kernel gives several events after that one launch: they all join it, and
// share its time in proportion to their bytes. An event on a thread that launched no NCCL
// kernel before it (CUDA graphs replay plans on CUDA's host-callback thread) stays unjoined,
// and so does one more than kMaxLaunchToEventNs after its thread's last launch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gpuperf {

inline constexpr uint64_t kMaxLaunchToEventNs = 50'000'000;
inline constexpr size_t kNotJoined = SIZE_MAX;

struct NcclCall {
  uint32_t tid = 0;
  uint64_t start_ns = 0;  // the plugin event's start
};

struct NcclLaunch {
  uint32_t tid = 0;
  uint64_t api_ns = 0;  // the launch API call's entry
};

// For each call, the index of the launch it joins, or kNotJoined. Any order of either.
std::vector<size_t> JoinNcclCalls(std::span<const NcclCall> calls,
                                  std::span<const NcclLaunch> launches);

// The size nccl-tests reports for a collective of `count` elements of `type_size` bytes on
// `nranks` ranks: the whole buffer, count x size, except AllGather and ReduceScatter, whose
// count is one rank's part (x nranks).
uint64_t NcclCollectiveBytes(std::string_view func, uint64_t count, uint32_t type_size,
                             int32_t nranks);

// nccl-tests' bus bandwidth factor: AllReduce 2(n-1)/n; AllGather, ReduceScatter and AlltoAll
// (n-1)/n; everything else (Broadcast, Reduce, Send, Recv) 1.
double NcclBusFactor(std::string_view func, int32_t nranks);

}  // namespace gpuperf
