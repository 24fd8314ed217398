// A synthetic distributed job at any scale, one trace per rank as `gpuperf record` writes
// them, for the multi-rank benchmarks (docs/performance.md, "A thousand ranks"): ranks spread
// over hosts whose CLOCK_MONOTONIC readings are seconds apart (each host its own boot) and
// whose wall clocks disagree by up to a millisecond, as NTP leaves them. Each step every rank
// runs compute kernels, then one all-reduce whose NCCL kernel starts when the rank gets there
// and ends on every rank at once, when the last rank's data arrived. One rank is slower than
// the others. With the NCCL profiler plugin's records, each all-reduce is also described as
// NCCL's plugin does (communicator, sequence number, bytes), its kernel launched on the thread
// that reports it.
#pragma once

#include <cstdint>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf::synth {

struct SyntheticJobOptions {
  uint32_t ranks = 1024;
  uint32_t hosts = 128;  // ranks are spread evenly: rank r on host r / (ranks / hosts)
  uint64_t kernels_per_rank = 200'000;         // communication kernels included
  uint32_t collectives_per_rank = 2000;        // one per step
  int32_t slow_rank = -1;                      // -1: the middle rank
  uint64_t slow_delay_ns = 200'000;            // its extra compute per step
  int64_t host_clock_step_ns = 1'370'000'000;  // host h's clock reads true time + h x this
  int64_t wall_error_ns = 400'000;             // NTP's error: up to this, differing per host
  bool nccl_plugin = true;
  uint32_t first_pid = 100'000;  // rank r's pid is first_pid + r
  uint32_t threads = 0;          // files written at once; 0: one per core
  uint64_t seed = 1;
};

// Writes DIR/rank<NNNN>.gpt for every rank.
Status WriteSyntheticJob(const std::string& dir, const SyntheticJobOptions& options);

}  // namespace gpuperf::synth
