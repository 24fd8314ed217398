// A synthetic distributed training job, one trace per rank, for the multi-rank and energy
// tests: every step each rank runs forward and backward kernels, then an all-reduce whose
// kernel starts when the rank gets there and ends on every rank at once (when the last
// rank's data arrived), as NCCL's do. Everything is exact and known, so tests can check
// overlap, straggler delay and clock alignment to the nanosecond.
//
// Per step (true time t0 = kJobStartNs + step * step_ns; d = delay_ns and e =
// slow_kernel_ns on the slow rank, else 0; D and E: the slow rank's; c = comm_ns):
//   forward   [t0 + d,              t0 + d + 300 us)
//   backward  [t0 + d + 300 us,     t0 + d + e + 600 us)
//   all-reduce[t0 + d + e + 400 us, t0 + D + E + 400 us + c)   (stream 99)
//   evaluate  right after the all-reduce, extra_kernel_ns long (the slow rank only)
// and before the first step, with startup_idle_ns (s on the slow rank, else 0):
//   init      [kJobStartNs - s - 600 us, kJobStartNs - s - 500 us)
//   setup     [kJobStartNs - 500 us,     kJobStartNs - 400 us)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf::testing {

inline constexpr uint64_t kJobStartNs = 5'000'000'000;
inline constexpr uint64_t kWallEpochNs = 1'700'000'000'000'000'000;

struct RankJobOptions {
  uint32_t ranks = 2;
  uint32_t steps = 10;
  uint64_t step_ns = 2'000'000;
  int32_t slow_rank = -1;
  uint64_t delay_ns = 0;         // the slow rank starts each step this late (the CPU's delay)
  uint64_t slow_kernel_ns = 0;   // and its backward kernel runs this much longer
  uint64_t extra_kernel_ns = 0;  // and it runs one more kernel after each all-reduce
  uint64_t comm_ns = 300'000;    // the all-reduce's own time, after the last rank arrived
  // Start-up before the first step (0: none): each rank runs an init kernel and then a
  // setup kernel launched from another stack (main > setup_model), ending 400 us before
  // the first step; the slow rank's GPU idles this long between the two, the others' not.
  uint64_t startup_idle_ns = 0;
  // Host of each rank (default: all on "node0"). Each host has its own boot; host h's
  // CLOCK_MONOTONIC reads true time + h * host_clock_step_ns, and its wall clock is off
  // by h * wall_error_ns (NTP's error).
  std::vector<std::string> hosts;
  int64_t host_clock_step_ns = 0;
  int64_t wall_error_ns = 0;
  // Power readings every power_interval_ns (0: none) on each rank's GPU: 300 W while a
  // forward or backward kernel runs, 100 W otherwise; the energy counter at the first and
  // last reading.
  uint64_t power_interval_ns = 0;
  int32_t hot_rank = -1;  // this rank's readings are scaled by hot_power_scale
  double hot_power_scale = 1.0;
  bool with_agent = false;  // plus a launcher process without a rank or kernels
  uint32_t first_pid = 1000;
};

// One trace per process (the agent, if any, first).
std::vector<Trace> MakeRankJob(const RankJobOptions& options);

// Writes them as DIR/rank<N>.gpt (agent.gpt), as `gpuperf record` would.
Status WriteRankJob(const RankJobOptions& options, const std::string& dir);

}  // namespace gpuperf::testing
